/* funnel_select on a range of the upstream's history: the four stages' counts chain, the
 * scheduled tests' kernel cases (and only theirs) come out in rank order, every case the report
 * keeps belongs to an eligible test; variants, the budget and the checkpoint; bad revisions. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "funnel/funnel.h"
#include "upstream.h"

#define BASE "HEAD~2" /* HEAD~2..HEAD: a traced change (upstream.h) */
#define HEAD "HEAD"

struct fixture {
	struct funnel_specs *specs;
	struct funnel_cache *cache;
	struct funnel_selection sel;
};

static void open_fixture(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	f->specs = up_specs(NULL);
	cr_assert_eq(funnel_cache_create(&f->cache, NULL), 0, "%s", err_last());
}

static void close_fixture(struct fixture *f)
{
	funnel_selection_finish(&f->sel);
	funnel_cache_destroy(f->cache);
	funnel_specs_destroy(f->specs);
}

/* What the range must hold for the clauses below to say something. */
static void expect_a_traced_range(const struct funnel_selection *sel)
{
	size_t with_cases = 0;
	for (size_t i = 0; i < sel->rep.n_tests; i++)
		with_cases += sel->rep.tests[i].fate == SELECT_SCHEDULED &&
			      sel->rep.tests[i].kernel_cases > 0;
	cr_assert(!sel->rep.fallback, "the range is traced, not a fallback: %s",
		  sel->rep.fallback_reason);
	cr_assert_geq(with_cases, 2, "two scheduled tests with kernel cases");
	cr_assert_gt(sel->rep.n_tests, scheduled_tests(&sel->rep), "some candidates fell out");
}

Test(funnel_select, stage_counts_chain)
{
	struct fixture f;
	open_fixture(&f);
	up_select(&f.sel, f.specs, f.cache, BASE, HEAD, NULL);
	expect_a_traced_range(&f.sel);
	const struct select_report *rep = &f.sel.rep;
	for (int s = 0; s + 1 < SELECT_STAGES; s++)
		cr_expect_eq(rep->stages[s].out, rep->stages[s + 1].in,
			     "stage %d out %zu, stage %d in %zu", s + 1, rep->stages[s].out, s + 2,
			     rep->stages[s + 1].in);
	size_t eligible = 0;
	for (size_t i = 0; i < rep->n_tests; i++)
		eligible += rep->tests[i].fate >= SELECT_ELIGIBLE;
	cr_expect_eq(rep->stages[1].out, rep->n_tests, "the report keeps every candidate");
	cr_expect_eq(rep->stages[2].out, eligible);
	cr_expect_eq(rep->stages[3].out, scheduled_tests(rep));
	cr_expect_gt(rep->stages[0].in, rep->stages[1].out, "a traced change narrows");
	cr_expect_gt(rep->changed_files, 0);
	close_fixture(&f);
}

Test(funnel_select, scheduled_tests_cases_come_in_rank_order_and_nothing_else)
{
	struct fixture f;
	open_fixture(&f);
	up_select(&f.sel, f.specs, f.cache, BASE, HEAD, NULL);
	expect_a_traced_range(&f.sel);
	expect_cases_follow_the_schedule(&f.sel);
	cr_expect_gt(f.sel.n_cases, 0);
	close_fixture(&f);
}

Test(funnel_select, every_case_of_the_report_belongs_to_an_eligible_test)
{
	struct fixture f;
	open_fixture(&f);
	up_select(&f.sel, f.specs, f.cache, BASE, HEAD, NULL);
	expect_a_traced_range(&f.sel);
	const struct select_report *rep = &f.sel.rep;
	size_t n = rep->cases.n;
	char *owner = calloc(n + 1, 1);
	cr_assert_not_null(owner);
	for (size_t i = 0; i < rep->n_tests; i++) {
		const struct select_test *t = &rep->tests[i];
		if (t->fate < SELECT_ELIGIBLE) {
			cr_expect_eq(t->kernel_cases, 0, "%s fell out at stage 3: no case", t->id);
			continue;
		}
		cr_assert_leq(t->case_first + t->kernel_cases, n, "%s: its cases are kept", t->id);
		for (size_t j = 0; j < t->kernel_cases; j++) {
			const struct spec_case *c = &rep->cases.v[t->case_first + j];
			cr_expect_eq(owner[t->case_first + j], 0, "case %s has one owner", c->id);
			owner[t->case_first + j] = 1;
			cr_expect_str_eq(c->test_id, t->id);
		}
	}
	for (size_t k = 0; k < n; k++)
		cr_expect_eq(owner[k], 1, "case %zu (%s of %s) belongs to an eligible test", k,
			     rep->cases.v[k].id, rep->cases.v[k].test_id);
	cr_expect_gt(rep->n_tests, scheduled_tests(rep), "some tests fell out");
	free(owner);
	close_fixture(&f);
}

Test(funnel_select, variants_change_only_the_per_variant_decisions)
{
	struct fixture f;
	open_fixture(&f);
	up_select(&f.sel, f.specs, f.cache, BASE, HEAD, NULL);
	struct funnel_selection v;
	struct funnel_select_opts o = { .variants = true };
	up_select(&v, f.specs, f.cache, BASE, HEAD, &o);
	expect_same_selection(&f.sel, &v, "with and without variants");
	size_t decided = 0;
	for (size_t i = 0; i < f.sel.rep.n_tests; i++) {
		cr_expect_eq(f.sel.rep.tests[i].n_variants_all, 0, "%s: no variants asked",
			     f.sel.rep.tests[i].id);
		decided += v.rep.tests[i].n_variants_all > 0;
	}
	cr_expect_gt(decided, 0, "asked, some candidate's variants are decided one by one");
	funnel_selection_finish(&v);
	close_fixture(&f);
}

