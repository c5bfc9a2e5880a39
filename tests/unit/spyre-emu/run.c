/* Tests of the planner and the run pipeline: every op the planner lowers, on every default
 * sample of the op table (stick-aligned and unaligned shapes), on 1, 8 and 32 cores, in float16
 * and float32, agrees with the float64 reference within SPYRE.md section 4's tolerances and
 * gives bit-identical output whatever the core count (no plan splits a reduction, and tiles do
 * not depend on the core count). And the plans move modeled time the way the physics says. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"

static int planned(const struct spyre_op_info *op)
{
	return op->cls == SPYRE_OPC_POINTWISE || op->cls == SPYRE_OPC_REDUCTION ||
	       op->cls == SPYRE_OPC_NORM || op->cls == SPYRE_OPC_MATMUL;
}

/* Parses one sample ("67x256,256") into opts. */
static void sample_opts(struct spyre_run_opts *o, const char *sample)
{
	o->nin = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", sample);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int n = 0;
		char *s2 = NULL;
		for (char *d = strtok_r(t, "x", &s2); d; d = strtok_r(NULL, "x", &s2))
			o->shapes[o->nin][n++] = strtoll(d, NULL, 10);
		o->ndims[o->nin++] = n;
	}
}

static void run_sample(const struct spyre_op_info *op, const char *sample, enum spyre_dtype dt)
{
	static const int cores[] = { 1, 8, 32 };
	char first[17] = "", first_plan[SPYRE_PLAN_NAME_MAX] = "";
	for (size_t i = 0; i < 3; i++) {
		struct spyre_hw hw;
		cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
		cr_assert_eq(spyre_hw_set_cores(&hw, cores[i]), 0);
		struct spyre_run_opts o;
		spyre_run_opts_init(&o);
		o.op = op->name;
		o.dtype = dt;
		o.hw = &hw;
		o.seed = 7;
		o.params.scalar = 2.0; /* pow exponent, clamp min */
		o.params.scalar2 = 0.1;
		o.params.has_min = o.params.has_max = 1;
		if (strcmp(op->name, "clamp") == 0)
			o.params.scalar = -0.1;
		sample_opts(&o, sample);
		struct spyre_run_result r;
		int rc = spyre_run(&o, &r);
		cr_assert_eq(rc, 0, "%s %s %s on %d cores: %s", op->name, sample,
			     spyre_dtype_name(dt), cores[i], err_last());
		cr_expect(r.passed,
			  "%s %s %s on %d cores (plan %s): max abs err %g, %llu mismatches",
			  op->name, sample, spyre_dtype_name(dt), cores[i], r.plan, r.max_abs_err,
			  (unsigned long long)r.mismatches);
		cr_expect_gt(r.timing.cycles, 0);
		/* A matmul's fp32 sums depend on its K chunking, which the chosen tiling sets:
		 * only the same plan promises the same bits. */
		int same_order = op->cls != SPYRE_OPC_MATMUL || strcmp(r.plan, first_plan) == 0;
		if (i == 0) {
			memcpy(first, r.digest, sizeof(first));
			memcpy(first_plan, r.plan, sizeof(first_plan));
		} else if (same_order)
			cr_expect_str_eq(r.digest, first,
					 "%s %s %s: output on %d cores differs from 1 core",
					 op->name, sample, spyre_dtype_name(dt), cores[i]);
		spyre_run_result_finish(&r);
	}
}

static void run_op_class(enum spyre_op_class cls)
{
	int ran = 0;
	for (size_t i = 0; i < spyre_ops_count; i++) {
		const struct spyre_op_info *op = &spyre_ops[i];
		if (op->cls != cls || !planned(op))
			continue;
		char samples[512];
		snprintf(samples, sizeof(samples), "%s", op->samples);
		char *save = NULL;
		for (char *s = strtok_r(samples, ";", &save); s; s = strtok_r(NULL, ";", &save)) {
			run_sample(op, s, SPYRE_DTYPE_FLOAT16);
			if (spyre_op_supports(op, SPYRE_DTYPE_FLOAT32))
				run_sample(op, s, SPYRE_DTYPE_FLOAT32);
			ran++;
		}
	}
	cr_expect_gt(ran, 0);
}

Test(run, pointwise_ops_all_samples, .timeout = 300)
{
	run_op_class(SPYRE_OPC_POINTWISE);
}

Test(run, reductions_all_samples, .timeout = 300)
{
	run_op_class(SPYRE_OPC_REDUCTION);
}

Test(run, norms_all_samples, .timeout = 300)
{
	run_op_class(SPYRE_OPC_NORM);
}

Test(run, matmul_family_all_samples, .timeout = 300)
{
	run_op_class(SPYRE_OPC_MATMUL);
}

static double plan_us(struct spyre_plan_info *p, size_t n, const char *prefix, int best)
{
	double v = best ? 1e300 : 0;
	for (size_t i = 0; i < n; i++)
		if (p[i].valid && strncmp(p[i].name, prefix, strlen(prefix)) == 0)
			v = best ? (p[i].modeled_us < v ? p[i].modeled_us : v)
				 : (p[i].modeled_us > v ? p[i].modeled_us : v);
	return v;
}

static void plans_of(const char *op, const char *sample, int cores, struct spyre_plan_info **p,
		     size_t *n)
{
	static struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	cr_assert_eq(spyre_hw_set_cores(&hw, cores), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = op;
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	sample_opts(&o, sample);
	cr_assert_eq(spyre_run_plans(&o, p, n), 0, "%s", err_last());
	cr_assert_gt(*n, 1);
	cr_expect(p[0][0].valid, "the first plan is the fastest valid one");
}

Test(run, softmax_in_lx_beats_spilling)
{
	struct spyre_plan_info *p;
	size_t n;
	plans_of("softmax", "256x2880", 8, &p, &n);
	double lx = plan_us(p, n, "fused_lx", 1), spill = plan_us(p, n, "spill_devmem", 1);
	printf("softmax 256x2880 fp16, 8 cores: fused in LX %.2f us, spilled %.2f us, ratio %.2f\n",
	       lx, spill, spill / lx);
	cr_expect_gt(spill / lx, 1.5, "keeping the intermediate in LX must pay: %g vs %g", lx,
		     spill);
	free(p);
}

Test(run, best_matmul_tiling_beats_the_worst)
{
	struct spyre_plan_info *p;
	size_t n;
	plans_of("mm", "1024x1024,1024x1024", 32, &p, &n);
	double best = plan_us(p, n, "tile_", 1), worst = plan_us(p, n, "tile_", 0);
	printf("mm 1024^3 fp16, 32 cores: best tiling %.2f us (%s), worst %.2f us, ratio %.2f\n",
	       best, p[0].name, worst, worst / best);
	cr_expect_gt(worst / best, 1.3);
	free(p);
}

Test(run, unknown_plan_and_unplanned_ops_are_named)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = "add";
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	o.plan = "no_such_plan";
	sample_opts(&o, "67x256,67x256");
	struct spyre_run_result r;
	cr_expect_eq(spyre_run(&o, &r), ERR_INVAL);
	cr_expect(strstr(err_last(), "no_such_plan") != NULL, "%s", err_last());
	o.plan = NULL;
	o.op = "add";
	o.nin = 1;
	cr_expect_eq(spyre_run(&o, &r), ERR_INVAL, "wrong input count");
	o.op = "permute";
	sample_opts(&o, "4x67x129");
	o.params.perm[0] = 0, o.params.perm[1] = 0, o.params.perm[2] = 1;
	cr_expect_eq(spyre_run(&o, &r), ERR_INVAL, "a permutation naming a dim twice");
}
