/* Kernel-case expansion: one eligible upstream test -> its emulator cases, by the precedence of
 * cases.h. Called by `spyre-ci specs list` and by the selector once a test id is resolved.
 * Until the resolver's header lands, the per-op dtype formula and precision lookup live here
 * (SPYRE.md section 5): effective dtypes = (global supported ∩ the op's dtypes) + include −
 * exclude; precision = kernel > edits.dtypes.include > the op's dtype > the global dtype >
 * SPEC_PRECISION_DEFAULT; force_xfail (global dtype or op) turns mandatory_success into xfail. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/ops.h"
#include "testspecs/cases.h"

/* The schema's dtype names, in enum spec_dtype order (kept here so that this file needs no
 * loader code). */
static const char *const dtype_names[SPEC_DTYPE_COUNT] = {
	"none",   "float16",   "float32",   "float64",    "bfloat16", "int8",
	"int16",  "int32",     "int64",     "uint8",      "uint16",   "uint32",
	"uint64", "complex32", "complex64", "complex128", "bool",
};

static const char *dtype_name(enum spec_dtype d)
{
	return d >= 0 && d < SPEC_DTYPE_COUNT ? dtype_names[d] : "none";
}

void testspecs_cases_init(struct spec_case_list *list)
{
	memset(list, 0, sizeof(*list));
}

void testspecs_cases_finish(struct spec_case_list *list)
{
	for (size_t i = 0; list && i < list->n; i++)
		free(list->v[i].test_id);
	if (list)
		free(list->v);
	if (list)
		memset(list, 0, sizeof(*list));
}

const char *testspecs_rule_name(enum spec_case_rule rule)
{
	switch (rule) {
	case SPEC_RULE_KERNELS:
		return "kernels";
	case SPEC_RULE_SAMPLE_INPUTS:
		return "sample_inputs_func";
	case SPEC_RULE_OPINFO:
		return "opinfo";
	case SPEC_RULE_BODY_OPS:
		return "body_ops";
	default:
		return "not_mappable";
	}
}

/* ---- the specs' view of an op ---- */

static const struct spec_op *supported_op(const struct spec_set *set, const char *name)
{
	const struct spec_global *g = &set->global;
	for (size_t i = 0; i < g->n_supported_ops; i++)
		if (strcmp(g->supported_ops[i].name.s, name) == 0)
			return &g->supported_ops[i];
	/* A scanned call ("torch.add") is supported when a listed op maps to the same kernel. */
	const struct spec_op_map *m = testspecs_opmap_find(name);
	for (size_t i = 0; m && i < g->n_supported_ops; i++) {
		const struct spec_op_map *o = testspecs_opmap_find(g->supported_ops[i].name.s);
		if (o && strcmp(o->emu, m->emu) == 0)
			return &g->supported_ops[i];
	}
	return NULL;
}

static const struct spec_dtype_item *find_dtype(const struct spec_dtype_items *items,
						enum spec_dtype t)
{
	for (size_t i = 0; items && i < items->n; i++)
		if (items->v[i].dtype == t)
			return &items->v[i];
	return NULL;
}

size_t testspecs_effective_dtypes(const struct spec_set *set, const struct spec_test *entry,
				  const char *op, enum spec_dtype *out, size_t max)
{
	const struct spec_op *so = op ? supported_op(set, op) : NULL;
	size_t n = 0;
	for (int t = SPEC_DTYPE_NONE + 1; t < SPEC_DTYPE_COUNT && n < max; t++) {
		enum spec_dtype d = (enum spec_dtype)t;
		bool in = !set->global.has_supported_dtypes ||
			  find_dtype(&set->global.supported_dtypes, d);
		if (in && so && so->dtypes_present)
			in = find_dtype(&so->dtypes, d) != NULL;
		if (entry && find_dtype(&entry->edits.dtypes_include, d))
			in = true;
		if (entry && find_dtype(&entry->edits.dtypes_exclude, d))
			in = false;
		if (in)
			out[n++] = d;
	}
	return n;
}

static void norm_name(char *dst, size_t size, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1 < size; i++)
		dst[i] = src[i] == '.' ? '_' : src[i];
	dst[i] = '\0';
}

bool testspecs_op_excluded(const struct spec_test *entry, const char *op)
{
	if (!entry)
		return false;
	char o[SPEC_CASE_OP_MAX * 2], x[SPEC_CASE_OP_MAX * 2];
	norm_name(o, sizeof(o), op);
	for (size_t i = 0; i < entry->edits.ops_exclude.n; i++) {
		norm_name(x, sizeof(x), entry->edits.ops_exclude.v[i].name.s);
		size_t k = strlen(x);
		if (strcmp(o, x) == 0 || (strncmp(o, x, k) == 0 && o[k] == '_'))
			return true;
	}
	return false;
}