/* ---- the checkpoint ---- */

struct checkpoints {
	enum funnel_step seen[8];
	size_t n;
	enum funnel_step fail_at; /* 0: never */
	int code;
};

static int checkpoint(void *ctx, enum funnel_step step)
{
	struct checkpoints *c = ctx;
	if (c->n < 8)
		c->seen[c->n++] = step;
	return step == c->fail_at ? c->code : 0;
}

static void expect_empty(const struct funnel_selection *sel)
{
	cr_expect_eq(sel->rep.n_tests, 0);
	cr_expect_eq(sel->rep.cases.n, 0);
	cr_expect_eq(sel->rep.kernel_cases, 0);
	cr_expect_null(sel->cases);
	cr_expect_eq(sel->n_cases, 0);
	for (int s = 0; s < SELECT_STAGES; s++)
		cr_expect(sel->rep.stages[s].in == 0 && sel->rep.stages[s].out == 0,
			  "stage %d counts nothing", s + 1);
}

Test(funnel_select, checkpoint_is_called_after_changes_then_impact)
{
	struct fixture f;
	open_fixture(&f);
	struct checkpoints c = { 0 };
	struct funnel_select_opts o = { .checkpoint = checkpoint, .checkpoint_ctx = &c };
	up_select(&f.sel, f.specs, f.cache, BASE, HEAD, &o);
	cr_assert_eq(c.n, 2);
	cr_expect_eq(c.seen[0], FUNNEL_STEP_CHANGES);
	cr_expect_eq(c.seen[1], FUNNEL_STEP_IMPACT);
	close_fixture(&f);
}

Test(funnel_select, a_checkpoints_negative_code_ends_the_selection_empty)
{
	struct fixture f;
	open_fixture(&f);
	static const enum funnel_step steps[] = { FUNNEL_STEP_CHANGES, FUNNEL_STEP_IMPACT };
	for (size_t i = 0; i < 2; i++) {
		struct checkpoints c = { .fail_at = steps[i], .code = ERR_BADSTATE };
		struct funnel_select_opts o = { .checkpoint = checkpoint, .checkpoint_ctx = &c };
		struct funnel_change ch = { .repo = up_dir(), .base = BASE, .head = HEAD };
		cr_expect_eq(funnel_select(&f.sel, &ch, f.specs, f.cache, &o), ERR_BADSTATE,
			     "ended at step %d", steps[i]);
		cr_expect_eq(c.n, i + 1, "no step after the one that said stop");
		expect_empty(&f.sel);
		funnel_selection_finish(&f.sel);
		funnel_selection_finish(&f.sel); /* finishing again is harmless */
		expect_empty(&f.sel);
	}
	close_fixture(&f);
}

Test(funnel_select, a_checkpoints_positive_return_is_no_stop)
{
	struct fixture f;
	open_fixture(&f);
	up_select(&f.sel, f.specs, f.cache, BASE, HEAD, NULL);
	struct checkpoints c = { .fail_at = FUNNEL_STEP_CHANGES, .code = 1 };
	struct funnel_select_opts o = { .checkpoint = checkpoint, .checkpoint_ctx = &c };
	struct funnel_selection again;
	struct funnel_change ch = { .repo = up_dir(), .base = BASE, .head = HEAD };
	cr_expect_eq(funnel_select(&again, &ch, f.specs, f.cache, &o), 0,
		     "only a negative return ends the selection");
	cr_expect_eq(c.n, 2);
	expect_same_selection(&f.sel, &again, "past a positive checkpoint");
	funnel_selection_finish(&again);
	close_fixture(&f);
}

/* ---- bad input ---- */

Test(funnel_select, an_unknown_revision_is_notfound_naming_it)
{
	struct fixture f;
	open_fixture(&f);
	const char *revs[][2] = { { BASE, "no-such-branch" }, { "no-such-tag", HEAD } };
	for (size_t i = 0; i < 2; i++) {
		struct funnel_change ch = { .repo = up_dir(),
					    .base = revs[i][0],
					    .head = revs[i][1] };
		const char *bad = i == 0 ? revs[i][1] : revs[i][0];
		cr_expect_eq(funnel_select(&f.sel, &ch, f.specs, f.cache, NULL), ERR_NOTFOUND,
			     "%s: %s", bad, err_last());
		cr_expect(strstr(err_last(), bad), "names %s: %s", bad, err_last());
		expect_empty(&f.sel);
		funnel_selection_finish(&f.sel);
	}
	close_fixture(&f);
}

Test(funnel_select, a_directory_that_is_no_repository_is_bad_input)
{
	struct fixture f;
	open_fixture(&f);
	char dir[64];
	tmp_make(dir, sizeof dir, "norepo");
	struct funnel_change ch = { .repo = dir, .base = BASE, .head = HEAD };
	int rc = funnel_select(&f.sel, &ch, f.specs, f.cache, NULL);
	cr_expect(rc == ERR_NOTFOUND || rc == ERR_INVAL, "%d: %s", rc, err_last());
	cr_expect(strstr(err_last(), dir), "names it: %s", err_last());
	expect_empty(&f.sel);
	tmp_remove(dir);
	close_fixture(&f);
}
