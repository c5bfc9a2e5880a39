/* The case runner: outcomes by mode, a native case on the emulator, a refused plan, a case with
 * neither kernel nor adapter, and torch.testing.assert_close's rules for NaN and infinities. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include <math.h>
#include <string.h>

#include "executors/case.h"
#include "executors/inputs.h"

static void make(struct exec_case *c, const char *op, const char *emu_op, enum spec_dtype dt)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "00000000000000aa");
	snprintf(c->test_id, sizeof(c->test_id), "test/test_x.py::TestX::test_%s", op);
	snprintf(c->op, sizeof(c->op), "%s", op);
	snprintf(c->emu_op, sizeof(c->emu_op), "%s", emu_op);
	c->nin = 2;
	c->ndims[0] = c->ndims[1] = 2;
	c->shapes[0][0] = c->shapes[1][0] = 67;
	c->shapes[0][1] = c->shapes[1][1] = 256;
	c->dtype = dt;
	c->atol = c->rtol = 0.1;
	c->mode = SPEC_MODE_MANDATORY_SUCCESS;
	c->seed = 42;
	c->params.dim = -1;
	c->params.perm[1] = 1;
}

Test(case, outcome_by_mode)
{
	cr_expect_eq(exec_outcome_for(SPEC_MODE_MANDATORY_SUCCESS, true), EXEC_PASSED);
	cr_expect_eq(exec_outcome_for(SPEC_MODE_MANDATORY_SUCCESS, false), EXEC_FAILED);
	cr_expect_eq(exec_outcome_for(SPEC_MODE_XFAIL, true), EXEC_XPASSED);
	cr_expect_eq(exec_outcome_for(SPEC_MODE_XFAIL, false), EXEC_XFAILED);
	cr_expect_eq(exec_outcome_for(SPEC_MODE_XFAIL_STRICT, true), EXEC_FAILED);
	cr_expect_eq(exec_outcome_for(SPEC_MODE_XFAIL_STRICT, false), EXEC_XFAILED);
	cr_expect(exec_outcome_ok(EXEC_XPASSED));
	cr_expect(!exec_outcome_ok(EXEC_CRASHED));
	cr_expect(!exec_outcome_ok(EXEC_TIMED_OUT));
}

Test(case, a_native_case_passes_with_its_numbers)
{
	struct exec_case c;
	struct exec_result r;
	make(&c, "add", "add", SPEC_DTYPE_FLOAT16);
	exec_case_run(&c, NULL, &r);
	cr_assert_eq(r.outcome, EXEC_PASSED, "%s", r.message);
	cr_expect_str_eq(r.id, c.id);
	cr_expect_gt(r.device_us, 0);
	cr_expect_neq(r.plan[0], '\0');
	cr_expect_lt(r.max_abs_err, 0.1);
	cr_expect_eq(r.adapter[0], '\0');
	/* the same case twice: the same numbers (seeded from the case) */
	struct exec_result r2;
	exec_case_run(&c, NULL, &r2);
	cr_expect_eq(r.max_abs_err, r2.max_abs_err);
}

Test(case, zero_tolerance_fails_mandatory_and_xfails_as_expected)
{
	struct exec_case c;
	struct exec_result r;
	make(&c, "div", "div", SPEC_DTYPE_FLOAT16);
	c.atol = c.rtol = 0;
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_FAILED, "%s", exec_outcome_name(r.outcome));
	cr_expect(strstr(r.message, "elements differ") != NULL, "%s", r.message);
	c.mode = SPEC_MODE_XFAIL;
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_XFAILED);
	c.mode = SPEC_MODE_XFAIL_STRICT;
	c.atol = c.rtol = 0.1;
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_FAILED, "a strict xfail that passes fails");
}

Test(case, a_refused_run_is_an_error)
{
	struct exec_case c;
	struct exec_result r;
	make(&c, "add", "add", SPEC_DTYPE_FLOAT16);
	c.shapes[1][0] = 63;
	c.shapes[1][1] = 129; /* does not broadcast */
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_ERROR, "%s", exec_outcome_name(r.outcome));
	cr_expect(strstr(r.message, "the emulator refused") != NULL, "%s", r.message);
}

