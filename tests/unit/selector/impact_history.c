/* Stage 1 + 2 over every commit of a generated upstream history (scale small): every truly
 * affected test (the generator's ground truth) must be a candidate unless the selector fell
 * back to everything; prints recall, the mean selection ratio of the non-fallback commits and
 * the truly affected tests only a commit message named (some must be: fixture_history.c). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "fixture/fixture.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"

static const struct impact_candidate *candidate(const struct impact_result *r, const char *id)
{
	size_t lo = 0, hi = r->n_candidates;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->candidates[mid].id, id);
		if (c == 0)
			return &r->candidates[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

Test(impact_history, every_commit_of_a_small_history)
{
	char dir[] = "/tmp/sel-impact-hist-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct fixture_opts fo = {
		.out = dir,
		.scale = FIXTURE_SMALL,
		.seed = getenv("SELECTOR_IMPACT_SEED")
			    ? strtoull(getenv("SELECTOR_IMPACT_SEED"), NULL, 10)
			    : 7,
		.no_checkout = 1,
	};
	struct fixture_stats st;
	cr_assert_eq(fixture_generate(&fo, &st), 0, "%s", err_last());
	char path[512];
	snprintf(path, sizeof(path), "%s/.ground_truth/commits.jsonl", dir);
	FILE *fp = fopen(path, "r");
	cr_assert_not_null(fp);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	size_t commits = 0, fallbacks = 0, truth_total = 0, truth_found = 0, missed_fallback = 0;
	size_t by_message = 0; /* truly affected tests only a commit message named */
	double ratio_sum = 0;
	size_t ratio_n = 0;
	char line[1 << 16];
	while (fgets(line, sizeof(line), fp)) {
		json_error_t je;
		json_t *c = json_loads(line, 0, &je);
		cr_assert_not_null(c, "%s", je.text);
		json_t *parents = json_object_get(c, "parents");
		if (json_array_size(parents) == 0) {
			json_decref(c);
			continue;
		}
		const char *id = json_string_value(json_object_get(c, "id"));
		const char *base = json_string_value(json_array_get(parents, 0));
		struct change_set *cs;
		cr_assert_eq(selector_changes_from_git(&cs, dir, base, id, NULL), 0, "%s",
			     err_last());
		struct catalog *cb, *ch;
		cr_assert_eq(selector_catalog_build(&cb, dir, base, cache), 0, "%s", err_last());
		cr_assert_eq(selector_catalog_build(&ch, dir, id, cache), 0, "%s", err_last());
		struct impact_result *r;
		cr_assert_eq(selector_impact_run(&r, cs, cb, ch, NULL), 0, "%s", err_last());
		commits++;
		bool truth_fb = json_is_true(json_object_get(c, "fallback")) ||
				json_is_true(json_object_get(c, "affected_all"));
		if (r->fallback) {
			fallbacks++;
		} else {
			if (truth_fb) {
				missed_fallback++;
				fprintf(
				    stderr,
				    "commit %.10s (%s): truth says fallback, selector did not\n",
				    id, json_string_value(json_object_get(c, "kind")));
			}
			ratio_sum +=
			    ch->n_tests ? (double)r->n_candidates / (double)ch->n_tests : 0;
			ratio_n++;
			json_t *aff = json_object_get(c, "affected");
			size_t k;
			json_t *v;
			json_array_foreach(aff, k, v)
			{
				truth_total++;
				const struct impact_candidate *ic =
				    candidate(r, json_string_value(v));
				if (ic && ic->n_reasons == 1 &&
				    ic->reasons[0].signal == IMPACT_MESSAGE)
					by_message++;
				if (ic)
					truth_found++;
				else
					fprintf(stderr, "commit %.10s (%s): missed %s\n", id,
						json_string_value(json_object_get(c, "kind")),
						json_string_value(v));
			}
		}
		selector_impact_result_destroy(r);
		selector_catalog_destroy(cb);
		selector_catalog_destroy(ch);
		selector_change_set_destroy(cs);
		json_decref(c);
	}
	fclose(fp);
	double recall = truth_total ? (double)truth_found / (double)truth_total : 1.0;
	printf("impact history: %zu commits, %zu fallback, recall %.4f (%zu/%zu), mean selection "
	       "%.4f over %zu non-fallback commits, %zu blobs scanned, %zu found by a message "
	       "alone\n",
	       commits, fallbacks, recall, truth_found, truth_total,
	       ratio_n ? ratio_sum / (double)ratio_n : 0.0, ratio_n,
	       selector_catalog_cache_scans(cache), by_message);
	selector_catalog_cache_destroy(cache);
	cr_assert_eq(test_rm_tree(dir), 0);
	cr_assert_gt(commits, 50);
	cr_expect_eq(missed_fallback, 0);
	cr_expect_geq(recall, 0.995, "recall %.4f", recall);
	cr_expect_geq(by_message, 1, "the generator's messages name tests (fixture_history.c)");
	cr_expect_leq(ratio_sum / (double)(ratio_n ? ratio_n : 1), 0.10);
}