static void precision(const struct spec_set *set, const struct spec_test *entry, const char *op,
		      enum spec_dtype d, double *atol, double *rtol)
{
	const struct spec_op *so = op ? supported_op(set, op) : NULL;
	const struct spec_dtype_item *cands[3] = {
		entry ? find_dtype(&entry->edits.dtypes_include, d) : NULL,
		so ? find_dtype(&so->dtypes, d) : NULL,
		find_dtype(&set->global.supported_dtypes, d),
	};
	*atol = *rtol = SPEC_PRECISION_DEFAULT;
	bool a = false, r = false;
	for (int i = 0; i < 3; i++) {
		const struct spec_precision *p = cands[i] ? &cands[i]->precision : NULL;
		if (!p || !p->present)
			continue;
		if (!a && p->has_atol)
			*atol = p->atol, a = true;
		if (!r && p->has_rtol)
			*rtol = p->rtol, r = true;
	}
}

static enum spec_mode case_mode(const struct spec_set *set, const char *op, enum spec_dtype d,
				enum spec_mode mode)
{
	if (mode != SPEC_MODE_MANDATORY_SUCCESS)
		return mode;
	const struct spec_op *so = op ? supported_op(set, op) : NULL;
	const struct spec_dtype_item *g = find_dtype(&set->global.supported_dtypes, d);
	if ((so && so->force_xfail == SPEC_TRI_TRUE) || (g && g->force_xfail == SPEC_TRI_TRUE))
		return SPEC_MODE_XFAIL;
	return mode;
}

/* ---- one case ---- */

struct shapes {
	int nin;
	int64_t v[SPEC_CASE_INPUTS_MAX][SPEC_CASE_DIMS_MAX];
	int ndims[SPEC_CASE_INPUTS_MAX];
	bool too_big; /* more inputs or dims than a case holds */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t case_hash(const char *test_id, const char *op, const struct shapes *s,
			  enum spec_dtype d)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv(h, test_id, strlen(test_id) + 1);
	h = fnv(h, op, strlen(op) + 1);
	for (int i = 0; i < s->nin; i++) {
		h = fnv(h, &s->ndims[i], sizeof(s->ndims[i]));
		h = fnv(h, s->v[i], sizeof(int64_t) * (size_t)s->ndims[i]);
	}
	const char *dn = dtype_name(d);
	return fnv(h, dn, strlen(dn) + 1);
}

struct ctx {
	struct spec_case_list *list;
	const struct spec_set *set;
	const struct spec_case_test *t;
	struct spec_expand_result *res;
};

static const char *unsupported_why(const struct spec_op_map *m, enum spec_dtype d,
				   const struct shapes *s, char *buf, size_t size)
{
	if (!m)
		return "no emulator op for this name (see the op table in docs/specs.md)";
	const struct spyre_op_info *info = spyre_op_find(m->emu);
	if (!info)
		return "the emulator lacks this op";
	enum spyre_dtype ed;
	if (spyre_dtype_parse(&ed, dtype_name(d)) != 0 || !spyre_op_supports(info, ed)) {
		snprintf(buf, size, "the emulator's %s has no %s", info->name, dtype_name(d));
		return buf;
	}
	if (s->too_big)
		return "more inputs or dimensions than a kernel case holds";
	if (s->nin != info->nin) {
		snprintf(buf, size, "%s takes %d tensor inputs, the spec gives %d", info->name,
			 info->nin, s->nin);
		return buf;
	}
	return NULL;
}

