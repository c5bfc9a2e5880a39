/* Reports of a run, each written atomically (temp file, fsync, rename: common/fsutil.h):
 *   junit.xml      as PyTorch's CI writes it and HUD's uploader (tools/stats/upload_test_stats.py)
 *                  reads it: <testsuites>, one <testsuite> per upstream test file, a <testcase
 *                  classname name file time> per kernel case with <failure>, <error> or
 *                  <skipped> (an xfail is <skipped type="pytest.xfail">); see docs/contracts.md
 *   results.jsonl  one object per case, the same cases in the same order
 *   summary.json   the counts per outcome
 * Cases that a stopped run never reached (EXEC_NOT_RUN) are in none of them, and counted as
 * not_run in the summary. A testcase's name is `method[op-shapes-dtype]`, its classname the test
 * class, its file the upstream file relative to test/ (where PyTorch's pytest runs). */
#ifndef EXECUTORS_REPORT_H
#define EXECUTORS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "executors/case.h"

#define EXEC_REPORT_MAX ((size_t)1 << 30) /* bytes of one report file */

struct exec_summary {
	size_t count[EXEC_OUTCOME_COUNT];
	size_t total;         /* cases given */
	size_t mandatory_bad; /* cases whose outcome fails the run (exec_outcome_ok) */
	double seconds;       /* sum of the cases' host times */
	double device_us;     /* sum of modeled device time */
};

void exec_summary_make(struct exec_summary *s, const struct exec_result *results, size_t n);
/* "5,008 cases: 4,950 passed, ..., 2 flaky (0 not run)" on one line. */
void exec_summary_print(FILE *out, const struct exec_summary *s);

/* Each returns 0 or ERR_IO / ERR_NOMEM / ERR_LIMIT with the path in the detail. */
int exec_report_junit(const char *path, const struct exec_case *cases,
		      const struct exec_result *results, size_t n);
int exec_report_jsonl(const char *path, const struct exec_case *cases,
		      const struct exec_result *results, size_t n);
int exec_report_summary(const char *path, const struct exec_summary *s);

/* The same into a string (tests and goldens): malloc()ed, or NULL on ERR_NOMEM. */
char *exec_report_junit_str(const struct exec_case *cases, const struct exec_result *results,
			    size_t n);
char *exec_report_jsonl_str(const struct exec_case *cases, const struct exec_result *results,
			    size_t n);

/* The testcase name of a case: "test_add[add-67x256,67x256-float16]". */
void exec_case_name(char *buf, size_t size, const struct exec_case *c);

#endif
