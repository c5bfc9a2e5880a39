/* Stage 3, spec eligibility: every candidate of stage 2 is resolved against the specs (the
 * testspecs resolver decides mode, dtypes and ops as torch-spyre's loader would), the eligible
 * ones are expanded into kernel cases, and spec drift is recorded: a test new in the change that
 * falls under its file's unlisted mode, and a plain spec name that no test of the head catalog
 * matches any more (found by resolving the whole catalog and noting which names decided, were
 * shadowed or were dropped for their labels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"
#include "select_internal.h"
#include "selector/select.h"
#include "testspecs/cases.h"

static bool has_label(const struct spec_strs *labels, const char *want)
{
	if (!labels)
		return false;
	for (size_t i = 0; i < labels->n; i++)
		if (strcmp(labels->v[i].s, want) == 0)
			return true;
	return false;
}

static char *loc_text(const struct spec_loc *loc)
{
	char buf[1200];
	snprintf(buf, sizeof buf, "%s:%u", loc->file ? loc->file : "?", (unsigned)loc->line);
	return strdup(buf);
}

static int add_drift(struct select_report *rep, enum select_drift_kind kind, const char *test,
		     const struct spec_loc *loc, enum spec_mode mode)
{
	if (select__grow((void **)&rep->drift, &rep->cap_drift, rep->n_drift + 1,
			 sizeof *rep->drift) < 0)
		return ERR_NOMEM;
	struct select_drift *d = &rep->drift[rep->n_drift];
	d->kind = kind;
	d->mode = mode;
	d->test = strdup(test);
	d->where = loc_text(loc);
	if (!d->test || !d->where) {
		free(d->test);
		free(d->where);
		return err_set(ERR_NOMEM, "stage 3: drift record for '%s'", test);
	}
	rep->n_drift++;
	return 0;
}

/* The kernel cases of one eligible test, appended to the report's list: expanded here once,
 * counted, and kept for whoever runs the scheduled tests. */
static int expand_cases(struct select_report *rep, struct select_test *t,
			const struct spec_resolver *resolver, const struct spec_set *set,
			const struct spec_decision *d, const struct select_candidate *c,
			const struct spec_resolve_opts *ropts, const struct catalog *cat)
{
	struct selector_case_test x;
	int rc = selector_case_test_init(&x, c->id, cat, c, d, ropts);
	if (rc < 0)
		return err_prefix("stage 3: ");
	struct spec_expand_result res = { 0 };
	size_t first = rep->cases.n;
	rc = testspecs_cases_expand(&rep->cases, resolver, set, &x.ct, &res);
	selector_case_test_finish(&x);
	if (rc < 0)
		return err_prefix("stage 3: kernel cases of '%s': ", c->id);
	if (!res.n_cases && res.why && !(t->case_why = strdup(res.why)))
		return err_set(ERR_NOMEM, "stage 3: case reason of '%s'", c->id);
	t->case_first = first;
	t->kernel_cases = res.n_cases;
	t->kernel_unsupported = res.n_unsupported;
	t->case_rule = testspecs_rule_name(res.rule);
	memcpy(t->kernel_by_source, res.n_by_source, sizeof t->kernel_by_source);
	return 0;
}

static int take_decision(struct select_report *rep, struct select_test *t,
			 const struct spec_resolver *resolver, const struct spec_set *set,
			 const struct spec_decision *d, const struct select_candidate *c,
			 const struct spec_resolve_opts *ropts, const char *smoke,
			 const struct catalog *cat)
{
	t->mode = d->mode;
	t->listed = d->listed;
	t->smoke = has_label(d->labels, smoke);
	t->spec_why = strdup(d->reason);
	if (!t->spec_why)
		return err_set(ERR_NOMEM, "stage 3: reason of '%s'", c->id);
	if (d->entry) {
		t->spec_entry = loc_text(&d->entry->loc);
		if (!t->spec_entry)
			return err_set(ERR_NOMEM, "stage 3: entry of '%s'", c->id);
	}
	if (c->added && !d->listed && d->file) {
		int rc = add_drift(rep, SELECT_DRIFT_UNLISTED, c->id, &d->file->loc, d->mode);
		if (rc < 0)
			return rc;
	}
	if (!d->eligible)
		return 0;
	t->fate = SELECT_ELIGIBLE;
	return expand_cases(rep, t, resolver, set, d, c, ropts, cat);
}

