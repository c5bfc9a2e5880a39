/* The resolver's decision: which entry decides a test id (through the index of
 * resolve_index.c), then mode, ops, dtypes, force_xfail and precision as testspecs/resolve.h
 * restates torch-spyre's rules. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "resolve_index.h"
#include "scope.h"

/* uint64 sits between uint32 and complex32 in the enum; keep the table aligned with it. */
static const char *dtype_str(enum spec_dtype d)
{
	static const char *const names[SPEC_DTYPE_COUNT] = {
		[SPEC_DTYPE_FLOAT16] = "float16",
		[SPEC_DTYPE_FLOAT32] = "float32",
		[SPEC_DTYPE_FLOAT64] = "float64",
		[SPEC_DTYPE_BFLOAT16] = "bfloat16",
		[SPEC_DTYPE_INT8] = "int8",
		[SPEC_DTYPE_INT16] = "int16",
		[SPEC_DTYPE_INT32] = "int32",
		[SPEC_DTYPE_INT64] = "int64",
		[SPEC_DTYPE_UINT8] = "uint8",
		[SPEC_DTYPE_UINT16] = "uint16",
		[SPEC_DTYPE_UINT32] = "uint32",
		[SPEC_DTYPE_UINT64] = "uint64",
		[SPEC_DTYPE_COMPLEX32] = "complex32",
		[SPEC_DTYPE_COMPLEX64] = "complex64",
		[SPEC_DTYPE_COMPLEX128] = "complex128",
		[SPEC_DTYPE_BOOL] = "bool",
	};
	return d > 0 && d < SPEC_DTYPE_COUNT && names[d] ? names[d] : "";
}

static enum spec_dtype dtype_of(const char *text)
{
	for (int d = 1; d < SPEC_DTYPE_COUNT; d++)
		if (strcmp(dtype_str((enum spec_dtype)d), text) == 0)
			return (enum spec_dtype)d;
	return SPEC_DTYPE_NONE;
}

static const char *mode_str(enum spec_mode m)
{
	switch (m) {
	case SPEC_MODE_MANDATORY_SUCCESS:
		return "mandatory_success";
	case SPEC_MODE_XFAIL:
		return "xfail";
	case SPEC_MODE_XFAIL_STRICT:
		return "xfail_strict";
	case SPEC_MODE_SKIP:
		return "skip";
	default:
		return "unset";
	}
}

const char *testspecs_role_name(enum spec_role role)
{
	static const char *const names[] = { "?",     "file", "entry", "shadowed", "label-dropped",
					     "dtype", "op" };
	return role <= SPEC_ROLE_OP ? names[role] : "?";
}

static spec_dtype_mask bit(enum spec_dtype d)
{
	return (spec_dtype_mask)1 << d;
}

static spec_dtype_mask mask_of(const struct spec_dtype_items *items)
{
	spec_dtype_mask m = 0;
	for (size_t i = 0; i < items->n; i++)
		if (items->v[i].dtype != SPEC_DTYPE_NONE)
			m |= bit(items->v[i].dtype);
	return m;
}

static const struct spec_dtype_item *find_dtype(const struct spec_dtype_items *items,
						enum spec_dtype d)
{
	for (size_t i = 0; i < items->n; i++)
		if (items->v[i].dtype == d)
			return &items->v[i];
	return NULL;
}

/* The reason text is built on every resolve, so it is assembled with plain copies rather than
 * snprintf (which was half the cost of a resolve). Parts are cut to the buffer; the result is
 * always terminated. */
struct rtext {
	char *p;
	size_t n, cap;
};

static void rt_s(struct rtext *t, const char *s)
{
	while (*s && t->n + 1 < t->cap)
		t->p[t->n++] = *s++;
	t->p[t->n] = '\0';
}

static void rt_u(struct rtext *t, unsigned v)
{
	char d[12];
	int k = 0;
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 11);
	while (k && t->n + 1 < t->cap)
		t->p[t->n++] = d[--k];
	t->p[t->n] = '\0';
}

static struct rtext rt_start(struct spec_decision *out)
{
	struct rtext t = { out->reason, 0, sizeof out->reason };
	out->reason[0] = '\0';
	return t;
}

