/* Kernel-case expansion: one eligible upstream test -> its emulator cases, by the precedence of
 * cases.h. Called by `spyre-ci specs list` and by the selector once a test id is known.
 * Everything the specs decide (eligibility, the test's mode, each op's effective dtypes, the
 * mode per dtype after force_xfail, precision) comes from the resolver (resolve.h), asked once
 * for the test and once per op expanded; this file adds only what the emulator knows (its ops,
 * their dtypes and default samples) and the case ids and seeds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases_int.h"
#include "common/err.h"
#include "scope.h"
#include "spyre-emu/graph.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"
#include "testspecs/cases.h"
#include "testspecs/resolve.h"

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

/* ---- one case ---- */

static const char *unsupported_why(const struct spec_op_map *m, enum spec_dtype d,
				   const struct shapes *s, char *buf, size_t size)
{
	if (!m)
		return "no emulator op for this name (see the op table in docs/specs.md)";
	const struct spyre_op_info *info = spyre_op_find(m->emu);
	if (!info)
		return "the emulator lacks this op";
	enum spyre_dtype ed;
	if (d == SPEC_DTYPE_NONE)
		return NULL; /* the specs' reason comes first (add_case) */
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

/* Graphs run in float16 or float32 (spyre_graph_run). */
static const char *graph_why(enum spec_dtype d)
{
	return d == SPEC_DTYPE_FLOAT16 || d == SPEC_DTYPE_FLOAT32
		   ? NULL
		   : "an op graph runs in float16 or float32";
}

/* The resolver's row for `op` in this test. A scanned call ("torch.add") or an emulator name
 * ("div") is asked about under the name supported_ops gives it, when one maps to the same
 * kernel. */
static int op_view(struct ctx *c, const char *op, struct op_view *v)
{
	const struct spec_op *so = supported_op(c->set, op);
	v->spec_name = so ? so->name.s : op;
	v->row = NULL;
	const char *ops[1] = { v->spec_name };
	struct spec_resolve_opts o = { .tier = c->t->tier,
				       .ops = ops,
				       .n_ops = 1,
				       .device = c->t->device,
				       .is_test = c->t->is_test,
				       .is_test_ctx = c->t->is_test_ctx };
	int rc = testspecs_resolver_resolve(c->r, c->resolve_id, &o, c->scratch);
	if (rc)
		return rc;
	for (size_t i = 0; i < c->scratch->n_ops; i++)
		if (strcmp(c->scratch->ops[i].name, v->spec_name) == 0 || c->scratch->n_ops == 1)
			v->row = &c->scratch->ops[i];
	return 0;
}

struct case_spec {
	enum spec_dtype dtype;
	enum spec_mode mode;
	struct spec_precision precision;
	const char *spec_why; /* the specs refuse this case (it is listed, unsupported) */
};

static int grow(struct spec_case_list *l)
{
	if (l->n >= SPEC_CASES_MAX)
		return err_set(ERR_LIMIT, "more than %d kernel cases", SPEC_CASES_MAX);
	if (l->n < l->cap)
		return 0;
	size_t cap = l->cap ? l->cap * 2 : 64;
	struct spec_case *v = realloc(l->v, cap * sizeof(*v));
	if (!v)
		return err_set(ERR_NOMEM, "kernel cases: out of memory");
	l->v = v;
	l->cap = cap;
	return 0;
}

static spec_dtype_mask dbit(enum spec_dtype d)
{
	return (spec_dtype_mask)1 << d;
}

void testspecs_pytorch_tolerance(enum spec_dtype d, double *atol, double *rtol)
{
	switch (d) {
	case SPEC_DTYPE_FLOAT16:
	case SPEC_DTYPE_COMPLEX32:
		*atol = 1e-5, *rtol = 1e-3;
		return;
	case SPEC_DTYPE_BFLOAT16:
		*atol = 1e-5, *rtol = 1.6e-2;
		return;
	case SPEC_DTYPE_FLOAT32:
	case SPEC_DTYPE_COMPLEX64:
		*atol = 1e-5, *rtol = 1.3e-6;
		return;
	case SPEC_DTYPE_FLOAT64:
	case SPEC_DTYPE_COMPLEX128:
		*atol = 1e-7, *rtol = 1e-7;
		return;
	default:
		*atol = 0, *rtol = 0;
		return;
	}
}

/* A case's tolerance: the specs' precision when they give one; else the largest of what the test
 * and its op's entry give the dtype (toleranceOverride, precisionOverride), assert_close's
 * default for the dtype and the framework's default (SPEC_PRECISION_DEFAULT). */
static void tolerance(const struct ctx *c, enum spec_dtype d, const struct spec_precision *p,
		      double *atol, double *rtol)
{
	double pa, pr;
	testspecs_pytorch_tolerance(d, &pa, &pr);
	double ta = c->t->atol[d], tr = c->t->rtol[d]; /* the test's own, and its op entry's */
	if (c->oi && c->oi->atol[d] > ta)
		ta = c->oi->atol[d];
	if (c->oi && c->oi->rtol[d] > tr)
		tr = c->oi->rtol[d];
	double a = SPEC_PRECISION_DEFAULT > pa ? SPEC_PRECISION_DEFAULT : pa;
	double r = SPEC_PRECISION_DEFAULT > pr ? SPEC_PRECISION_DEFAULT : pr;
	*atol = p->present && p->has_atol ? p->atol : ta > a ? ta : a;
	*rtol = p->present && p->has_rtol ? p->rtol : tr > r ? tr : r;
}

static int add_case(struct ctx *c, const char *op, const struct shapes *s,
		    const struct case_spec *cs_in, enum spec_case_rule rule,
		    const struct spec_kernel *k, struct spec_loc loc)
{
	struct spec_case_list *l = c->list;
	int rc = grow(l);
	if (rc)
		return rc;
	struct spec_case *cs = &l->v[l->n];
	memset(cs, 0, sizeof(*cs));
	cs->test_id = strdup(c->case_id);
	if (!cs->test_id)
		return err_set(ERR_NOMEM, "kernel cases: out of memory");
	enum spec_dtype d = cs_in->dtype;
	snprintf(cs->op, sizeof(cs->op), "%s", op);
	const struct spec_op_map *m0 = testspecs_opmap_find(op), *m = m0;
	struct spec_op_map form;
	if (m0) { /* mul with one tensor is mul_scalar, ... */
		form = *m0;
		form.emu = testspecs_opmap_form(m0->emu, s->nin);
		m = &form;
	}
	bool graph = k && k->g;
	const char *why = graph ? graph_why(d) : unsupported_why(m, d, s, cs->why, sizeof(cs->why));
	if (!graph && (!why || (cs_in->spec_why && m)))
		why = cs_in->spec_why ? cs_in->spec_why : why;
	if (!why && c->shape_why)
		why = c->shape_why;
	if (why && why != cs->why)
		snprintf(cs->why, sizeof(cs->why), "%s", why);
	cs->unsupported = why != NULL;
	cs->emu_op = m && spyre_op_find(m->emu) ? spyre_op_find(m->emu)->name : NULL;
	cs->nin = s->nin;
	memcpy(cs->shapes, s->v, sizeof(cs->shapes));
	memcpy(cs->ndims, s->ndims, sizeof(cs->ndims));
	cs->dtype = d;
	tolerance(c, d, &cs_in->precision, &cs->atol, &cs->rtol);
	cs->mode = cs_in->mode;
	if (c->oi && (c->oi->skip & dbit(d))) { /* upstream runs it nowhere: that reason first */
		snprintf(cs->why, sizeof(cs->why), "the test skips this op at %s: %s",
			 d ? dtype_name(d) : "any dtype", c->oi->skip_why ? c->oi->skip_why : "");
		cs->unsupported = true;
	}
	if (c->oi && (c->oi->xfail & dbit(d)) && cs->mode == SPEC_MODE_MANDATORY_SUCCESS)
		cs->mode = SPEC_MODE_XFAIL; /* upstream expects it to fail, on every device */
	cs->kind = graph ? SPEC_CASE_GRAPH : SPEC_CASE_OP;
	if (graph && d != SPEC_DTYPE_NONE && !why) /* the emulator's own tolerance for the dtype */
		spyre_run_default_tol(d == SPEC_DTYPE_FLOAT32 ? SPYRE_DTYPE_FLOAT32
							      : SPYRE_DTYPE_FLOAT16,
				      "", &cs->atol, &cs->rtol);
	if (k) {
		if (k->has_atol)
			cs->atol = k->atol;
		if (k->has_rtol)
			cs->rtol = k->rtol;
		if (k->mode != SPEC_MODE_UNSET)
			cs->mode = k->mode;
	}
	uint64_t h = testspecs__case_hash(c->case_id, op, s, dtype_name(d));
	if (rule == SPEC_RULE_SAMPLE_INPUTS && c->sample)
		h = testspecs__call_hash(h, c->sample);
	if (graph) /* the graph as written (not where this host found it) and how it runs */
		h = testspecs__fnv(testspecs__fnv(testspecs__fnv(h, k->graph.s, k->graph.len + 1),
						  &k->cores, sizeof(k->cores)),
				   &k->relayout, sizeof(k->relayout));
	snprintf(cs->id, sizeof(cs->id), "%016" PRIx64, h);
	uint64_t g = c->set->global.has_seed ? c->set->global.seed : 0;
	cs->seed =
	    k && k->has_seed ? k->seed : testspecs__mix(h ^ testspecs__mix(g)) & CASE_SEED_MASK;
	cs->rule = rule;
	cs->source = rule == SPEC_RULE_OPINFO ? c->source : SPEC_SOURCE_NONE;
	c->res->n_by_source[cs->source]++;
	cs->kernel = k;
	cs->sample = rule == SPEC_RULE_SAMPLE_INPUTS ? c->sample : NULL;
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
 * effective dtypes as the resolver gives them (only the id's dtype for a variant id). Whatever
 * the specs refuse is still listed, unsupported, with the reason. */
int testspecs__add_crossed(struct ctx *c, const char *op, const struct op_view *vp,
			   const struct shapes *s, enum spec_dtype only, enum spec_case_rule rule,
			   const struct spec_kernel *k, struct spec_loc loc)
{
	const struct op_view v = *vp;
	int rc;
	struct case_spec cs = { .dtype = only, .mode = c->base };
	if (!v.row) {
		cs.spec_why = "the specs do not let this op run for this test (supported_ops, "
			      "edits.ops)";
		return add_case(c, op, s, &cs, rule, k, loc);
	}
	spec_dtype_mask want = v.row->dtypes;
	if (c->variant_dtype != SPEC_DTYPE_NONE)
		want &= dbit(c->variant_dtype);
	if (only != SPEC_DTYPE_NONE && !(want & dbit(only))) {
		cs.spec_why = "not an effective dtype of this op for this test";
		return add_case(c, op, s, &cs, rule, k, loc);
	}
	if (only != SPEC_DTYPE_NONE)
		want = dbit(only);
	if (c->has_opinfo_dtypes && want && !(want & c->opinfo_dtypes)) {
		cs.spec_why = "none of its effective dtypes is one of the OpInfo's dtypes";
		return add_case(c, op, s, &cs, rule, k, loc);
	}
	if (c->has_opinfo_dtypes)
		want &= c->opinfo_dtypes;
	if (!want) {
		cs.spec_why = "no effective dtype of this op is left for this test";
		return add_case(c, op, s, &cs, rule, k, loc);
	}
	for (int d = SPEC_DTYPE_NONE + 1; d < SPEC_DTYPE_COUNT; d++) {
		if (!(want & dbit((enum spec_dtype)d)))
			continue;
		cs.dtype = (enum spec_dtype)d;
		cs.mode = v.row->mode[d] ? v.row->mode[d] : c->base;
		cs.precision = v.row->precision[d];
		rc = add_case(c, op, s, &cs, rule, k, loc);
		if (rc)
			return rc;
	}
	return 0;
}

/* add_crossed() after asking the resolver about `op` (the view lives in c->scratch until the
 * next question). */
static int add_asked(struct ctx *c, const char *op, const struct shapes *s, enum spec_dtype only,
		     enum spec_case_rule rule, const struct spec_kernel *k, struct spec_loc loc)
{
	struct op_view v;
	int rc = op_view(c, op, &v);
	return rc ? rc : testspecs__add_crossed(c, op, &v, s, only, rule, k, loc);
}

/* ---- shapes ---- */

void testspecs__put_shape(struct shapes *s, const int64_t *v, size_t n)
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
			testspecs__put_shape(s, dims, nd);
			nd = 0;
		}
	}
	return 0;
}

