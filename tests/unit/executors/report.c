/* The reports against golden files (tests/fixtures/executors/golden.*): one case of every
 * outcome, a message with characters XML must escape, a non-finite error, a flaky case, an
 * adapter, and a case a stopped run never reached (in no report). SPYRE_UPDATE_GOLDEN=1
 * rewrites the goldens. tests/cli/run.sh reads them with Python's xml.etree and json and checks
 * that they agree case by case. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "executors/report.h"

#define GOLDEN_DIR SPYRE_TEST_FIXTURES "/executors"

static struct exec_case cases[12];
static struct exec_result res[12];

static size_t build(void)
{
	const struct {
		const char *test, *op;
		enum exec_outcome o;
		const char *msg;
	} rows[] = {
		{ "test/test_binary_ufuncs.py::TestBinaryUfuncs::test_add", "add", EXEC_PASSED,
		  "" },
		{ "test/test_binary_ufuncs.py::TestBinaryUfuncs::test_div", "div", EXEC_FAILED,
		  "3 elements differ beyond atol 0.1 + rtol 0.1; a < b & \"c\" 'd'" },
		{ "test/test_binary_ufuncs.py::TestBinaryUfuncs::test_mm", "mm", EXEC_ERROR,
		  "the emulator refused: mm: inner dimensions differ" },
		{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_mish", "nn.functional.mish",
		  EXEC_SKIPPED, "no emulator op for this name" },
		{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_log", "log", EXEC_XFAILED,
		  "2 elements differ" },
		{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_exp", "exp", EXEC_XPASSED, "" },
		{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_tanh", "tanh", EXEC_CRASHED,
		  "worker killed by SIGSEGV (Segmentation fault)" },
		{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_sqrt", "sqrt", EXEC_TIMED_OUT,
		  "no result within 120 s: the worker was killed" },
		{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_abs", "abs", EXEC_FLAKY,
		  "passed on retry; first failed: 1 element differs" },
		{ "test/test_nn.py::TestNN::test_softsign", "nn.functional.softsign", EXEC_PASSED,
		  "via adapter softsign" },
		{ "test/test_nn.py::TestNN::test_never", "relu", EXEC_NOT_RUN, "" },
	};
	size_t n = sizeof(rows) / sizeof(rows[0]);
	memset(cases, 0, sizeof(cases));
	memset(res, 0, sizeof(res));
	for (size_t i = 0; i < n; i++) {
		struct exec_case *c = &cases[i];
		struct exec_result *r = &res[i];
		snprintf(c->id, sizeof(c->id), "%016zx", i + 0xc0de);
		snprintf(c->test_id, sizeof(c->test_id), "%s", rows[i].test);
		snprintf(c->op, sizeof(c->op), "%s", rows[i].op);
		c->nin = i % 2 ? 2 : 1;
		for (int k = 0; k < c->nin; k++) {
			c->ndims[k] = 2;
			c->shapes[k][0] = 63 + (int64_t)i;
			c->shapes[k][1] = 129;
		}
		c->dtype = i % 3 ? SPEC_DTYPE_FLOAT16 : SPEC_DTYPE_FLOAT32;
		c->mode = rows[i].o == EXEC_XFAILED || rows[i].o == EXEC_XPASSED
			      ? SPEC_MODE_XFAIL
			      : SPEC_MODE_MANDATORY_SUCCESS;
		c->atol = c->rtol = 0.1;
		snprintf(c->loc, sizeof(c->loc), "specs/x.yaml:%zu:9", 10 + i);
		memcpy(r->id, c->id, sizeof(r->id));
		r->outcome = rows[i].o;
		r->first_outcome = rows[i].o == EXEC_FLAKY ? EXEC_FAILED : rows[i].o;
		r->attempts = rows[i].o == EXEC_FLAKY ? 2 : 1;
		r->seconds = 0.125 * (double)(i + 1);
		r->max_abs_err = i == 1 ? 0.5 : 0.001 * (double)i;
		r->max_rel_err = i == 1 ? INFINITY : 0.002 * (double)i;
		r->atol = r->rtol = 0.1;
		r->device_us = 1.5 * (double)i;
		r->util_pe = 0.25;
		r->util_vec = 0.5;
		snprintf(r->plan, sizeof(r->plan), "%s", i == 9 ? "abs+add+div" : "rows_split");
		if (i == 9)
			snprintf(r->adapter, sizeof(r->adapter), "softsign");
		snprintf(r->message, sizeof(r->message), "%s", rows[i].msg);
	}
	return n;
}

static void check_golden(const char *name, char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", GOLDEN_DIR, name);
	cr_assert_not_null(text);
	if (getenv("SPYRE_UPDATE_GOLDEN"))
		cr_assert_eq(fs_atomic_write(path, text, strlen(text), 0644), 0);
	char *want = NULL;
	size_t len = 0;
	cr_assert_eq(fs_read_file(&want, &len, path, 1 << 20), 0, "%s: %s", path, err_last());
	cr_expect_str_eq(text, want, "%s differs (SPYRE_UPDATE_GOLDEN=1 rewrites it)", name);
	free(want);
	free(text);
}

Test(report, junit_golden)
{
	size_t n = build();
	check_golden("golden.junit.xml", exec_report_junit_str(cases, res, n));
}

Test(report, jsonl_golden)
{
	size_t n = build();
	check_golden("golden.jsonl", exec_report_jsonl_str(cases, res, n));
}

Test(report, summary_counts)
{
	size_t n = build();
	struct exec_summary s;
	exec_summary_make(&s, res, n);
	cr_expect_eq(s.total, n);
	cr_expect_eq(s.count[EXEC_PASSED], 2);
	cr_expect_eq(s.count[EXEC_FLAKY], 1);
	cr_expect_eq(s.count[EXEC_NOT_RUN], 1);
	/* failed, error, crashed, timed_out and the case never run fail the run */
	cr_expect_eq(s.mandatory_bad, 5);
}

Test(report, names)
{
	build();
	char name[600];
	exec_case_name(name, sizeof(name), &cases[1]);
	cr_expect_str_eq(name, "test_div[div-64x129,64x129-float16]");
}
