/* The selection (funnel.h: funnel_select): stage 1 (the change set), the two catalogs, stage 2
 * (impact analysis) turned into stage 3's candidates, stage 3 (spec eligibility; kernel cases
 * expanded once and kept in the report) and stage 4 (rank, budget, shards), then the scheduled
 * tests' cases in rank order. */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "funnel_int.h"

void funnel__front_finish(struct funnel_front *f)
{
	selector_candidates_finish(&f->cands);
	free(f->ids);
	selector_impact_result_destroy(f->impact);
	selector_catalog_destroy(f->base);
	selector_catalog_destroy(f->head);
	selector_change_set_destroy(f->cs);
	memset(f, 0, sizeof *f);
}

/* Only a negative return ends the selection (funnel.h): a positive one must not stop the stages
 * and come back as a code that is neither 0 nor an error. */
static int checkpoint(const struct funnel_select_opts *o, enum funnel_step step)
{
	int rc = o->checkpoint ? o->checkpoint(o->checkpoint_ctx, step) : 0;
	return rc < 0 ? rc : 0;
}

/* Stages 1 and 2. */
static int front(struct funnel_front *f, const struct funnel_change *ch, struct funnel_cache *cache,
		 const struct funnel_select_opts *o)
{
	int rc = funnel__changes(&f->cs, ch);
	if (rc == 0)
		rc = checkpoint(o, FUNNEL_STEP_CHANGES);
	if (rc == 0)
		rc = funnel__catalogs(f, ch, cache->cache);
	/* A limit hit in stage 1 is the fallback inside selector_impact_run. */
	if (rc == 0 && (rc = selector_impact_run(&f->impact, f->cs, f->base, f->head, NULL)) < 0)
		err_prefix("stage 2: ");
	if (rc == 0)
		rc = selector_candidates_make(&f->cands, f->impact, f->head, f->base);
	if (rc == 0)
		rc = checkpoint(o, FUNNEL_STEP_IMPACT);
	return rc;
}

int funnel__stage3(struct select_report *rep, const struct catalog *head, const char *const *ids,
		   const struct select_candidate *cands, size_t n_cands, struct funnel_specs *specs,
		   const struct funnel_select_opts *o)
{
	struct select_stage3_opts o3 = {
		.tier = o->tier,
		.catalog_ids = ids,
		.n_catalog = head->n_tests,
		.catalog = o->variants ? head : NULL, /* variant by variant */
		.opdb = head, /* @ops tests' cases from the OpInfo entries */
		.drift_memo = specs->memo,
		.progress = o->progress,
		.progress_ctx = o->progress_ctx,
	};
	return selector_stage3_run(rep, specs->set, specs->resolver, cands, n_cands, &o3);
}

/* Stages 3 and 4 on the candidates. */
static int back(struct select_report *rep, const struct funnel_front *f, struct funnel_specs *specs,
		const struct funnel_select_opts *o)
{
	selector_report_set_front(rep, f->head->n_tests, f->cs->n_files, f->cands.n);
	if (f->impact->fallback)
		selector_report_set_fallback(rep, f->impact->fallback_reason);
	int rc = funnel__stage3(rep, f->head, f->ids, f->cands.v, f->cands.n, specs, o);
	if (rc == 0)
		rc = selector_stage4_run(rep, NULL, o->history, &o->budget, o->shards);
	return rc;
}

/* The scheduled tests' cases, in rank order (stage 4 left the tests in it). */
static int scheduled_cases(struct funnel_selection *sel)
{
	const struct select_report *rep = &sel->rep;
	sel->cases = calloc(rep->kernel_cases + 1, sizeof *sel->cases);
	if (!sel->cases)
		return err_set(ERR_NOMEM, "%zu kernel cases", rep->kernel_cases);
	for (size_t i = 0; i < rep->n_tests; i++) {
		const struct select_test *t = &rep->tests[i];
		if (t->fate != SELECT_SCHEDULED)
			continue;
		for (size_t k = 0; k < t->kernel_cases && sel->n_cases < rep->kernel_cases; k++)
			sel->cases[sel->n_cases++] = &rep->cases.v[t->case_first + k];
	}
	return 0;
}

int funnel_select(struct funnel_selection *out, const struct funnel_change *ch,
		  struct funnel_specs *specs, struct funnel_cache *cache,
		  const struct funnel_select_opts *o)
{
	static const struct funnel_select_opts none = { 0 };
	memset(out, 0, sizeof *out);
	selector_report_init(&out->rep);
	if (!o)
		o = &none;
	/* Held for the whole selection: each libgit2 user inits and shuts down around its own
	 * work, and the first init of a process loads the system's CA certificates. */
	git_libgit2_init();
	struct funnel_front f = { 0 };
	struct funnel_cache *own = NULL;
	int rc = cache ? 0 : funnel_cache_create(&own, NULL);
	if (rc == 0)
		rc = front(&f, ch, cache ? cache : own, o);
	if (rc == 0)
		rc = back(&out->rep, &f, specs, o);
	funnel__front_finish(&f);
	funnel_cache_destroy(own);
	git_libgit2_shutdown();
	if (rc == 0)
		rc = scheduled_cases(out);
	if (rc < 0)
		funnel_selection_finish(out);
	return rc;
}

void funnel_selection_finish(struct funnel_selection *sel)
{
	free(sel->cases);
	selector_report_finish(&sel->rep);
	memset(sel, 0, sizeof *sel);
	selector_report_init(&sel->rep);
}