/* The emulator's default samples of `op`, crossed with what the resolver's view allows. */
int testspecs__add_default_samples(struct ctx *c, const char *op, const struct op_view *v,
				   enum spec_case_rule rule, struct spec_loc loc)
{
	const struct spec_op_map *m = testspecs_opmap_find(op);
	const struct spyre_op_info *info = m ? spyre_op_find(m->emu) : NULL;
	if (!info) { /* unsupported, but listed: one case with no shapes per dtype */
		struct shapes none = { 0 };
		return testspecs__add_crossed(c, op, v, &none, SPEC_DTYPE_NONE, rule, NULL, loc);
	}
	const char *p = info->samples;
	for (int guard = 0; *p && guard < 64; guard++) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct shapes s;
		int rc = parse_sample(&s, p, len);
		if (!rc)
			rc = testspecs__add_crossed(c, op, v, &s, SPEC_DTYPE_NONE, rule, NULL, loc);
		if (rc)
			return rc;
		p = end ? end + 1 : p + len;
	}
	return 0;
}

/* ---- the rules ---- */

static int rule_kernels(struct ctx *c)
{
	const struct spec_test *e = c->entry;
	for (size_t i = 0; i < e->n_kernels; i++) {
		const struct spec_kernel *k = &e->kernels[i];
		struct shapes s = { 0 };
		if (k->graph.s && !k->g) /* the loader refused it: a set with errors */
			return err_set(ERR_INVAL, "graph '%s' did not load", k->graph.s);
		if (k->g) { /* the test's mode; the kernel's dtype, else float16 */
			for (int j = 0; j < k->g->ninputs && j < SPEC_CASE_INPUTS_MAX; j++)
				testspecs__put_shape(&s, k->g->input_shape[j],
						     (size_t)k->g->input_ndim[j]);
			struct case_spec cs = { .dtype = k->dtype ? k->dtype : SPEC_DTYPE_FLOAT16,
						.mode = c->base };
			int rc = add_case(c, "graph", &s, &cs, SPEC_RULE_KERNELS, k, k->loc);
			if (rc)
				return rc;
			continue;
		}
		for (size_t j = 0; j < k->n_inputs; j++) {
			const struct spec_kernel_input *in = &k->inputs[j];
			const struct spec_ints *sh = in->is_tensor ? &in->tensor.shape : &in->shape;
			testspecs__put_shape(&s, sh->v, sh->n);
		}
		int rc = add_asked(c, k->op.s, &s, k->dtype, SPEC_RULE_KERNELS, k, k->loc);
		if (rc)
			return rc;
	}
	return 0;
}

