/* Named upstream tests taken to stage 3 without a change (funnel.h: funnel_tests_expand): the
 * catalog of one revision, the tests asked for as bare candidates (what select's stage 2 hands
 * over for them, less the reasons), and the same stage 3 as funnel_select, so that the specs'
 * tools and the selection cannot give one test two sets of cases. */
#include <git2.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "funnel_int.h"

void funnel_expansion_finish(struct funnel_expansion *x)
{
	selector_report_finish(&x->rep);
	free(x->absent);
	selector_catalog_destroy(x->catalog); /* before its cache */
	funnel_cache_destroy(x->own_cache_);
	memset(x, 0, sizeof *x);
	selector_report_init(&x->rep);
}

int funnel_expansion_is_test(void *ctx, const char *id)
{
	const struct funnel_expansion *x = ctx;
	return x->catalog && selector_catalog_test(x->catalog, id) != NULL;
}

/* The candidates: the ids asked for that the catalog has (the others go to x->absent), or
 * every test of the catalog. */
static int candidates(struct select_candidate **out, size_t *n, struct funnel_expansion *x,
		      const struct funnel_tests *t)
{
	const struct catalog *cat = x->catalog;
	size_t max = t->ids ? t->n_ids : cat->n_tests;
	*n = 0;
	*out = calloc(max + 1, sizeof **out);
	x->absent = t->ids ? calloc(max + 1, sizeof *x->absent) : NULL;
	if (!*out || (t->ids && !x->absent))
		return err_set(ERR_NOMEM, "%zu tests", max);
	for (size_t i = 0; i < max; i++) {
		const char *id = t->ids ? t->ids[i] : cat->tests[i].id;
		if (t->ids && !selector_catalog_test(cat, id))
			x->absent[x->n_absent++] = id;
		else
			(*out)[(*n)++] = (struct select_candidate){ .id = id };
	}
	return 0;
}

int funnel_tests_expand(struct funnel_expansion *out, const struct funnel_tests *t,
			struct funnel_specs *specs, struct funnel_cache *cache)
{
	memset(out, 0, sizeof *out);
	selector_report_init(&out->rep);
	const char **ids = NULL;
	struct select_candidate *cands = NULL;
	size_t n = 0;
	git_libgit2_init(); /* held for the build, as funnel_select holds it */
	int rc = cache ? 0 : funnel_cache_create(&out->own_cache_, t->cache_dir);
	if (rc == 0)
		rc = selector_catalog_build(&out->catalog, t->repo, t->rev ? t->rev : "HEAD",
					    (cache ? cache : out->own_cache_)->cache);
	git_libgit2_shutdown();
	if (rc == 0)
		rc = funnel__catalog_ids(&ids, out->catalog);
	if (rc == 0)
		rc = candidates(&cands, &n, out, t);
	if (rc == 0) {
		struct funnel_select_opts o = { .tier = t->tier };
		selector_report_set_front(&out->rep, out->catalog->n_tests, 0, n);
		rc = funnel__stage3(&out->rep, out->catalog, ids, cands, n, specs, &o);
	}
	free(cands);
	free(ids);
	return rc;
}
