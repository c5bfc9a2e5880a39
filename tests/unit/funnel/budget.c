/* Stage 4 through the funnel: a budget keeps a prefix of the ranking (never dropping the smoke
 * set) and sel.cases shrinks to the cases of what it keeps; a shard plan places every scheduled
 * test. On the empty tree..HEAD, which brings every test of the upstream in. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "funnel/funnel.h"
#include "upstream.h"

#define BASE NULL /* the empty tree: every test is new */

struct fixture {
	struct funnel_specs *specs;
	struct funnel_cache *cache;
	struct funnel_selection all; /* no budget */
};

static void open_fixture(struct fixture *f, const char *specs_path)
{
	f->specs = up_specs(specs_path);
	cr_assert_eq(funnel_cache_create(&f->cache, NULL), 0, "%s", err_last());
	up_select(&f->all, f->specs, f->cache, BASE, "HEAD", NULL);
	cr_assert_gt(scheduled_tests(&f->all.rep), 6, "enough tests to cut");
}

static void close_fixture(struct fixture *f)
{
	funnel_selection_finish(&f->all);
	funnel_cache_destroy(f->cache);
	funnel_specs_destroy(f->specs);
}

static struct funnel_select_opts count_budget(double n)
{
	return (struct funnel_select_opts){ .budget = { SELECT_BUDGET_COUNT, n } };
}

/* The scheduled cases of `cut` are the first ones of `all`'s. */
static void expect_a_prefix(const struct funnel_selection *cut, const struct funnel_selection *all)
{
	cr_assert_leq(cut->n_cases, all->n_cases);
	for (size_t k = 0; k < cut->n_cases; k++)
		cr_expect_str_eq(cut->cases[k]->id, all->cases[k]->id, "case %zu", k);
}

Test(funnel_budget, a_budget_of_n_tests_schedules_the_n_best_ranked)
{
	struct fixture f;
	open_fixture(&f, NULL);
	struct funnel_select_opts o = count_budget(3);
	struct funnel_selection cut;
	up_select(&cut, f.specs, f.cache, BASE, "HEAD", &o);
	cr_expect_eq(scheduled_tests(&cut.rep), 3);
	cr_expect_eq(cut.rep.stages[3].out, 3);
	cr_expect_eq(cut.rep.stages[3].in, f.all.rep.stages[3].in, "the budget cuts at stage 4");
	for (size_t i = 0; i < cut.rep.n_tests; i++) {
		const struct select_test *t = &cut.rep.tests[i];
		if (t->fate == SELECT_SCHEDULED)
			cr_expect_leq(t->rank, 3, "%s ranks %zu", t->id, t->rank);
	}
	expect_cases_follow_the_schedule(&cut);
	expect_a_prefix(&cut, &f.all);
	cr_expect_lt(cut.n_cases, f.all.n_cases, "the cut tests' cases are gone");
	funnel_selection_finish(&cut);
	close_fixture(&f);
}

Test(funnel_budget, a_budget_in_seconds_keeps_the_estimate_within_it)
{
	struct fixture f;
	open_fixture(&f, NULL);
	double half = f.all.rep.est_seconds / 2;
	struct funnel_select_opts o = { .budget = { SELECT_BUDGET_SECONDS, half } };
	struct funnel_selection cut;
	up_select(&cut, f.specs, f.cache, BASE, "HEAD", &o);
	cr_expect_leq(cut.rep.est_seconds, half + 1e-9);
	cr_expect_lt(scheduled_tests(&cut.rep), scheduled_tests(&f.all.rep));
	expect_cases_follow_the_schedule(&cut);
	expect_a_prefix(&cut, &f.all);
	funnel_selection_finish(&cut);
	close_fixture(&f);
}