/* The dtype a call runs in: its first floating tensor's (embedding's weight, not its int64
 * indices), else its first tensor's (a list's first), else a `dtype` kwarg (creation ops:
 * zeros), else none (crossed with the effective dtypes). */
static enum spec_dtype call_dtype(const struct spec_sample_inputs *si)
{
	enum spec_dtype first = SPEC_DTYPE_NONE;
	for (size_t j = 0; j < si->n_args; j++) {
		const struct spec_arg *a = &si->args[j];
		const struct spec_tensor *t = a->kind == SPEC_ARG_TENSOR ? &a->tensor
					      : a->kind == SPEC_ARG_TENSOR_LIST && a->n_list
						  ? &a->list[0]
						  : NULL;
		if (!t || t->dtype == SPEC_DTYPE_NONE)
			continue;
		if (first == SPEC_DTYPE_NONE)
			first = t->dtype;
		if (t->dtype >= SPEC_DTYPE_FLOAT16 && t->dtype <= SPEC_DTYPE_BFLOAT16)
			return t->dtype;
	}
	for (size_t j = 0; first == SPEC_DTYPE_NONE && j < si->n_kwargs; j++) {
		const struct spec_kwarg *kw = &si->kwargs[j];
		enum spec_dtype d;
		if (kw->key.s && strcmp(kw->key.s, "dtype") == 0 && kw->arg.text.s &&
		    testspecs_dtype_parse(kw->arg.text.s, true, &d) == 0)
			first = d;
	}
	return first;
}

