/* Stage 4: ranking (weights, ties by id, failed boosted, flaky penalised), costs, budgets by
 * count, seconds and percent with the smoke set always kept, and shard plans, each compared with
 * a golden listing of `rank id score seconds fate shard`. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "select_helpers.h"

/* Six tests: two tie on score (ids decide), one smoke at the bottom, one with history. */
static void make(struct select_report *rep)
{
	selector_report_init(rep);
	add_eligible(rep, "t/b.py::B::test_z", "test-edited", 1.0, 10, false); /* 4.0, 0.5 s */
	add_eligible(rep, "t/a.py::A::test_y", "symbol", 2.0, 4, false);       /* 4.0, 0.2 s */
	add_eligible(rep, "t/a.py::A::test_x", "opdb", 1.0, 0, false);         /* 3.0, 0.5 s */
	add_eligible(rep, "t/c.py::C::test_s", "path-rule", 0.1, 2, true);     /* 0.1, smoke */
	add_eligible(rep, "t/c.py::C::test_f", "symbol", 1.0, 20, false);      /* 2 + 2 (failed) */
	add_eligible(rep, "t/c.py::C::test_k", "mystery", 5.0, 1, false); /* 5 * 1, flaky: 2.5 */
	selector_report_set_front(rep, 100, 3, 6);
	rep->stages[2].in = 6;
	rep->stages[2].out = 6;
}

static struct select_history_entry hist_v[] = {
	{ "t/c.py::C::test_k", false, true, 0 },
	{ "t/c.py::C::test_f", true, false, 3.0 },
};
static struct select_history hist = { hist_v, 2 };

static const char *listing(const struct select_report *rep)
{
	static char buf[4096];
	size_t n = 0;
	for (size_t i = 0; i < rep->n_tests; i++) {
		const struct select_test *t = &rep->tests[i];
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%zu %s %.2f %.2f %s %d\n", t->rank,
				      t->id, t->score, t->seconds,
				      t->fate == SELECT_SCHEDULED ? "run" : "cut", t->shard);
	}
	return buf;
}

static void run(struct select_report *rep, const char *budget, size_t shards)
{
	struct select_budget b = { 0 };
	if (budget)
		cr_assert_eq(selector_budget_parse(&b, budget), 0, "%s", err_last());
	selector_history_sort(&hist);
	cr_assert_eq(selector_stage4_run(rep, NULL, &hist, &b, shards), 0, "%s", err_last());
	cr_assert_eq(rep->stages[3].in, rep->stages[2].out);
}

Test(stage4, rank_without_budget)
{
	struct select_report rep;
	make(&rep);
	run(&rep, NULL, 0);
	cr_assert_str_eq(listing(&rep), "1 t/a.py::A::test_y 4.00 0.20 run -1\n"
					"2 t/b.py::B::test_z 4.00 0.50 run -1\n"
					"3 t/c.py::C::test_f 4.00 3.00 run -1\n"
					"4 t/a.py::A::test_x 3.00 0.50 run -1\n"
					"5 t/c.py::C::test_k 2.50 0.05 run -1\n"
					"6 t/c.py::C::test_s 0.10 0.10 run -1\n");
	cr_assert_eq(rep.stages[3].out, 6);
	cr_assert_float_eq(rep.est_seconds, 4.35, 1e-9);
	cr_assert_eq(rep.kernel_cases, 37);
	cr_assert(rep.tests[2].failed_before);
	cr_assert(rep.tests[4].flaky);
	selector_report_finish(&rep);
}

Test(stage4, budget_count_keeps_smoke)
{
	struct select_report rep;
	make(&rep);
	run(&rep, "3", 0);
	cr_assert_str_eq(listing(&rep), "1 t/a.py::A::test_y 4.00 0.20 run -1\n"
					"2 t/b.py::B::test_z 4.00 0.50 run -1\n"
					"3 t/c.py::C::test_f 4.00 3.00 cut -1\n"
					"4 t/a.py::A::test_x 3.00 0.50 cut -1\n"
					"5 t/c.py::C::test_k 2.50 0.05 cut -1\n"
					"6 t/c.py::C::test_s 0.10 0.10 run -1\n");
	cr_assert_eq(rep.stages[3].out, 3);
	cr_assert_str_eq(rep.tests[5].why4, "smoke set (always run)");
	cr_assert_str_eq(rep.tests[2].why4, "over budget");
	selector_report_finish(&rep);
}

Test(stage4, budget_zero_still_runs_smoke)
{
	struct select_report rep;
	make(&rep);
	run(&rep, "0", 0);
	cr_assert_eq(rep.stages[3].out, 1);
	cr_assert_eq(rep.tests[5].fate, SELECT_SCHEDULED);
	selector_report_finish(&rep);
}

Test(stage4, budget_seconds_is_a_prefix)
{
	struct select_report rep;
	make(&rep);
	run(&rep, "1.5s", 0);
	/* smoke 0.1 + 0.2 + 0.5 = 0.8; test_f (3 s) does not fit, and the cut is a prefix */
	cr_assert_str_eq(listing(&rep), "1 t/a.py::A::test_y 4.00 0.20 run -1\n"
					"2 t/b.py::B::test_z 4.00 0.50 run -1\n"
					"3 t/c.py::C::test_f 4.00 3.00 cut -1\n"
					"4 t/a.py::A::test_x 3.00 0.50 cut -1\n"
					"5 t/c.py::C::test_k 2.50 0.05 cut -1\n"
					"6 t/c.py::C::test_s 0.10 0.10 run -1\n");
	cr_assert_float_eq(rep.est_seconds, 0.8, 1e-9);
	selector_report_finish(&rep);
}

