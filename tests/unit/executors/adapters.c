/* Op adapters: every adapter of the shipped table run on aligned and unaligned shapes in float16
 * and float32 and compared with the ORIGINAL op's float64 reference; the references against
 * known values; a wrong rewrite fails; malformed tables are refused with file:line:col. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include <math.h>
#include <string.h>

#include "executors/adapters.h"

static struct exec_adapters *table;

static void load(void)
{
	cr_assert_eq(exec_adapters_load(&table, EXEC_ADAPTERS_FILE), 0, "%s", err_last());
}

static void unload(void)
{
	exec_adapters_destroy(table);
}

/* A case of `op` the emulator lacks, with every input of `shape`. */
static void make(struct exec_case *c, const char *op, int nin, const int64_t *shape, int ndim,
		 enum spec_dtype dt, double exponent)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "00000000000000ad");
	snprintf(c->test_id, sizeof(c->test_id), "test/test_x.py::TestX::test_%s", op);
	snprintf(c->op, sizeof(c->op), "%s", op);
	c->unsupported = 1;
	snprintf(c->why, sizeof(c->why), "no emulator op for this name");
	c->nin = nin;
	for (int i = 0; i < nin; i++) {
		c->ndims[i] = ndim;
		memcpy(c->shapes[i], shape, (size_t)ndim * sizeof(int64_t));
	}
	c->dtype = dt;
	c->atol = c->rtol = dt == SPEC_DTYPE_FLOAT16 ? 0.02 : 1e-4;
	c->mode = SPEC_MODE_MANDATORY_SUCCESS;
	c->seed = 1234;
	c->params.scalar = exponent;
}

static const struct {
	const char *adapter, *op;
	int nin;
	double exponent;
} each[] = {
	{ "pow_int2", "pow", 1, 2 },
	{ "pow_int3", "torch.pow", 1, 3 },
	{ "pow_int4", "pow", 1, 4 },
	{ "square", "square", 1, 0 },
	{ "softsign", "nn.functional.softsign", 1, 0 },
	{ "hardswish", "nn.functional.hardswish", 1, 0 },
	{ "logaddexp", "logaddexp", 2, 0 },
	{ "hypot", "hypot", 2, 0 },
	{ "addcmul", "addcmul", 3, 0 },
	{ "lerp", "lerp", 3, 0 },
};

Test(adapters, every_adapter_agrees_with_the_original_reference, .init = load, .fini = unload)
{
	const int64_t shapes[][2] = { { 64, 256 }, { 63, 129 }, { 150, 1 } };
	const int ndims[] = { 2, 2, 1 };
	const enum spec_dtype dts[] = { SPEC_DTYPE_FLOAT16, SPEC_DTYPE_FLOAT32 };
	size_t n = sizeof(each) / sizeof(each[0]);
	cr_assert_eq(exec_adapters_count(table), n, "every adapter of the table is checked");
	for (size_t k = 0; k < n; k++)
		for (size_t s = 0; s < 3; s++)
			for (size_t d = 0; d < 2; d++) {
				struct exec_case c;
				struct exec_result r;
				make(&c, each[k].op, each[k].nin, shapes[s], ndims[s], dts[d],
				     each[k].exponent);
				const struct exec_adapter *a = exec_adapters_find(table, &c);
				cr_assert_not_null(a, "%s", each[k].adapter);
				cr_expect_str_eq(exec_adapter_name(a), each[k].adapter);
				exec_case_run(&c, table, &r);
				cr_expect_eq(r.outcome, EXEC_PASSED, "%s %lldx%lld %s: %s",
					     each[k].adapter, (long long)shapes[s][0],
					     (long long)shapes[s][1], testspecs_dtype_name(dts[d]),
					     r.message);
				cr_expect_str_eq(r.adapter, each[k].adapter);
				cr_expect(strncmp(r.message, "via adapter ", 12) == 0, "%s",
					  r.message);
				cr_expect_gt(r.device_us, 0, "%s: modeled time", each[k].adapter);
			}
}

Test(adapters, conditions_pick_or_refuse, .init = load, .fini = unload)
{
	struct exec_case c;
	int64_t shape[] = { 8, 8 };
	make(&c, "pow", 1, shape, 2, SPEC_DTYPE_FLOAT16, 2.5);
	cr_expect_null(exec_adapters_find(table, &c), "a non-integer exponent has no adapter");
	struct exec_result r;
	exec_case_run(&c, table, &r);
	cr_expect_eq(r.outcome, EXEC_SKIPPED);
	make(&c, "hypot", 1, shape, 2, SPEC_DTYPE_FLOAT16, 0);
	cr_expect_null(exec_adapters_find(table, &c), "the input count must fit");
	make(&c, "softsign", 1, shape, 2, SPEC_DTYPE_FLOAT16, 0);
	snprintf(c.emu_op, sizeof(c.emu_op), "softsign");
	c.unsupported = 0; /* a native op: no adapter is asked */
	exec_case_run(&c, table, &r);
	cr_expect_eq(r.adapter[0], '\0');
}