static int add_case(struct ctx *c, const char *op, const struct shapes *s, enum spec_dtype d,
		    enum spec_case_rule rule, const struct spec_kernel *k, struct spec_loc loc)
{
	struct spec_case_list *l = c->list;
	if (l->n >= SPEC_CASES_MAX)
		return err_set(ERR_LIMIT, "more than %d kernel cases", SPEC_CASES_MAX);
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct spec_case *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return err_set(ERR_NOMEM, "kernel cases: out of memory");
		l->v = v;
		l->cap = cap;
	}
	struct spec_case *cs = &l->v[l->n];
	memset(cs, 0, sizeof(*cs));
	cs->test_id = strdup(c->t->test_id);
	if (!cs->test_id)
		return err_set(ERR_NOMEM, "kernel cases: out of memory");
	snprintf(cs->op, sizeof(cs->op), "%s", op);
	const struct spec_op_map *m = testspecs_opmap_find(op);
	const char *why = unsupported_why(m, d, s, cs->why, sizeof(cs->why));
	if (why && why != cs->why)
		snprintf(cs->why, sizeof(cs->why), "%s", why);
	cs->unsupported = why != NULL;
	cs->emu_op = m && spyre_op_find(m->emu) ? spyre_op_find(m->emu)->name : NULL;
	cs->nin = s->nin;
	memcpy(cs->shapes, s->v, sizeof(cs->shapes));
	memcpy(cs->ndims, s->ndims, sizeof(cs->ndims));
	cs->dtype = d;
	const struct spec_test *e = c->t->entry;
	precision(c->set, e, op, d, &cs->atol, &cs->rtol);
	cs->mode = case_mode(c->set, op, d, c->t->mode);
	if (k) {
		if (k->has_atol)
			cs->atol = k->atol;
		if (k->has_rtol)
			cs->rtol = k->rtol;
		if (k->mode != SPEC_MODE_UNSET)
			cs->mode = k->mode;
	}
	uint64_t h = case_hash(c->t->test_id, op, s, d);
	snprintf(cs->id, sizeof(cs->id), "%016" PRIx64, h);
	uint64_t g = c->set->global.has_seed ? c->set->global.seed : 0;
	cs->seed = k && k->has_seed ? k->seed : mix(h ^ mix(g));
	cs->rule = rule;
	cs->kernel = k;
	cs->loc = loc;
	l->n++;
	c->res->n_cases++;
	if (cs->unsupported) {
		l->n_unsupported++;
		c->res->n_unsupported++;
	}
	return 0;
}

/* Crosses shapes with dtypes: `only` when set (a kernel's or a tensor's dtype), else the op's
 * effective dtypes. */