/* The upstream's specs with one more entry, first for its file: `test_id` labelled smoke. */
static void smoke_specs(char *path, size_t size, const char *dir, const char *test_id)
{
	char src[256], file[256], entry[512];
	snprintf(src, sizeof src, "%s/spyre/specs/upstream_tests.yaml", up_dir());
	const char *sep = strstr(test_id, "::");
	cr_assert_not_null(sep);
	snprintf(file, sizeof file, "path: ${TORCH_ROOT}/%.*s\n", (int)(sep - test_id), test_id);
	char *text = NULL;
	size_t len = 0;
	cr_assert_eq(fs_read_file(&text, &len, src, 1 << 20), 0, "%s", err_last());
	char *at = strstr(text, file);
	cr_assert_not_null(at, "the specs list %s", file);
	char *tests = strstr(at, "tests:\n"), *next = strstr(at + 1, "- path:");
	cr_assert(tests && (!next || tests < next), "the entry of %s has tests", file);
	int indent = 0;
	while (tests - indent > text && tests[-indent - 1] == ' ')
		indent++;
	snprintf(entry, sizeof entry, "%*s  - names: [%s]\n%*s    labels: [smoke]\n", indent, "",
		 sep + 2, indent, "");
	char *after = tests + strlen("tests:\n");
	char *out = malloc(len + strlen(entry) + 1);
	cr_assert_not_null(out);
	size_t head = (size_t)(after - text);
	memcpy(out, text, head);
	strcpy(out + head, entry);
	strcat(out, after);
	tmp_write(path, size, dir, "smoke.yaml", out);
	free(out);
	free(text);
}

Test(funnel_budget, the_smoke_set_is_scheduled_whatever_the_budget)
{
	struct fixture f;
	open_fixture(&f, NULL);
	/* the last-ranked eligible test becomes smoke */
	const struct select_test *last = &f.all.rep.tests[f.all.rep.stages[3].in - 1];
	char dir[64], path[128], id[512];
	snprintf(id, sizeof id, "%s", last->id);
	tmp_make(dir, sizeof dir, "smoke");
	smoke_specs(path, sizeof path, dir, id);
	close_fixture(&f);
	open_fixture(&f, path);
	const struct select_test *smoke = NULL;
	for (size_t i = 0; i < f.all.rep.n_tests; i++)
		if (!strcmp(f.all.rep.tests[i].id, id))
			smoke = &f.all.rep.tests[i];
	cr_assert(smoke && smoke->smoke && smoke->fate == SELECT_SCHEDULED, "%s is smoke", id);
	for (double n = 0; n <= 2; n++) {
		struct funnel_select_opts o = count_budget(n);
		struct funnel_selection cut;
		up_select(&cut, f.specs, f.cache, BASE, "HEAD", &o);
		size_t want = n < 1 ? 1 : (size_t)n; /* the smoke test, over a budget of none */
		cr_expect_eq(scheduled_tests(&cut.rep), want, "budget %.0f", n);
		const struct select_test *t = selector_report_find(&cut.rep, id);
		cr_expect(t && t->fate == SELECT_SCHEDULED, "budget %.0f keeps the smoke test", n);
		expect_cases_follow_the_schedule(&cut);
		funnel_selection_finish(&cut);
	}
	close_fixture(&f);
	tmp_remove(dir);
}

Test(funnel_budget, shards_place_every_scheduled_test_on_one_shard)
{
	struct fixture f;
	open_fixture(&f, NULL);
	struct funnel_select_opts o = { .shards = 3 };
	struct funnel_selection plan;
	up_select(&plan, f.specs, f.cache, BASE, "HEAD", &o);
	cr_assert_eq(plan.rep.n_shards, 3);
	size_t placed = 0, on[3] = { 0 };
	for (size_t i = 0; i < plan.rep.n_tests; i++) {
		const struct select_test *t = &plan.rep.tests[i];
		if (t->fate != SELECT_SCHEDULED) {
			cr_expect_eq(t->shard, -1, "%s is on no shard", t->id);
			continue;
		}
		cr_assert(t->shard >= 0 && t->shard < 3, "%s: shard %d", t->id, t->shard);
		on[t->shard]++;
		placed++;
	}
	cr_expect_eq(placed, scheduled_tests(&plan.rep));
	for (int s = 0; s < 3; s++)
		cr_expect_eq(plan.rep.shards[s].n_tests, on[s], "shard %d", s);
	expect_same_selection(&f.all, &plan, "with and without a shard plan");
	funnel_selection_finish(&plan);
	close_fixture(&f);
}