static int run_one(struct select_report *rep, const struct spec_set *set,
		   const struct spec_resolver *resolver, const struct select_candidate *c,
		   const struct spec_resolve_opts *ropts, const char *smoke,
		   const struct catalog *cat, struct spec_decision *d)
{
	struct select_test *t;
	int rc = select__add_test(rep, c->id, c->reasons, c->n_reasons, &t);
	if (rc < 0)
		return rc;
	t->added = c->added;
	rc = testspecs_resolver_resolve(resolver, c->id, ropts, d);
	if (rc == ERR_INVAL) {
		/* An id the resolver cannot parse is no spec's test: not eligible, said why. */
		t->spec_why = strdup("the id does not parse as a test id");
		return t->spec_why ? 0 : ERR_NOMEM;
	}
	if (rc < 0)
		return err_prefix("stage 3: resolving '%s': ", c->id);
	return take_decision(rep, t, resolver, set, d, c, ropts, smoke, cat);
}

/* The head catalog's ids, for the resolver's variant rule (a longer test's name is its own).
 * Built on the first question: the rule asks only about names that spec entries give as
 * variants, and most selections ask nothing; indexing 60,000 ids per commit cost more than
 * the rest of stage 3. */
struct id_index {
	struct strmap m;
	bool built;
	int rc;
	const struct select_stage3_opts *o;
	const struct select_candidate *cands;
	size_t n_cands;
};

static int index_ids(struct id_index *x)
{
	const struct select_stage3_opts *o = x->o;
	for (size_t i = 0; i < o->n_catalog; i++)
		if (strmap_put(&x->m, o->catalog_ids[i], 1))
			return err_set(ERR_NOMEM, "stage 3: test ids");
	for (size_t i = 0; !o->catalog_ids && i < x->n_cands; i++)
		if (strmap_put(&x->m, x->cands[i].id, 1))
			return err_set(ERR_NOMEM, "stage 3: test ids");
	return 0;
}

static int catalog_has(void *ctx, const char *id)
{
	struct id_index *x = ctx;
	if (!x->built) {
		x->built = true;
		x->rc = index_ids(x);
	}
	return strmap_get(&x->m, id, NULL);
}

int selector_stage3_run(struct select_report *rep, const struct spec_set *set,
			const struct spec_resolver *resolver, const struct select_candidate *cands,
			size_t n_cands, const struct select_stage3_opts *opts)
{
	struct select_stage3_opts none = { 0 };
	if (!opts)
		opts = &none;
	const char *smoke = opts->smoke_label ? opts->smoke_label : "smoke";
	const struct catalog *opdb = opts->opdb ? opts->opdb : opts->catalog;
	struct id_index ids = { .o = opts, .cands = cands, .n_cands = n_cands };
	struct spec_resolve_opts ropts = { .tier = opts->tier,
					   .is_test = catalog_has,
					   .is_test_ctx = &ids };
	struct spec_decision *d = malloc(sizeof *d);
	if (!d)
		return err_set(ERR_NOMEM, "stage 3: decision");
	size_t first = rep->n_tests, eligible = 0;
	int rc = 0;
	for (size_t i = 0; i < n_cands && rc == 0 && ids.rc == 0; i++) {
		rc = run_one(rep, set, resolver, &cands[i], &ropts, smoke, opdb, d);
		if (rc == 0 && opts->catalog)
			rc = select__variants(&rep->tests[rep->n_tests - 1], opts->catalog,
					      resolver, &ropts, d);
		if (opts->progress && ((i + 1) % SELECT_PROGRESS_EVERY == 0 || i + 1 == n_cands))
			opts->progress(opts->progress_ctx, "resolving candidates", i + 1, n_cands);
	}
	if (rc == 0 && opts->catalog_ids)
		rc = select__stale_drift(rep, set, resolver, opts, d);
	free(d);
	strmap_free(&ids.m);
	if (rc == 0)
		rc = ids.rc;
	for (size_t i = first; i < rep->n_tests; i++)
		eligible += rep->tests[i].fate >= SELECT_ELIGIBLE;
	rep->stages[2].in = n_cands;
	rep->stages[2].out = eligible;
	rep->stages[3].in = eligible;
	return rc;
}