static void note(struct spec_decision *out, const struct spec_loc *loc, enum spec_role role,
		 const char *what)
{
	if (out->n_entries >= SPEC_DECISION_ENTRIES_MAX)
		return;
	out->entries[out->n_entries++] = (struct spec_decision_entry){ *loc, role, what };
}

static int has_label(const struct spec_strs *labels, const char *tier)
{
	for (size_t i = 0; i < labels->n; i++)
		if (strcmp(labels->v[i].s, tier) == 0)
			return 1;
	return 0;
}

/* An entry applies in the requested tier when it has no labels or lists the tier. */
static int entry_in_tier(const struct spec_test *t, const char *tier)
{
	if (!tier)
		return 1;
	if (t->labels.n && !has_label(&t->labels, tier))
		return 0;
	return !t->suite_labels.n || has_label(&t->suite_labels, tier);
}

/* Op names compare with '.' and '_' as one character: upstream writes an overload's dot as an
 * underscore in test names (div.no_rounding_mode runs as test_..._div_no_rounding_mode_...). */
static int op_ch(char c)
{
	return c == '.' ? '_' : c;
}

static bool op_neq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (op_ch(a[i]) != op_ch(b[i]))
			return false;
		if (!a[i])
			return true;
	}
	return true;
}

static bool op_eq(const char *a, const char *b)
{
	size_t n = strlen(a);
	return strlen(b) == n && op_neq(a, b, n);
}

static const struct spec_op *find_op(const struct spec_global *g, const char *name)
{
	for (size_t i = 0; i < g->n_supported_ops; i++)
		if (op_eq(g->supported_ops[i].name.s, name))
			return &g->supported_ops[i];
	return NULL;
}

/* edits.ops.exclude: `name` removes op `name` and every op starting `name_`. */
static const struct spec_named *op_excluded(const struct spec_test *t, const char *op)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->edits.ops_exclude.n; i++) {
		const struct spec_named *x = &t->edits.ops_exclude.v[i];
		size_t n = strlen(x->name.s);
		if (strlen(op) >= n && op_neq(op, x->name.s, n) &&
		    (op[n] == '\0' || op_ch(op[n]) == '_'))
			return x;
	}
	return NULL;
}

static const struct spec_op_include *op_included(const struct spec_test *t, const char *op)
{
	for (size_t i = 0; t && i < t->edits.n_ops_include; i++)
		if (op_eq(t->edits.ops_include[i].name.s, op))
			return &t->edits.ops_include[i];
	return NULL;
}

/* Whether `op` may run for this test; notes the item that said no. */
static int op_allowed(const struct spec_set *set, const struct spec_test *t, const char *op,
		      const struct spec_op *known, struct spec_decision *out)
{
	const struct spec_named *x = op_excluded(t, op);
	if (x) {
		note(out, &x->loc, SPEC_ROLE_OP, x->name.s);
		return 0;
	}
	if (known || !set->global.has_supported_ops || op_included(t, op))
		return 1;
	return find_op(&set->global, op) != NULL;
}

/* (global ∩ op ∩ test) + include − exclude, and whether anything bounded it. */
static spec_dtype_mask dtypes_for(const struct spec_set *set, const struct spec_test *t,
				  const struct spec_op *op, spec_dtype_mask own, bool *unbounded)
{
	const struct spec_global *g = &set->global;
	spec_dtype_mask m = SPEC_DTYPE_MASK_ALL;
	bool bounded = false;
	if (g->has_supported_dtypes) {
		m &= mask_of(&g->supported_dtypes);
		bounded = true;
	}
	if (op && op->dtypes_present && op->dtypes.n) {
		m &= mask_of(&op->dtypes);
		bounded = true;
	}
	if (own) {
		m &= own;
		bounded = true;
	}
	if (t) {
		m |= mask_of(&t->edits.dtypes_include);
		m &= ~mask_of(&t->edits.dtypes_exclude);
	}
	*unbounded = !bounded;
	return m;
}