Test(adapters, references_against_known_values)
{
	struct spyre_tensor in[3];
	int64_t one = 1;
	double vals[][3] = { { 1, 2, 3 }, { 3, 4, 0.25 }, { 0, 0, 0 }, { -4, 1, 0 } };
	const struct {
		const char *name;
		int row;
		double want;
	} cases[] = {
		{ "softsign", 0, 0.5 },      { "hypot", 1, 5 },   { "logaddexp", 2, M_LN2 },
		{ "addcmul", 0, 1 + 2 * 3 }, { "lerp", 1, 3.25 }, { "hardswish", 0, 4.0 / 6 },
		{ "hardswish", 3, -0.0 },    { "square", 3, 16 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int nin = exec_reference_nin(cases[k].name);
		cr_assert_gt(nin, 0);
		for (int i = 0; i < nin; i++) {
			spyre_tensor_alloc(&in[i], SPYRE_DTYPE_FLOAT32, &one, 1);
			spyre_tensor_set(&in[i], 0, vals[cases[k].row][i]);
		}
		double *out = NULL;
		uint64_t n = 0;
		cr_assert_eq(exec_reference(cases[k].name, in, nin, 0, &out, &n), 0);
		cr_expect_float_eq(out[0], cases[k].want, 1e-12, "%s", cases[k].name);
		free(out);
		for (int i = 0; i < nin; i++)
			spyre_tensor_finish(&in[i]);
	}
	cr_expect_eq(exec_reference_nin("mish"), 0);
}

static const char wrong[] = "adapters:\n"
			    "  - name: softsign\n"
			    "    ops: [softsign]\n"
			    "    reference: softsign\n"
			    "    inputs: [x]\n"
			    "    expr: div(x, add(abs(x), 2))\n";

Test(adapters, a_wrong_rewrite_fails)
{
	struct exec_adapters *t;
	cr_assert_eq(exec_adapters_parse(&t, wrong, strlen(wrong), "wrong.yaml"), 0, "%s",
		     err_last());
	struct exec_case c;
	struct exec_result r;
	int64_t shape[] = { 63, 129 };
	make(&c, "softsign", 1, shape, 2, SPEC_DTYPE_FLOAT32, 0);
	exec_case_run(&c, t, &r);
	cr_expect_eq(r.outcome, EXEC_FAILED, "%s", r.message);
	cr_expect(strstr(r.message, "via adapter softsign") != NULL, "%s", r.message);
	exec_adapters_destroy(t);
}

Test(adapters, malformed_tables_name_the_place)
{
	const struct {
		const char *yaml, *want;
	} bad[] = {
		{ "adapters:\n  - name: a\n    ops: [x]\n    reference: softsign\n    inputs: [x]\n"
		  "    expr: frob(x)\n",
		  "bad.yaml:2:5: adapter a: expr: 'frob' is not an op of the emulator" },
		{ "adapters:\n  - name: a\n    ops: [x]\n    reference: nope\n    inputs: [x]\n"
		  "    expr: abs(x)\n",
		  "bad.yaml:2:5: no float64 reference for nope" },
		{ "adapters:\n  - name: a\n    colour: red\n",
		  "bad.yaml:3:13: unknown key colour" },
		{ "adapters:\n  - name: a\n    ops: [x]\n    reference: softsign\n    inputs: [x]\n"
		  "    expr: abs(y)\n",
		  "'y' is neither an input nor a call" },
		{ "adapters:\n  - name: a\n    ops: [x]\n    reference: softsign\n    inputs: [x]\n"
		  "    expr: abs(abs(abs(abs(abs(abs(abs(abs(abs(x)))))))))\n",
		  "nested deeper than 8" },
		{ "adapters: [\n", "bad.yaml:" },
		{ "other: 1\n", "want `adapters:` with a list" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct exec_adapters *t = NULL;
		cr_expect_eq(exec_adapters_parse(&t, bad[i].yaml, strlen(bad[i].yaml), "bad.yaml"),
			     ERR_INVAL, "%zu", i);
		cr_expect(strstr(err_last(), bad[i].want) != NULL, "%zu: %s", i, err_last());
		cr_expect_null(t);
	}
}
