/* Stage 2 for `spyre-ci select` (select_front.h): catalogs, impact, and the conversion of impact
 * candidates into stage 3's candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "select_front.h"

int front_catalogs(struct front *f, const char *repo_dir, const char *base, const char *head,
		   const char *cache_dir)
{
	int rc = selector_catalog_cache_create(&f->cache, 0);
	if (rc == 0 && cache_dir && (rc = selector_catalog_cache_set_dir(f->cache, cache_dir)) < 0)
		return err_prefix("--cache: ");
	if (rc == 0)
		rc = selector_catalog_build(&f->head, repo_dir, head, f->cache);
	if (rc == 0)
		rc = selector_catalog_build(&f->base, repo_dir, base, f->cache);
	if (rc == 0 && f->head->n_tests) {
		f->ids = malloc(f->head->n_tests * sizeof *f->ids);
		if (!f->ids)
			return err_set(ERR_NOMEM, "catalog: %zu ids", f->head->n_tests);
		for (size_t i = 0; i < f->head->n_tests; i++)
			f->ids[i] = f->head->tests[i].id;
	}
	return rc;
}

/* The body of a head test as the scanner saw it, or NULL. */
static const struct scan_function *body_of(const struct catalog *cat, const struct catalog_test *t)
{
	const struct catalog_file *cf = &cat->files[t->file];
	if (!cf->blob || !cf->blob->scan || t->function < 0 ||
	    (size_t)t->function >= cf->blob->scan->n_functions)
		return NULL;
	return &cf->blob->scan->functions[t->function];
}

static void fill_facts(struct front *f, struct select_candidate *c)
{
	const struct catalog_test *t = selector_catalog_test(f->head, c->id);
	if (!t)
		return;
	const struct scan_function *fn = body_of(f->head, t);
	c->opinfo = t->opset != CATALOG_OPSET_NONE;
	c->added = selector_catalog_test(f->base, c->id) == NULL;
	if (fn) {
		c->body_ops = fn->uses;
		c->n_body_ops = fn->n_uses;
	}
}

static int make_cands(struct front *f)
{
	const struct impact_result *r = f->impact;
	size_t nr = 0;
	for (size_t i = 0; i < r->n_candidates; i++)
		nr += r->candidates[i].n_reasons + (r->fallback ? 1 : 0);
	f->cands = calloc(r->n_candidates + 1, sizeof *f->cands);
	f->reasons = calloc(nr + 1, sizeof *f->reasons);
	if (!f->cands || !f->reasons)
		return err_set(ERR_NOMEM, "stage 2: %zu candidates", r->n_candidates);
	for (size_t i = 0; i < r->n_candidates; i++) {
		const struct impact_candidate *ic = &r->candidates[i];
		struct select_candidate *c = &f->cands[f->n_cands++];
		struct select_reason *first = &f->reasons[f->n_reasons];
		c->id = ic->id;
		c->reasons = first;
		for (size_t k = 0; k < ic->n_reasons; k++, f->n_reasons++) {
			struct select_reason *sr = &f->reasons[f->n_reasons];
			snprintf(sr->kind, sizeof sr->kind, "%s",
				 selector_impact_signal_name(ic->reasons[k].signal));
			sr->score = ic->reasons[k].score;
			sr->text = ic->reasons[k].detail; /* borrowed from the impact result */
		}
		if (r->fallback) {
			struct select_reason *sr = &f->reasons[f->n_reasons++];
			snprintf(sr->kind, sizeof sr->kind, "fallback");
			sr->score = 1.0;
			sr->text = r->fallback_reason;
		}
		c->n_reasons = (size_t)(&f->reasons[f->n_reasons] - first);
		fill_facts(f, c);
	}
	return 0;
}

int front_impact(struct front *f, const struct change_set *cs)
{
	/* A limit hit in stage 1 is the fallback inside selector_impact_run. */
	int rc = selector_impact_run(&f->impact, cs, f->base, f->head, NULL);
	if (rc < 0)
		return err_prefix("stage 2: ");
	return make_cands(f);
}

void front_finish(struct front *f)
{
	free(f->cands);
	free(f->reasons);
	free(f->ids);
	selector_impact_result_destroy(f->impact);
	selector_catalog_destroy(f->base);
	selector_catalog_destroy(f->head);
	selector_catalog_cache_destroy(f->cache);
	memset(f, 0, sizeof *f);
}