/* force_xfail only turns mandatory_success into xfail. */
static enum spec_mode variant_mode(const struct spec_set *set, enum spec_mode base,
				   const struct spec_op *op, enum spec_dtype d)
{
	if (base != SPEC_MODE_MANDATORY_SUCCESS)
		return base;
	if (op && op->force_xfail == SPEC_TRI_TRUE)
		return SPEC_MODE_XFAIL;
	const struct spec_dtype_item *gd = d ? find_dtype(&set->global.supported_dtypes, d) : NULL;
	if (gd && gd->force_xfail == SPEC_TRI_TRUE)
		return SPEC_MODE_XFAIL;
	const struct spec_dtype_item *od = (op && d) ? find_dtype(&op->dtypes, d) : NULL;
	if (od && od->force_xfail == SPEC_TRI_TRUE)
		return SPEC_MODE_XFAIL;
	return base;
}

static struct spec_precision precision_for(const struct spec_set *set, const struct spec_test *t,
					   const struct spec_op *op, enum spec_dtype d)
{
	const struct spec_dtype_item *it = t ? find_dtype(&t->edits.dtypes_include, d) : NULL;
	if (it && it->precision.present)
		return it->precision;
	it = op ? find_dtype(&op->dtypes, d) : NULL;
	if (it && it->precision.present)
		return it->precision;
	it = find_dtype(&set->global.supported_dtypes, d);
	if (it && it->precision.present)
		return it->precision;
	return (struct spec_precision){ 0 };
}

static void op_row(const struct spec_set *set, const struct spec_test *t, const char *name,
		   const struct spec_op *op, enum spec_mode base, spec_dtype_mask own,
		   struct spec_decision *out)
{
	if (out->n_ops >= SPEC_DECISION_OPS_MAX)
		return;
	struct spec_decision_op *row = &out->ops[out->n_ops++];
	memset(row, 0, sizeof *row);
	bool unb;
	row->name = name;
	row->dtypes = dtypes_for(set, t, op, own, &unb);
	for (int d = 1; d < SPEC_DTYPE_COUNT; d++) {
		if (!(row->dtypes & bit((enum spec_dtype)d)))
			continue; /* mode stays UNSET: no variant of that dtype */
		row->mode[d] = variant_mode(set, base, op, (enum spec_dtype)d);
		row->precision[d] = precision_for(set, t, op, (enum spec_dtype)d);
	}
}

/* The op of a device-generic id when the deciding entry did not split it off: the longest op
 * of the test's list (or of supported_ops) that ends the stem. */
static const char *op_from_suffix(const struct spec_set *set, const struct spec_resolve_opts *o,
				  const struct spec_test_id *id)
{
	const char *best = NULL;
	size_t n = strlen(id->stem), bl = 0;
	size_t count = o->ops ? o->n_ops : set->global.n_supported_ops;
	for (size_t i = 0; i < count; i++) {
		const char *op = o->ops ? o->ops[i] : set->global.supported_ops[i].name.s;
		size_t m = strlen(op);
		if (m + 1 < n && m > bl && id->stem[n - m - 1] == '_' &&
		    op_eq(id->stem + n - m, op)) {
			best = op;
			bl = m;
		}
	}
	return best;
}

