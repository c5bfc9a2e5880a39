/* The report's writers: golden JSON (exactly four stages with name/in/out, tests with id,
 * score, reasons and kernel_cases, drift, fallback, the changed files' count), the text funnel with
 * thousands separators, and --explain for a scheduled, a cut and an unknown test. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "select_helpers.h"

static void make(struct select_report *rep)
{
	selector_report_init(rep);
	add_eligible(rep, "test/test_b.py::TestB::test_two", "symbol", 1.5, 3, false);
	add_eligible(rep, "test/test_a.py::TestA::test_one", "test-edited", 1.0, 2, false);
	add_eligible(rep, "test/test_a.py::TestA::test_smoke", "import", 0.25, 0, true);
	rep->tests[1].mode = SPEC_MODE_MANDATORY_SUCCESS;
	rep->tests[1].listed = true;
	rep->tests[1].spec_entry = strdup("s.yaml:6");
	rep->tests[1].spec_why = strdup("listed");
	selector_report_set_front(rep, 52114, 7, 6020);
	rep->stages[2].in = 6020;
	rep->stages[2].out = 3;
	rep->drift = calloc(1, sizeof *rep->drift);
	rep->drift[0] = (struct select_drift){ SELECT_DRIFT_STALE, strdup("TestA::test_gone"),
					       strdup("s.yaml:10"), SPEC_MODE_UNSET };
	rep->n_drift = rep->cap_drift = 1;
	struct select_budget b = { SELECT_BUDGET_COUNT, 2 }; /* the smoke test counts */
	cr_assert_eq(selector_stage4_run(rep, NULL, NULL, &b, 2), 0);
}

static const char GOLDEN[] =
    "{\"changed_files\":7,\"drift\":[{\"kind\":\"stale\",\"mode\":null,\"test\":\"TestA::test_"
    "gone\","
    "\"where\":\"s.yaml:10\"}],\"estimate_seconds\":0.6,"
    "\"fallback\":{\"active\":false,\"reason\":null},"
    "\"shards\":[{\"seconds\":0.5,\"tests\":[\"test/test_a.py::TestA::test_smoke\"]},"
    "{\"seconds\":0.1,\"tests\":[\"test/test_a.py::TestA::test_one\"]}],"
    "\"stages\":[{\"in\":52114,\"name\":\"changes\",\"out\":52114},"
    "{\"in\":52114,\"name\":\"impact\",\"out\":6020},"
    "{\"in\":6020,\"name\":\"eligibility\",\"out\":3},"
    "{\"in\":3,\"name\":\"budget\",\"out\":2}],"
    "\"tests\":[{\"id\":\"test/test_a.py::TestA::test_one\",\"kernel_cases\":2,"
    "\"reasons\":[{\"kind\":\"test-edited\",\"score\":1.0,\"text\":\"hand-made\"}],\"score\":4.0},"
    "{\"id\":\"test/test_a.py::TestA::test_smoke\",\"kernel_cases\":0,"
    "\"reasons\":[{\"kind\":\"import\",\"score\":0.25,\"text\":\"hand-made\"}],"
    "\"score\":0.25}]}";

Test(report, golden_json)
{
	struct select_report rep;
	make(&rep);
	char *s = selector_report_json(&rep);
	cr_assert_not_null(s);
	cr_assert_str_eq(s, GOLDEN);
	free(s);
	selector_report_set_fallback(&rep, "setup.py changed");
	s = selector_report_json(&rep);
	cr_assert_not_null(
	    strstr(s, "\"fallback\":{\"active\":true,\"reason\":\"setup.py changed\"}"));
	free(s);
	selector_report_finish(&rep);
}

static char *capture(void (*fn)(const struct select_report *, const char *, FILE *, int *),
		     const struct select_report *rep, const char *arg, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	fn(rep, arg, f, rc);
	fclose(f);
	return buf;
}

