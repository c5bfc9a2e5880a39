/* Workers that are their own process image (exec_pool_opts.worker_exe): cases run in a program
 * started as `EXE __case-worker`, the adapter table reaches it through the setup frames (a case
 * only an adapter can run passes, with the adapter named), the results keep their order, and a
 * program that cannot be started gives every case an outcome instead of a hang. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "executors/adapters.h"
#include "executors/pool.h"

static void make(struct exec_case *c, int i, const char *op, int nin, bool native)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%016x", 0xe0 + i);
	snprintf(c->test_id, sizeof(c->test_id), "test/test_x.py::TestX::test_%s_%d", op, i);
	snprintf(c->op, sizeof(c->op), "%s", op);
	if (native)
		snprintf(c->emu_op, sizeof(c->emu_op), "%s", op);
	else
		c->unsupported = 1,
		snprintf(c->why, sizeof(c->why), "no emulator op for this name");
	c->nin = nin;
	for (int k = 0; k < nin; k++) {
		c->ndims[k] = 2;
		c->shapes[k][0] = 3 + i;
		c->shapes[k][1] = 64;
	}
	c->dtype = SPEC_DTYPE_FLOAT16;
	c->atol = c->rtol = 0.02;
	c->mode = SPEC_MODE_MANDATORY_SUCCESS;
	c->seed = 7 + (uint64_t)i;
	c->params.dim = -1;
	c->params.perm[1] = 1;
}

#define N 6

static void run(const char *exe, const struct exec_adapters *table, struct exec_result *res,
		struct exec_case *cases)
{
	for (int i = 0; i < N; i++)
		make(&cases[i], i, i % 2 ? "hypot" : "add", 2, i % 2 == 0);
	struct exec_pool_opts o = {
		.jobs = 2, .adapters = table, .worker_exe = exe, .timeout_s = 60
	};
	struct exec_pool_stats st;
	cr_assert_eq(exec_pool_run(cases, N, &o, res, &st), 0, "%s", err_last());
}

Test(exec_worker, cases_run_in_the_program_with_the_adapters, .timeout = 120)
{
	struct exec_adapters *table;
	cr_assert_eq(exec_adapters_load(&table, EXEC_ADAPTERS_FILE), 0, "%s", err_last());
	struct exec_case cases[N];
	struct exec_result res[N];
	run(CASE_WORKER_EXE, table, res, cases);
	for (int i = 0; i < N; i++) {
		cr_expect_str_eq(res[i].id, cases[i].id, "results keep the input order");
		cr_expect_eq(res[i].outcome, EXEC_PASSED, "case %d: %s", i, res[i].message);
		cr_expect_str_eq(res[i].adapter, i % 2 ? "hypot" : "", "case %d", i);
	}
	exec_adapters_destroy(table);
	/* without a table the program has none either: the adapted cases are skipped */
	run(CASE_WORKER_EXE, NULL, res, cases);
	for (int i = 0; i < N; i++)
		cr_expect_eq(res[i].outcome, i % 2 ? EXEC_SKIPPED : EXEC_PASSED, "case %d: %s", i,
			     res[i].message);
}

Test(exec_worker, a_program_that_cannot_start_fails_each_case, .timeout = 120)
{
	struct exec_case cases[N];
	struct exec_result res[N];
	run("/nonexistent/spyre-ci", NULL, res, cases);
	for (int i = 0; i < N; i++) {
		cr_expect_eq(res[i].outcome, EXEC_CRASHED, "case %d: %s", i, res[i].message);
		cr_expect(strstr(res[i].message, "exited with status") != NULL, "%s",
			  res[i].message);
	}
}