/* Fills ops, dtypes, the variant's mode and eligibility once mode and entry are known. */
static void decide_variant(const struct spec_set *set, const struct spec_resolve_opts *o,
			   const struct spec_test *t, enum spec_mode base, const char *op,
			   struct spec_decision *out)
{
	enum spec_dtype d = out->id.dtype[0] ? dtype_of(out->id.dtype) : SPEC_DTYPE_NONE;
	bool unb = false;
	if (op) {
		const struct spec_op *opc = find_op(&set->global, op);
		op_row(set, t, op, opc, base, o->dtypes, out);
		out->dtypes = out->ops[0].dtypes;
		dtypes_for(set, t, opc, o->dtypes, &unb);
		if (!op_allowed(set, t, op, opc, out)) {
			out->eligible = false;
			snprintf(out->reason, sizeof out->reason,
				 "op '%.200s' not supported or excluded", op);
		}
	} else if (o->ops || set->global.has_supported_ops) {
		size_t count = o->ops ? o->n_ops : set->global.n_supported_ops;
		for (size_t i = 0; i < count; i++) {
			const char *name = o->ops ? o->ops[i] : set->global.supported_ops[i].name.s;
			const struct spec_op *opc =
			    o->ops ? find_op(&set->global, name) : &set->global.supported_ops[i];
			if (op_allowed(set, t, name, opc, out))
				op_row(set, t, name, opc, base, o->dtypes, out);
		}
		for (size_t i = 0; t && !o->ops && i < t->edits.n_ops_include; i++)
			if (!find_op(&set->global, t->edits.ops_include[i].name.s))
				op_row(set, t, t->edits.ops_include[i].name.s, NULL, base,
				       o->dtypes, out);
		out->dtypes = dtypes_for(set, t, NULL, o->dtypes, &unb);
		if (out->n_ops) {
			out->dtypes = 0;
			for (size_t i = 0; i < out->n_ops; i++)
				out->dtypes |= out->ops[i].dtypes;
		}
	} else {
		out->ops_unbounded = true;
		out->dtypes = dtypes_for(set, t, NULL, o->dtypes, &unb);
	}
	out->dtypes_unbounded = unb;
	const struct spec_op *opc = op ? find_op(&set->global, op) : NULL;
	out->mode = variant_mode(set, base, opc, d);
	if (!out->eligible)
		return;
	if (d != SPEC_DTYPE_NONE && !(out->dtypes & bit(d))) {
		out->eligible = false;
		snprintf(out->reason, sizeof out->reason, "dtype %s not in the effective dtypes",
			 dtype_str(d));
	} else if (!unb && out->dtypes == 0) {
		out->eligible = false;
		snprintf(out->reason, sizeof out->reason, "no effective dtype left");
	} else if (out->mode == SPEC_MODE_SKIP) {
		out->eligible = false;
	}
}

static int cmp_hit(const void *a, const void *b)
{
	const struct rule_hit *x = a, *y = b;
	if (x->file != y->file)
		return (x->file > y->file) - (x->file < y->file);
	return (x->rule > y->rule) - (x->rule < y->rule);
}

static int find_hits(const struct spec_resolver *r, const struct spec_resolve_opts *o,
		     struct spec_decision *out, struct rule_hit *hits, size_t *n, int *any_file)
{
	uint32_t files[64];
	size_t nf = resolve__files_for(r, &out->id, files, 64);
	for (size_t k = 0; k < nf; k++) {
		uint32_t f = files[k];
		const struct file_index *fi = &r->files[f];
		if (o->tier && fi->file->labels.n && !has_label(&fi->file->labels, o->tier))
			continue;
		if (!*any_file) {
			out->file = fi->file;
			note(out, &fi->file->loc, SPEC_ROLE_FILE, fi->file->path.s);
		}
		*any_file = 1;
		int rc = resolve__match_rules(r, f, &out->id, hits, n, SPEC_MATCH_CANDIDATES_MAX);
		if (rc)
			return rc;
	}
	qsort(hits, *n, sizeof *hits, cmp_hit);
	return 0;
}