Test(stage4, budget_percent_rounds_up)
{
	struct select_report rep;
	make(&rep);
	run(&rep, "50%", 0); /* 3 of 6, the smoke test among them */
	cr_assert_eq(rep.stages[3].out, 3);
	cr_assert_eq(rep.tests[2].fate, SELECT_ELIGIBLE);
	selector_report_finish(&rep);
	make(&rep);
	run(&rep, "10%", 0); /* ceil(0.6) = 1: the smoke test fills it */
	cr_assert_eq(rep.stages[3].out, 1);
	selector_report_finish(&rep);
}

Test(stage4, shards_longest_first_least_loaded)
{
	struct select_report rep;
	make(&rep);
	run(&rep, NULL, 2);
	/* 3.0 -> 0; 0.5 (A::x) -> 1; 0.5 (B::z) -> 1; 0.2 -> 1; 0.1 -> 1; 0.05 -> 1 */
	cr_assert_str_eq(listing(&rep), "1 t/a.py::A::test_y 4.00 0.20 run 1\n"
					"2 t/b.py::B::test_z 4.00 0.50 run 1\n"
					"3 t/c.py::C::test_f 4.00 3.00 run 0\n"
					"4 t/a.py::A::test_x 3.00 0.50 run 1\n"
					"5 t/c.py::C::test_k 2.50 0.05 run 1\n"
					"6 t/c.py::C::test_s 0.10 0.10 run 1\n");
	cr_assert_eq(rep.n_shards, 2);
	cr_assert_float_eq(rep.shards[0].seconds, 3.0, 1e-9);
	cr_assert_float_eq(rep.shards[1].seconds, 1.35, 1e-9);
	cr_assert_eq(rep.shards[1].n_tests, 5);
	selector_report_finish(&rep);
}

Test(stage4, shards_balance_equal_tests)
{
	struct select_report rep;
	selector_report_init(&rep);
	char id[32];
	for (int i = 0; i < 9; i++) {
		snprintf(id, sizeof id, "t/x.py::X::test_%d", i);
		add_eligible(&rep, id, "test-edited", 1.0, (size_t)(i + 1), false);
	}
	cr_assert_eq(selector_stage4_run(&rep, NULL, NULL, NULL, 3), 0);
	/* 0.45 -> w0, 0.40 -> w1, 0.35 -> w2, 0.30 -> w2, 0.25 -> w1, 0.20 -> w0 (all 0.65),
	 * 0.15 -> w0 (the lowest index among equals), 0.10 -> w1, 0.05 -> w2 */
	cr_assert_float_eq(rep.shards[0].seconds, 0.80, 1e-9);
	cr_assert_float_eq(rep.shards[1].seconds, 0.75, 1e-9);
	cr_assert_float_eq(rep.shards[2].seconds, 0.70, 1e-9);
	cr_assert_eq(rep.shards[0].n_tests, 3);
	cr_assert_eq(selector_report_find(&rep, "t/x.py::X::test_2")->shard, 0);
	cr_assert_eq(selector_report_find(&rep, "t/x.py::X::test_0")->shard, 2);
	selector_report_finish(&rep);
}

Test(stage4, weights_from_config)
{
	static const struct select_weight w[] = { { "symbol", 10.0 } };
	struct select_config cfg;
	selector_config_default(&cfg);
	cfg.weights = w;
	cfg.n_weights = 1;
	cfg.default_weight = 0.0;
	struct select_report rep;
	make(&rep);
	cr_assert_eq(selector_stage4_run(&rep, &cfg, NULL, NULL, 0), 0);
	cr_assert_str_eq(rep.tests[0].id, "t/a.py::A::test_y"); /* 20 */
	cr_assert_str_eq(rep.tests[1].id, "t/c.py::C::test_f"); /* 10 */
	cr_assert_float_eq(rep.tests[2].score, 0.0, 1e-12);
	cr_assert_str_eq(rep.tests[2].id, "t/a.py::A::test_x"); /* 0: by id */
	selector_report_finish(&rep);
}

Test(stage4, budget_parse)
{
	struct select_budget b;
	cr_assert_eq(selector_budget_parse(&b, "40"), 0);
	cr_assert_eq(b.kind, SELECT_BUDGET_COUNT);
	cr_assert_float_eq(b.value, 40, 0);
	cr_assert_eq(selector_budget_parse(&b, "90s"), 0);
	cr_assert_eq(b.kind, SELECT_BUDGET_SECONDS);
	cr_assert_eq(selector_budget_parse(&b, "2.5%"), 0);
	cr_assert_eq(b.kind, SELECT_BUDGET_PERCENT);
	cr_assert_float_eq(b.value, 2.5, 0);
	const char *bad[] = { "", "s", "%", "-1", "101%", "1.5", "ten", "5m", "1e400s" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(selector_budget_parse(&b, bad[i]), ERR_INVAL, "'%s'", bad[i]);
	cr_assert_eq(selector_stage4_run(&(struct select_report){ 0 }, NULL, NULL, NULL, 5000),
		     ERR_INVAL);
}