static void do_text(const struct select_report *rep, const char *arg, FILE *f, int *rc)
{
	(void)arg;
	*rc = selector_report_write_text(rep, f);
}

static void do_explain(const struct select_report *rep, const char *arg, FILE *f, int *rc)
{
	*rc = selector_report_explain(rep, arg, f);
}

Test(report, text_funnel)
{
	struct select_report rep;
	int rc;
	make(&rep);
	char *s = capture(do_text, &rep, NULL, &rc);
	cr_assert_eq(rc, 0);
	const char *want =
	    "52,114 tests -> 6,020 impacted -> 3 eligible -> 2 scheduled (est. 0.6 s)\n"
	    "    1. test/test_a.py::TestA::test_one  score 4.00  2 kernel cases  shard 1\n"
	    "         test-edited (1.00): hand-made\n"
	    "    3. test/test_a.py::TestA::test_smoke  score 0.25  0 kernel cases  shard 0\n"
	    "         import (0.25): hand-made\n"
	    "         smoke: always run\n"
	    "drift: spec entry TestA::test_gone matches no upstream test (s.yaml:10)\n"
	    "shard 0: 1 tests, est. 0.5 s\n"
	    "shard 1: 1 tests, est. 0.1 s\n";
	cr_assert_str_eq(s, want);
	free(s);
	selector_report_finish(&rep);
}

Test(report, explain_each_stage)
{
	struct select_report rep;
	int rc;
	make(&rep);
	char *s = capture(do_explain, &rep, "test/test_a.py::TestA::test_one", &rc);
	cr_assert_eq(rc, 0);
	cr_assert_not_null(strstr(s, "stage 1 changes: 7 files changed\n"), "%s", s);
	cr_assert_not_null(strstr(s, "stage 2 impact: candidate, 1 reason\n"), "%s", s);
	cr_assert_not_null(strstr(s, "stage 3 eligibility: eligible, mode mandatory_success, "
				     "listed at s.yaml:6 (listed)\n"),
			   "%s", s);
	cr_assert_not_null(strstr(s, "stage 4 budget: rank 1 of 3, score 4.00, cost 0.10 s: "
				     "scheduled, within budget\n"),
			   "%s", s);
	free(s);
	s = capture(do_explain, &rep, "test/test_b.py::TestB::test_two", &rc);
	cr_assert_not_null(strstr(s, "rank 2 of 3, score 3.00, cost 0.15 s: not scheduled, "
				     "over budget\n"),
			   "%s", s);
	free(s);
	struct select_test *d = &rep.tests[rep.n_tests - 1];
	d->fate = SELECT_IMPACTED; /* as if stage 3 had dropped it */
	d->spec_why = strdup("mode skip");
	d->spec_entry = strdup("s.yaml:9");
	s = capture(do_explain, &rep, d->id, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_not_null(strstr(s, "stage 3 eligibility: dropped: mode skip at s.yaml:9\n"), "%s",
			   s);
	cr_assert_null(strstr(s, "stage 4"), "%s", s);
	free(s);
	s = capture(do_explain, &rep, "test/nope.py::T::test_x", &rc);
	cr_assert_eq(rc, ERR_NOTFOUND);
	cr_assert_not_null(strstr(s, "stage 2 impact: not a candidate"), "%s", s);
	free(s);
	selector_report_finish(&rep);
}

Test(report, fmt_count)
{
	char b[32];
	cr_assert_str_eq(selector_fmt_count(0, b, sizeof b), "0");
	cr_assert_str_eq(selector_fmt_count(999, b, sizeof b), "999");
	cr_assert_str_eq(selector_fmt_count(1000, b, sizeof b), "1,000");
	cr_assert_str_eq(selector_fmt_count(52114, b, sizeof b), "52,114");
	cr_assert_str_eq(selector_fmt_count(1234567, b, sizeof b), "1,234,567");
	cr_assert_str_eq(selector_fmt_count(1234567, b, 4), "1,2");
}
