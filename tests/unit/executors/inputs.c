/* The spec's inputs on native kernel cases: init_args (randint's high), strides and storage
 * offsets read through a storage drawn in storage order, and the emulator running on them
 * (spyre_run's fill_input) with the same numbers on every run and indices kept valid. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "executors/case.h"
#include "executors/inputs.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/run.h"

Test(init_args, high_and_low)
{
	struct exec_init_args a = { 0 };
	cr_assert_eq(exec_init_args_parse(&a, "{high: 1000}"), 0, "%s", err_last());
	cr_expect(a.has_range && a.low == 0 && a.high == 1000);
	cr_assert_eq(exec_init_args_parse(&a, "{low: -3, high: 3}"), 0, "%s", err_last());
	cr_expect(a.low == -3 && a.high == 3);
	cr_expect_eq(exec_init_args_parse(&a, "{seed: 4}"), 0);
	cr_expect(!a.has_range);
	cr_expect_neq(exec_init_args_parse(&a, "{high: lots}"), 0);
	cr_expect_neq(exec_init_args_parse(&a, "{low: 5, high: 5}"), 0);
	cr_expect_neq(exec_init_args_parse(&a, "{low: 1}"), 0);
}

Test(inputs, randint_with_high_stays_in_range)
{
	struct spyre_tensor t;
	int64_t shape[] = { 1, 41 };
	struct exec_init_args a = { .has_range = true, .low = 0, .high = 1000 };
	cr_assert_eq(spyre_tensor_alloc(&t, SPYRE_DTYPE_INT64, shape, 2), 0);
	cr_assert_eq(exec_inputs_fill_args(&t, "randint", &a, 9, 0), 0);
	double hi = 0;
	for (uint64_t i = 0; i < 41; i++) {
		double v = spyre_tensor_get(&t, i);
		cr_expect(v >= 0 && v < 1000 && floor(v) == v, "%g", v);
		hi = fmax(hi, v);
	}
	cr_expect_gt(hi, 8); /* not the default [-8, 8] */
	spyre_tensor_finish(&t);
}

Test(inputs, strides_read_the_storage)
{
	struct spyre_tensor t, base;
	int64_t shape[] = { 3, 4 }, flat[] = { 20 };
	/* stride 0 on the rows: every row is the same four storage elements, from offset 5 */
	struct exec_init_args a = { .strided = true, .offset = 5, .stride = { 0, 1 } };
	cr_assert_eq(spyre_tensor_alloc(&t, SPYRE_DTYPE_FLOAT32, shape, 2), 0);
	cr_assert_eq(spyre_tensor_alloc(&base, SPYRE_DTYPE_FLOAT32, flat, 1), 0);
	cr_assert_eq(exec_inputs_fill_args(&t, "randn", &a, 3, 1), 0);
	cr_assert_eq(exec_inputs_fill_args(&base, "randn", NULL, 3, 1), 0);
	for (uint64_t j = 0; j < 4; j++) {
		cr_expect_eq(spyre_tensor_get(&t, j), spyre_tensor_get(&t, 4 + j));
		cr_expect_eq(spyre_tensor_get(&t, j), spyre_tensor_get(&t, 8 + j));
		cr_expect_eq(spyre_tensor_get(&t, j), spyre_tensor_get(&base, 5 + j));
	}
	/* a transposed layout: element (i, j) is storage j * 3 + i */
	struct exec_init_args tr = { .strided = true, .stride = { 1, 3 } };
	cr_assert_eq(exec_inputs_fill_args(&t, "arange", &tr, 3, 0), 0);
	cr_expect_eq(spyre_tensor_get(&t, 1), 3);
	cr_expect_eq(spyre_tensor_get(&t, 4), 1);
	struct exec_init_args huge = { .strided = true, .stride = { (int64_t)1 << 40, 1 } };
	cr_expect_eq(exec_inputs_fill_args(&t, "rand", &huge, 3, 0), ERR_LIMIT);
	spyre_tensor_finish(&t);
	spyre_tensor_finish(&base);
}

static void make(struct exec_case *c, const char *op, int nin, enum spec_dtype dt)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "00000000000000bb");
	snprintf(c->test_id, sizeof(c->test_id), "test/test_x.py::TestX::test_%s", op);
	snprintf(c->op, sizeof(c->op), "%s", op);
	snprintf(c->emu_op, sizeof(c->emu_op), "%s", op);
	c->nin = nin;
	for (int i = 0; i < nin; i++) {
		c->ndims[i] = 2;
		c->shapes[i][0] = 16;
		c->shapes[i][1] = 64;
	}
	c->dtype = dt;
	c->atol = c->rtol = 0.05;
	c->mode = SPEC_MODE_MANDATORY_SUCCESS;
	c->seed = 42;
	c->params.dim = -1;
	c->params.perm[1] = 1;
}