int testspecs_resolver_resolve(const struct spec_resolver *r, const char *test_id,
			       const struct spec_resolve_opts *opts, struct spec_decision *out)
{
	static const struct spec_resolve_opts none;
	const struct spec_resolve_opts *o = opts ? opts : &none;
	memset(out, 0, offsetof(struct spec_decision, entries));
	out->reason[0] = '\0';
	out->op_buf[0] = '\0';
	out->n_variants = out->n_variants_eligible = 0;
	out->variant = out->variant_suffix = NULL;
	int rc = testspecs_testid_parse(&out->id, test_id, o->device);
	if (rc)
		return rc;
	struct rule_hit hits[SPEC_MATCH_CANDIDATES_MAX];
	size_t n = 0;
	int any_file = 0;
	rc = find_hits(r, o, out, hits, &n, &any_file);
	if (rc)
		return rc;
	const struct name_rule *win = NULL;
	const struct rule_hit *wh = NULL;
	size_t dropped = 0;
	for (size_t i = 0; i < n; i++) {
		const struct name_rule *rule = &r->files[hits[i].file].rules[hits[i].rule];
		if (!entry_in_tier(rule->test, o->tier)) {
			note(out, &rule->name->loc, SPEC_ROLE_LABEL_DROPPED, rule->name->s);
			dropped++;
		} else if (win && rule->test != win->test) {
			note(out, &rule->name->loc, SPEC_ROLE_SHADOWED, rule->name->s);
		} else if (!win) {
			win = rule;
			wh = &hits[i];
			note(out, &rule->name->loc, SPEC_ROLE_ENTRY, rule->name->s);
		}
	}
	const struct spec_set *set = r->set;
	if (!any_file) {
		snprintf(out->reason, sizeof out->reason, "no file entry covers '%.200s'",
			 out->id.path[0] ? out->id.path : test_id);
		return 0;
	}
	enum spec_mode base;
	const char *op = NULL;
	if (win) {
		out->listed = true;
		out->entry = win->test;
		out->tags = win->test->tags.n ? &win->test->tags : NULL;
		out->labels = win->test->labels.n ? &win->test->labels : &win->test->suite_labels;
		base = win->test->mode ? win->test->mode : SPEC_MODE_MANDATORY_SUCCESS;
		if (wh->base_len < strlen(out->id.stem)) {
			snprintf(out->op_buf, sizeof out->op_buf, "%s",
				 out->id.stem + wh->base_len + 1);
			op = out->op_buf;
		}
		struct rtext t = rt_start(out);
		rt_s(&t, "listed by '");
		rt_s(&t, win->name->s);
		rt_s(&t, "' at ");
		rt_s(&t, win->name->loc.file ? win->name->loc.file : "?");
		rt_s(&t, ":");
		rt_u(&t, win->name->loc.line);
		rt_s(&t, ":");
		rt_u(&t, win->name->loc.col);
		rt_s(&t, ", mode ");
		rt_s(&t, mode_str(base));
		rt_s(&t, win->test->mode ? "" : " (the default)");
	} else if (dropped || !out->id.path[0]) {
		snprintf(out->reason, sizeof out->reason,
			 dropped ? "listed only for other tiers" : "no entry lists it");
		return o->exact ? 0 : resolve__variants(r, test_id, o, out);
	} else {
		base = out->file->unlisted ? out->file->unlisted : SPEC_MODE_XFAIL;
		out->labels = &out->file->labels;
		struct rtext t = rt_start(out);
		rt_s(&t, "unlisted in ");
		rt_s(&t, out->file->path.s);
		rt_s(&t, ": unlisted_test_mode ");
		rt_s(&t, mode_str(base));
		rt_s(&t, out->file->unlisted ? "" : " (the default)");
	}
	/* The deciding entry's own config's global (point 9). */
	struct spec_set view;
	set = testspecs__set_view(&view, set,
				  testspecs__global_for(set, win ? win->test : NULL, out->file));
	/* Only an unlisted variant needs the op guessed from its name's end: a listed one's entry
	 * said where the base name stops. */
	if (!win && out->id.device_generic)
		op = op_from_suffix(set, o, &out->id);
	out->eligible = true;
	decide_variant(set, o, win ? win->test : NULL, base, op, out);
	return out->eligible || o->exact ? 0 : resolve__variants(r, test_id, o, out);
}

int testspecs_resolve(const struct spec_set *set, const char *test_id,
		      const struct spec_resolve_opts *opts, struct spec_decision *out)
{
	struct spec_resolver *r;
	int rc = testspecs_resolver_create(&r, set);
	if (rc)
		return rc;
	rc = testspecs_resolver_resolve(r, test_id, opts, out);
	testspecs_resolver_destroy(r);
	return rc;
}

void testspecs_resolve_lint_name(void *ctx, const struct spec_str *name, const char *doc_path,
				 struct spec_diag_list *diags)
{
	(void)ctx;
	const char *sep = strstr(name->s, "::");
	const char *parts[2] = { sep ? NULL : name->s, sep ? sep + 2 : NULL };
	char cls[SPEC_REGEX_PATTERN_MAX + 1];
	if (sep) {
		size_t n = (size_t)(sep - name->s);
		if (n > SPEC_REGEX_PATTERN_MAX)
			n = SPEC_REGEX_PATTERN_MAX;
		memcpy(cls, name->s, n);
		cls[n] = '\0';
		parts[0] = cls;
	}
	for (size_t i = 0; i < 2; i++) {
		if (!parts[i] || testspecs_name_is_plain(parts[i]))
			continue;
		struct spec_regex *re;
		if (testspecs_regex_create(&re, parts[i]) != 0) {
			testspecs_diags_add(diags, SPEC_ERROR, &name->loc, doc_path, "%s",
					    err_last());
			return;
		}
		testspecs_regex_destroy(re);
	}
}