Test(case, no_kernel_and_no_adapter_is_skipped_with_the_reason)
{
	struct exec_case c;
	struct exec_result r;
	make(&c, "nn.functional.mish", "", SPEC_DTYPE_FLOAT16);
	c.unsupported = 1;
	snprintf(c.why, sizeof(c.why), "no emulator op for this name");
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_SKIPPED);
	cr_expect_str_eq(r.message, "no emulator op for this name");
	make(&c, "mm", "mm", SPEC_DTYPE_INT32);
	c.unsupported = 1;
	snprintf(c.why, sizeof(c.why), "the emulator's mm has no int32");
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_SKIPPED);
	cr_expect_str_eq(r.message, "the emulator's mm has no int32");
}

Test(case, a_malformed_case_from_a_pipe_is_refused)
{
	struct exec_case c;
	make(&c, "add", "add", SPEC_DTYPE_FLOAT16);
	cr_expect_eq(exec_case_check(&c), 0);
	c.nin = 9;
	cr_expect_neq(exec_case_check(&c), 0);
	make(&c, "add", "add", SPEC_DTYPE_FLOAT16);
	memset(c.op, 'x', sizeof(c.op));
	cr_expect_neq(exec_case_check(&c), 0);
}

Test(compare, nan_and_infinities_as_assert_close)
{
	double got[] = { 1.0, NAN, NAN, INFINITY, INFINITY, -INFINITY, 1.0, 1.05 };
	double want[] = { 1.0, NAN, 1.0, INFINITY, -INFINITY, 5.0, INFINITY, 1.0 };
	struct exec_compare c;
	for (size_t i = 0; i < 8; i++) {
		exec_compare_values(&c, &got[i], &want[i], 1, 0.1, 0, false);
		bool ok = c.mismatches == 0;
		bool expect[] = { true, false, false, true, false, false, false, true };
		cr_expect_eq(ok, expect[i], "element %zu", i);
	}
	exec_compare_values(&c, &got[1], &want[1], 1, 0, 0, true);
	cr_expect_eq(c.mismatches, 0, "equal_nan: NaN agrees with NaN");
	exec_compare_values(&c, got, want, 8, 0.1, 0, false);
	cr_expect_eq(c.mismatches, 5);
	cr_expect_eq(c.first_bad, 1);
	cr_expect(isinf(c.max_abs_err));
}

Test(inputs, every_init_kind)
{
	struct spyre_tensor t;
	int64_t shape[] = { 3, 4 };
	const char *kinds[] = { "rand",   "randn", "zeros", "ones",  "randint",
				"arange", "eye",   "full",  "xavier" };
	for (size_t k = 0; k < 9; k++) {
		cr_assert_eq(spyre_tensor_alloc(&t, SPYRE_DTYPE_FLOAT32, shape, 2), 0);
		cr_assert_eq(exec_inputs_fill(&t, kinds[k], 7, 0), 0, "%s", kinds[k]);
		double sum = 0, lo = 1e9, hi = -1e9;
		for (int i = 0; i < 12; i++) {
			double v = spyre_tensor_get(&t, (uint64_t)i);
			sum += v, lo = fmin(lo, v), hi = fmax(hi, v);
		}
		if (!strcmp(kinds[k], "zeros"))
			cr_expect_eq(sum, 0);
		if (!strcmp(kinds[k], "ones") || !strcmp(kinds[k], "full"))
			cr_expect_eq(sum, 12);
		if (!strcmp(kinds[k], "arange"))
			cr_expect_eq(sum, 66);
		if (!strcmp(kinds[k], "eye"))
			cr_expect(sum == 3 && spyre_tensor_get(&t, 5) == 1);
		if (!strcmp(kinds[k], "rand"))
			cr_expect(lo >= 0 && hi < 1);
		if (!strcmp(kinds[k], "xavier"))
			cr_expect(lo >= -sqrt(6.0 / 7) && hi <= sqrt(6.0 / 7));
		if (!strcmp(kinds[k], "randint"))
			cr_expect(lo >= -8 && hi <= 8 && floor(lo) == lo);
		spyre_tensor_finish(&t);
	}
	cr_expect_neq(exec_inputs_fill(&t, "file", 1, 0), 0);
	cr_expect(!exec_init_known("file"));
}