/* The spec's init reaches the emulator: zeros in both inputs make add's output all zero, which
 * the emulator's own random inputs never give; the run passes, and repeats exactly. */
Test(native, runs_on_the_spec_inputs)
{
	struct exec_case c;
	struct exec_result own, r, again;
	make(&c, "add", 2, SPEC_DTYPE_FLOAT16);
	exec_case_run(&c, NULL, &own);
	snprintf(c.init[0], sizeof(c.init[0]), "zeros");
	snprintf(c.init[1], sizeof(c.init[1]), "zeros");
	exec_case_run(&c, NULL, &r);
	cr_assert_eq(r.outcome, EXEC_PASSED, "%s", r.message);
	cr_assert_eq(own.outcome, EXEC_PASSED, "%s", own.message);
	snprintf(c.init[0], sizeof(c.init[0]), "randn");
	snprintf(c.init[1], sizeof(c.init[1]), "xavier");
	exec_case_run(&c, NULL, &r);
	exec_case_run(&c, NULL, &again);
	cr_assert_eq(r.outcome, EXEC_PASSED, "%s", r.message);
	cr_expect_eq(r.max_abs_err, again.max_abs_err);
	cr_expect_neq(r.max_abs_err, own.max_abs_err);
}

static int fill_value(void *ctx, struct spyre_tensor *t, int index)
{
	double v = *(const double *)ctx;
	for (uint64_t i = 0; i < spyre_tensor_numel(t); i++)
		spyre_tensor_set(t, i, index == 0 ? v : 1);
	return 0;
}

/* spyre_run on the caller's values: the output digest follows them; embedding indices past
 * the table are refused with the range to give. */
Test(native, emulator_fill_input)
{
	static struct spyre_hw hw;
	if (spyre_hw_load_default(&hw) != 0)
		cr_skip_test("no default hardware here: %s", err_last());
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = "add";
	o.nin = 2;
	o.ndims[0] = o.ndims[1] = 1;
	o.shapes[0][0] = o.shapes[1][0] = 64;
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	double v = 2;
	o.fill_input = fill_value;
	o.fill_ctx = &v;
	struct spyre_run_result a, b;
	cr_assert_eq(spyre_run(&o, &a), 0, "%s", err_last());
	v = 3;
	cr_assert_eq(spyre_run(&o, &b), 0, "%s", err_last());
	cr_expect(a.passed && b.passed);
	cr_expect_str_neq(a.digest, b.digest);
	spyre_run_result_finish(&a);
	spyre_run_result_finish(&b);
	o.op = "embedding";
	o.ndims[0] = 2, o.shapes[0][0] = 1, o.shapes[0][1] = 8;
	o.ndims[1] = 2, o.shapes[1][0] = 32, o.shapes[1][1] = 64;
	v = 1e6;
	cr_expect_eq(spyre_run(&o, &a), ERR_INVAL);
	cr_expect(strstr(err_last(), "indices") != NULL, "%s", err_last());
	err_clear();
}

Test(inputs, distinct_indices)
{
	struct spyre_tensor t;
	int64_t shape[] = { 6 };
	cr_assert_eq(spyre_tensor_alloc(&t, SPYRE_DTYPE_INT64, shape, 1), 0);
	double v[] = { 3, 3, 4, 9, 3, 9 };
	for (uint64_t i = 0; i < 6; i++)
		spyre_tensor_set(&t, i, v[i]);
	struct exec_init_args a = { .has_range = true, .low = 0, .high = 10 };
	cr_assert_eq(exec_inputs_make_distinct(&t, &a), 0, "%s", err_last());
	double want[] = { 3, 4, 5, 9, 6, 0 }; /* the next unused, wrapping at high */
	for (uint64_t i = 0; i < 6; i++)
		cr_expect_eq(spyre_tensor_get(&t, i), want[i], "%llu", (unsigned long long)i);
	struct exec_init_args small = { .has_range = true, .low = 0, .high = 4 };
	cr_expect_eq(exec_inputs_make_distinct(&t, &small), ERR_INVAL);
	spyre_tensor_finish(&t);
}