static int add_crossed(struct ctx *c, const char *op, const struct shapes *s, enum spec_dtype only,
		       enum spec_case_rule rule, const struct spec_kernel *k, struct spec_loc loc)
{
	if (only != SPEC_DTYPE_NONE)
		return add_case(c, op, s, only, rule, k, loc);
	enum spec_dtype d[SPEC_DTYPE_COUNT];
	size_t n = testspecs_effective_dtypes(c->set, c->t->entry, op, d, SPEC_DTYPE_COUNT);
	for (size_t i = 0; i < n; i++) {
		int rc = add_case(c, op, s, d[i], rule, k, loc);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- shapes ---- */

static void put_shape(struct shapes *s, const int64_t *v, size_t n)
{
	if (s->nin >= SPEC_CASE_INPUTS_MAX || n > SPEC_CASE_DIMS_MAX) {
		s->too_big = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		s->v[s->nin][i] = v[i];
	s->ndims[s->nin++] = (int)n;
}

/* "67x256,256": one sample of spyre_ops[].samples; 0 or ERR_INVAL. */
static int parse_sample(struct shapes *s, const char *text, size_t len)
{
	memset(s, 0, sizeof(*s));
	int64_t dims[SPEC_CASE_DIMS_MAX + 1];
	size_t nd = 0;
	int64_t cur = -1;
	for (size_t i = 0; i <= len; i++) {
		char ch = i < len ? text[i] : ',';
		if (ch >= '0' && ch <= '9') {
			cur = (cur < 0 ? 0 : cur) * 10 + (ch - '0');
			if (cur > ((int64_t)1 << 40))
				return err_set(ERR_INVAL, "sample '%.*s': dimension too large",
					       (int)len, text);
			continue;
		}
		if ((ch != 'x' && ch != ',') || cur < 0)
			return err_set(ERR_INVAL, "sample '%.*s': bad shape", (int)len, text);
		if (nd > SPEC_CASE_DIMS_MAX)
			return err_set(ERR_INVAL, "sample '%.*s': too many dims", (int)len, text);
		dims[nd++] = cur;
		cur = -1;
		if (ch == ',') {
			put_shape(s, dims, nd);
			nd = 0;
		}
	}
	return 0;
}

static int add_default_samples(struct ctx *c, const char *op, enum spec_case_rule rule,
			       struct spec_loc loc)
{
	const struct spec_op_map *m = testspecs_opmap_find(op);
	const struct spyre_op_info *info = m ? spyre_op_find(m->emu) : NULL;
	if (!info) { /* unsupported, but listed: one case with no shapes */
		struct shapes none = { 0 };
		return add_crossed(c, op, &none, SPEC_DTYPE_NONE, rule, NULL, loc);
	}
	const char *p = info->samples;
	for (int guard = 0; *p && guard < 64; guard++) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct shapes s;
		int rc = parse_sample(&s, p, len);
		if (!rc)
			rc = add_crossed(c, op, &s, SPEC_DTYPE_NONE, rule, NULL, loc);
		if (rc)
			return rc;
		p = end ? end + 1 : p + len;
	}
	return 0;
}

/* ---- the rules ---- */

static int rule_kernels(struct ctx *c)
{
	const struct spec_test *e = c->t->entry;
	for (size_t i = 0; i < e->n_kernels; i++) {
		const struct spec_kernel *k = &e->kernels[i];
		struct shapes s = { 0 };
		for (size_t j = 0; j < k->n_inputs; j++) {
			const struct spec_kernel_input *in = &k->inputs[j];
			const struct spec_ints *sh = in->is_tensor ? &in->tensor.shape : &in->shape;
			put_shape(&s, sh->v, sh->n);
		}
		int rc = add_crossed(c, k->op.s, &s, k->dtype, SPEC_RULE_KERNELS, k, k->loc);
		if (rc)
			return rc;
	}
	return 0;
}

static int rule_sample_inputs(struct ctx *c, size_t *used)
{
	const struct spec_test *e = c->t->entry;
	for (size_t i = 0; i < e->edits.n_ops_include; i++) {
		const struct spec_op_include *inc = &e->edits.ops_include[i];
		if (!inc->sample_inputs.present)
			continue;
		struct shapes s = { 0 };
		enum spec_dtype only = SPEC_DTYPE_NONE;
		for (size_t j = 0; j < inc->sample_inputs.n_args; j++) {
			const struct spec_arg *a = &inc->sample_inputs.args[j];
			if (a->kind == SPEC_ARG_TENSOR_LIST)
				s.too_big = true; /* a list is not one kernel input */
			if (a->kind != SPEC_ARG_TENSOR)
				continue;
			put_shape(&s, a->tensor.shape.v, a->tensor.shape.n);
			if (only == SPEC_DTYPE_NONE)
				only = a->tensor.dtype;
		}
		(*used)++;
		int rc =
		    add_crossed(c, inc->name.s, &s, only, SPEC_RULE_SAMPLE_INPUTS, NULL, inc->loc);
		if (rc)
			return rc;
	}
	return 0;
}

static bool family_admits(enum spec_op_family want, const char *op)
{
	if (want == SPEC_FAMILY_ANY)
		return true;
	const struct spec_op_map *m = testspecs_opmap_find(op);
	/* An op the table lacks is admitted so that it shows as unsupported, not vanishes. */
	return !m || m->family == want;
}

static int rule_opinfo(struct ctx *c, size_t *used)
{
	const struct spec_global *g = &c->set->global;
	for (size_t i = 0; i < g->n_supported_ops; i++) {
		const char *op = g->supported_ops[i].name.s;
		if (!family_admits(c->t->family, op) || testspecs_op_excluded(c->t->entry, op))
			continue;
		(*used)++;
		int rc = add_default_samples(c, op, SPEC_RULE_OPINFO, g->supported_ops[i].loc);
		if (rc)
			return rc;
	}
	return 0;
}

static int rule_body_ops(struct ctx *c, size_t *used)
{
	for (size_t i = 0; i < c->t->n_body_ops; i++) {
		const char *op = c->t->body_ops[i];
		const struct spec_op *so = supported_op(c->set, op);
		if (!so || testspecs_op_excluded(c->t->entry, so->name.s))
			continue;
		(*used)++;
		int rc = add_default_samples(c, so->name.s, SPEC_RULE_BODY_OPS, so->loc);
		if (rc)
			return rc;
	}
	return 0;
}

int testspecs_cases_expand(struct spec_case_list *list, const struct spec_set *set,
			   const struct spec_case_test *test, struct spec_expand_result *res)
{
	memset(res, 0, sizeof(*res));
	struct ctx c = { list, set, test, res };
	if (test->mode == SPEC_MODE_SKIP || test->mode == SPEC_MODE_UNSET) {
		res->why = "the test is skipped";
		return 0;
	}
	const struct spec_test *e = test->entry;
	size_t used = 0;
	int rc;
	if (e && e->n_kernels) {
		res->rule = SPEC_RULE_KERNELS;
		return rule_kernels(&c);
	}
	if (e && (rc = rule_sample_inputs(&c, &used)) != 0)
		return rc;
	if (used) {
		res->rule = SPEC_RULE_SAMPLE_INPUTS;
		return 0;
	}
	if (test->opinfo) {
		if ((rc = rule_opinfo(&c, &used)) != 0)
			return rc;
		if (used) {
			res->rule = SPEC_RULE_OPINFO;
			return 0;
		}
	}
	if ((rc = rule_body_ops(&c, &used)) != 0)
		return rc;
	if (used) {
		res->rule = SPEC_RULE_BODY_OPS;
		return 0;
	}
	res->why = test->opinfo ? "@ops test, but no supported op of its family remains"
		   : test->n_body_ops
		       ? "none of the ops its body calls is a supported op"
		       : "no kernels:, no sample_inputs_func, not @ops, no known calls";
	return 0;
}