static int rule_sample_inputs(struct ctx *c, size_t *used)
{
	const struct spec_test *e = c->entry;
	for (size_t i = 0; i < e->edits.n_ops_include; i++) {
		const struct spec_op_include *inc = &e->edits.ops_include[i];
		if (!inc->sample_inputs.present)
			continue;
		struct shapes s = { 0 };
		enum spec_dtype only = call_dtype(&inc->sample_inputs);
		for (size_t j = 0; j < inc->sample_inputs.n_args; j++) {
			const struct spec_arg *a = &inc->sample_inputs.args[j];
			if (a->kind == SPEC_ARG_TENSOR)
				testspecs__put_shape(&s, a->tensor.shape.v, a->tensor.shape.n);
			for (size_t q = 0; a->kind == SPEC_ARG_TENSOR_LIST && q < a->n_list; q++)
				testspecs__put_shape(&s, a->list[q].shape.v, a->list[q].shape.n);
		}
		(*used)++;
		c->sample = &inc->sample_inputs;
		int rc =
		    add_asked(c, inc->name.s, &s, only, SPEC_RULE_SAMPLE_INPUTS, NULL, inc->loc);
		c->sample = NULL;
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

/* Whether `op` ("div.no_rounding_mode") is the op a variant id names ("div_no_rounding_mode"):
 * upstream spells a '.' of an OpInfo name as '_' in test names. */
static bool same_variant_op(const char *op, const char *variant)
{
	for (; *op && *variant; op++, variant++)
		if ((*op == '.' ? '_' : *op) != *variant)
			return false;
	return *op == *variant;
}

/* Whether the @ops variant of `op` of a generic test is listed `skip` by an entry of its own
 * (`TestFoo::test_x_sum` under `TestFoo::test_x`), or, for a test eligible only through its
 * variants' entries, is not eligible itself: that variant does not run, so it has no cases.
 * Asked as the runtime names it (`TestFooPRIVATEUSE1::test_x_sum_spyre`). */
static int variant_skipped(struct ctx *c, const char *op, bool *skipped)
{
	*skipped = false;
	const char *id = c->resolve_id, *m = strrchr(id, ':');
	if (!c->t->opinfo || c->variant_op || !c->variant_scratch || !m || m == id || m[-1] != ':')
		return 0;
	char vid[SPEC_TESTID_MAX], opn[SPEC_TESTID_MAX];
	snprintf(opn, sizeof opn, "%s", op);
	for (char *p = opn; *p; p++)
		*p = *p == '.' ? '_' : *p;
	int n = snprintf(vid, sizeof vid, "%.*sPRIVATEUSE1::%s_%s_%s", (int)(m - 1 - id), id, m + 1,
			 opn, c->t->device ? c->t->device : SPEC_DEVICE_DEFAULT);
	if (n < 0 || (size_t)n >= sizeof vid)
		return 0;
	struct spec_resolve_opts o = { .tier = c->t->tier,
				       .device = c->t->device,
				       .is_test = c->t->is_test,
				       .is_test_ctx = c->t->is_test_ctx,
				       .exact = true };
	int rc = testspecs_resolver_resolve(c->r, vid, &o, c->variant_scratch);
	if (rc == ERR_INVAL)
		return 0;
	const struct spec_decision *d = c->variant_scratch;
	*skipped = rc == 0 && ((d->entry && d->entry != c->entry && d->mode == SPEC_MODE_SKIP) ||
			       (c->by_variants && !d->eligible));
	return rc < 0 ? rc : 0;
}

/* Ops the resolver gives no row (excluded for this test) are left out: the test has no such
 * variant; so are ops whose variant is listed skip. */
static int expand_ops(struct ctx *c, const char *op, enum spec_case_rule rule, struct spec_loc loc,
		      size_t *used)
{
	if (c->variant_op && !same_variant_op(op, c->variant_op))
		return 0;
	bool skipped;
	int rc = variant_skipped(c, op, &skipped);
	if (rc || skipped)
		return rc;
	struct op_view v;
	rc = op_view(c, op, &v);
	if (rc || !v.row)
		return rc;
	(*used)++;
	return rule == SPEC_RULE_OPINFO ? testspecs__add_opinfo_cases(c, op, &v, loc)
					: testspecs__add_default_samples(c, op, &v, rule, loc);
}

/* Whether this expansion already gave cases of op. */
static bool expanded(const struct ctx *c, const char *op)
{
	for (size_t i = c->list->n - c->res->n_cases; i < c->list->n; i++)
		if (strcmp(c->list->v[i].op, op) == 0)
			return true;
	return false;
}

/* The ops an @ops test runs: the supported ops of its family, the ops its entry includes
 * (edits.ops.include names ops the config adds to the test's list, whatever the global says),
 * and, when the config lists no supported ops, the op of the variant that decided. */
static int rule_opinfo(struct ctx *c, size_t *used)
{
	const struct spec_global *g = &c->set->global;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < g->n_supported_ops; i++) {
		const char *op = g->supported_ops[i].name.s;
		int runs = c->t->runs_op ? c->t->runs_op(c->t->opinfo_ctx, op) : -1;
		if (runs > 0 || (runs < 0 && family_admits(c->t->family, op)))
			rc = expand_ops(c, op, SPEC_RULE_OPINFO, g->supported_ops[i].loc, used);
	}
	const struct spec_test *e = c->entry;
	for (size_t i = 0; rc == 0 && e && i < e->edits.n_ops_include; i++) {
		const struct spec_op_include *in = &e->edits.ops_include[i];
		if (!in->sample_inputs.present && !supported_op(c->set, in->name.s))
			rc = expand_ops(c, in->name.s, SPEC_RULE_OPINFO, in->loc, used);
	}
	const char *vop = c->variant_op ? c->variant_op : c->by_variants;
	/* specs that bound no ops: every op of the test's list runs (each case says whether the
	 * emulator has it) */
	for (size_t i = 0; rc == 0 && !g->has_supported_ops && !vop && i < c->t->n_list_ops; i++)
		if (!expanded(c, c->t->list_ops[i])) /* not once more after edits.ops.include */
			rc = expand_ops(c, c->t->list_ops[i], SPEC_RULE_OPINFO,
					e ? e->loc : (struct spec_loc){ 0 }, used);
	if (rc == 0 && !*used && !g->has_supported_ops && vop)
		rc =
		    expand_ops(c, vop, SPEC_RULE_OPINFO, e ? e->loc : (struct spec_loc){ 0 }, used);
	return rc;
}

/* Tensor factories and helpers a test body calls to build inputs, not ops under test. */
static bool factory(const char *name)
{
	static const char *const names[] = { "arange",  "empty",     "full",     "manual_seed",
					     "ones",    "rand",      "randint",  "randn",
					     "tensor",  "zeros",     "device",   "Size",
					     "no_grad", "is_tensor", "randperm", "linspace" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* Why a test with body calls got no case: the calls that name upstream ops, each said
 * unsupported by the specs or lacking in the emulator. */
static const char *body_why(struct ctx *c)
{
	char *b = c->res->reason;
	size_t n = (size_t)snprintf(b, sizeof c->res->reason, "no supported op among its calls:");
	size_t listed = 0;
	for (size_t i = 0; i < c->t->n_body_ops && n + 1 < sizeof c->res->reason; i++) {
		const char *call = c->t->body_ops[i];
		const char *dot = strrchr(call, '.');
		const char *name = dot ? dot + 1 : call;
		if (strncmp(call, "torch.", 6) != 0 || !name[0] || name[0] == '_' || factory(name))
			continue;
		const struct spec_op_map *m = testspecs_opmap_find(call);
		int k = snprintf(b + n, sizeof c->res->reason - n, "%s %s (%s)", listed ? "," : "",
				 name, m ? "not a supported op" : "the emulator lacks it");
		n += k > 0 ? (size_t)k : 0;
		listed++;
	}
	return listed ? b : "none of the ops its body calls is a supported op";
}

static int rule_body_ops(struct ctx *c, size_t *used)
{
	for (size_t i = 0; i < c->t->n_body_ops; i++) {
		const struct spec_op *so = supported_op(c->set, c->t->body_ops[i]);
		int rc = so ? expand_ops(c, so->name.s, SPEC_RULE_BODY_OPS, so->loc, used) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int expand_rules(struct ctx *c)
{
	struct spec_expand_result *res = c->res;
	const struct spec_test *e = c->entry;
	size_t used = 0;
	int rc;
	if (e && e->n_kernels) {
		res->rule = SPEC_RULE_KERNELS;
		return rule_kernels(c);
	}
	if (e && (rc = rule_sample_inputs(c, &used)) != 0)
		return rc;
	if (used) {
		res->rule = SPEC_RULE_SAMPLE_INPUTS;
		return 0;
	}
	if (c->t->opinfo && c->t->no_case_why) { /* whatever the ops: no case (cases.h) */
		res->why = c->t->no_case_why;
		return 0;
	}
	if (c->t->opinfo) {
		if ((rc = rule_opinfo(c, &used)) != 0)
			return rc;
		if (used) {
			res->rule = SPEC_RULE_OPINFO;
			return 0;
		}
	}
	if ((rc = rule_body_ops(c, &used)) != 0)
		return rc;
	if (used) {
		res->rule = SPEC_RULE_BODY_OPS;
		return 0;
	}
	res->why = c->t->opinfo       ? "@ops test, but no supported op of its family remains"
		   : c->t->n_body_ops ? body_why(c)
		   : c->t->source_unread
		       ? "no kernels:, no sample_inputs_func; the test's source was not read (give "
			 "--upstream DIR for its @ops, OpInfo samples and calls)"
		       : "no kernels:, no sample_inputs_func, not @ops, no known calls";
	return 0;
}

/* Asks the resolver about the test as a whole, then expands what it allows. */
static int expand_with(struct ctx *c)
{
	struct spec_expand_result *res = c->res;
	memset(res, 0, sizeof(*res));
	struct spec_decision *d = malloc(3 * sizeof(*d));
	if (!d)
		return err_set(ERR_NOMEM, "kernel cases: out of memory");
	c->scratch = &d[1];
	c->variant_scratch = &d[2];
	struct spec_resolve_opts o = { .tier = c->t->tier,
				       .device = c->t->device,
				       .is_test = c->t->is_test,
				       .is_test_ctx = c->t->is_test_ctx };
	int rc = testspecs_resolver_resolve(c->r, c->resolve_id, &o, &d[0]);
	if (rc)
		goto out;
	res->eligible = d[0].eligible;
	res->mode = d[0].mode;
	res->entry = d[0].entry;
	res->file = d[0].file;
	c->entry = d[0].entry;
	c->base = d[0].mode;
	c->set = testspecs__set_view(&c->view, c->set,
				     testspecs__global_for(c->set, d[0].entry, d[0].file));
	if (!d[0].eligible) {
		snprintf(res->reason, sizeof res->reason, "%s%.200s",
			 d[0].mode == SPEC_MODE_SKIP ? "the test is skipped: " : "", d[0].reason);
		res->why = res->reason;
		goto out;
	}
	if (d[0].id.device_generic) {
		enum spec_dtype vd;
		c->variant_op = d[0].op_buf[0] ? d[0].op_buf : NULL;
		if (d[0].id.dtype[0] && testspecs_dtype_parse(d[0].id.dtype, false, &vd) == 0)
			c->variant_dtype = vd;
	}
	/* A test eligible through listed variants of its @ops list: the ops whose variants are
	 * eligible, each decided on its own (mean, prod and amax listed: all three run). */
	if (d[0].variant_suffix && c->t->opinfo && !c->variant_op)
		c->by_variants = d[0].variant_suffix;
	rc = expand_rules(c);
out:
	free(d);
	return rc;
}

int testspecs_cases_expand(struct spec_case_list *list, const struct spec_resolver *r,
			   const struct spec_set *set, const struct spec_case_test *test,
			   struct spec_expand_result *res)
{
	struct ctx c = { .list = list,
			 .set = set,
			 .r = r,
			 .t = test,
			 .resolve_id = test->test_id,
			 .case_id = test->test_id,
			 .res = res };
	return expand_with(&c);
}

/* The probe: a set that holds only `file`, with `entry` only, its names replaced by one plain
 * name; the resolver then decides for that name exactly as it would for a test the entry alone
 * lists (global lists, the entry's edits and labels, the file's suite labels). */
#define PROBE_NAME "SpyreCiProbe::spyre_ci_probe"

int testspecs_cases_expand_entry(struct spec_case_list *list, const struct spec_set *set,
				 const struct spec_file *file, const struct spec_test *entry,
				 const char *label, const char *tier,
				 struct spec_expand_result *res)
{
	memset(res, 0, sizeof(*res));
	struct spec_str name = { PROBE_NAME, strlen(PROBE_NAME), entry->loc };
	struct spec_test t = *entry;
	t.names = (struct spec_strs){ &name, 1, entry->names.loc };
	struct spec_file f = *file;
	f.tests = &t;
	f.n_tests = 1;
	struct spec_set probe = *set;
	probe.files = &f;
	probe.n_files = 1;
	struct spec_resolver *r;
	int rc = testspecs_resolver_create(&r, &probe);
	if (rc)
		return rc;
	struct spec_case_test ct = { .test_id = PROBE_NAME, .tier = tier };
	struct ctx c = { .list = list,
			 .set = &probe,
			 .r = r,
			 .t = &ct,
			 .resolve_id = PROBE_NAME,
			 .case_id = label,
			 .res = res };
	rc = expand_with(&c);
	testspecs_resolver_destroy(r);
	if (res->entry == &t)
		res->entry = entry; /* point into the caller's set, not at the probe */
	if (res->file == &f)
		res->file = file;
	for (size_t i = list->n - res->n_cases; rc == 0 && i < list->n; i++)
		if (list->v[i].kernel >= t.kernels && list->v[i].kernel < t.kernels + t.n_kernels)
			list->v[i].kernel = entry->kernels + (list->v[i].kernel - t.kernels);
	return rc;
}
