/* Tests of the planner and the run pipeline: every op the planner lowers, on every default
 * sample of the op table (stick-aligned and unaligned shapes), on 1, 8 and 32 cores, in float16
 * and float32, agrees with the float64 reference within the default tolerances (docs/emu.md) and
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

/* Plans whose fp32 sums follow the core count (a K split, the MLP's split of F). */
static int order_follows_cores(const char *plan)
{
	return strncmp(plan, "ksplit", 6) == 0 || strncmp(plan, "fused_ffn_split", 15) == 0;
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
		if (strcmp(op->name, "permute") == 0) { /* one of each kind of plan */
			static const int p3[] = { 0, 2, 1 }, p4[] = { 1, 0, 2, 3 };
			memcpy(o.params.perm, o.ndims[0] == 3 ? p3 : p4,
			       (size_t)o.ndims[0] * sizeof(int));
		}
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
		int same_order = (op->cls != SPYRE_OPC_MATMUL && op->cls != SPYRE_OPC_FUSED) ||
				 (strcmp(r.plan, first_plan) == 0 && !order_follows_cores(r.plan));
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
		if (op->cls != cls)
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

Test(run, layout_ops_all_samples, .timeout = 300)
{
	run_op_class(SPYRE_OPC_LAYOUT);
}

Test(run, embedding_all_samples, .timeout = 300)
{
	run_op_class(SPYRE_OPC_GATHER);
}

Test(run, fused_ops_all_samples, .timeout = 300)
{
	run_op_class(SPYRE_OPC_FUSED);
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

static const struct spyre_plan_info *plan_named(const struct spyre_plan_info *p, size_t n,
						const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0 && p[i].valid)
			return &p[i];
	cr_assert_fail("no valid plan %s", name);
	return NULL;
}

Test(run, fused_mlp_beats_unfused_with_higher_pe_utilization)
{
	struct spyre_plan_info *p;
	size_t n;
	plans_of("swiglu_mlp", "64x256,256x1024,256x1024,1024x256", 32, &p, &n);
	const struct spyre_plan_info *f = plan_named(p, n, "fused_ffn_split");
	const struct spyre_plan_info *u = plan_named(p, n, "unfused");
	printf("swiglu_mlp 64x256x1024 fp16, 32 cores: fused %.2f us (PE %.1f%%), unfused %.2f us "
	       "(PE %.1f%%), ratio %.2f\n",
	       f->modeled_us, 100 * f->util_pe, u->modeled_us, 100 * u->util_pe,
	       u->modeled_us / f->modeled_us);
	cr_expect_gt(u->modeled_us / f->modeled_us, 1.5);
	cr_expect_gt(f->util_pe, u->util_pe);
	cr_expect_gt(f->ring_bytes, 0, "the partial sums travel over the ring");
	free(p);
}

Test(run, relayout_over_the_ring_beats_device_memory)
{
	struct spyre_plan_info *p;
	size_t n;
	plans_of("transpose", "1024x1024", 32, &p, &n);
	const struct spyre_plan_info *r = plan_named(p, n, "restick_ring");
	const struct spyre_plan_info *d = plan_named(p, n, "restick_devmem");
	printf("transpose 1024x1024 fp16, 32 cores: re-stick over the ring %.2f us, through device "
	       "memory %.2f us, ratio %.2f; device bytes %llu vs %llu\n",
	       r->modeled_us, d->modeled_us, d->modeled_us / r->modeled_us,
	       (unsigned long long)r->dev_bytes, (unsigned long long)d->dev_bytes);
	cr_expect_gt(d->modeled_us / r->modeled_us, 1.5);
	cr_expect_lt(r->dev_bytes, d->dev_bytes);
	cr_expect_gt(r->ring_bytes, 0);
	free(p);
}

Test(run, k_split_pays_for_a_single_deep_tile)
{
	struct spyre_plan_info *p;
	size_t n;
	plans_of("mm", "63x2880,2880x64", 32, &p, &n);
	cr_expect(strncmp(p[0].name, "ksplit", 6) == 0, "fastest: %s", p[0].name);
	double best_plain = 1e300;
	for (size_t i = 0; i < n; i++)
		if (p[i].valid && strncmp(p[i].name, "tile_", 5) == 0 &&
		    p[i].modeled_us < best_plain)
			best_plain = p[i].modeled_us;
	printf("mm 63x2880x64 fp16, 32 cores: %s %.2f us vs best unsplit %.2f us, ratio %.2f\n",
	       p[0].name, p[0].modeled_us, best_plain, best_plain / p[0].modeled_us);
	cr_expect_gt(best_plain / p[0].modeled_us, 2.0);
	free(p);
}

Test(run, causal_attention)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	cr_assert_eq(spyre_hw_set_cores(&hw, 8), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = "scaled_dot_product_attention";
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	sample_opts(&o, "4x256x128,4x256x128,4x256x128");
	struct spyre_run_result plain, causal;
	cr_assert_eq(spyre_run(&o, &plain), 0, "%s", err_last());
	o.params.causal = 1;
	cr_assert_eq(spyre_run(&o, &causal), 0, "%s", err_last());
	cr_expect(plain.passed && causal.passed, "%g %g", plain.max_abs_err, causal.max_abs_err);
	cr_expect_str_neq(plain.digest, causal.digest, "the mask changes the result");
	spyre_run_result_finish(&plain);
	spyre_run_result_finish(&causal);
}

/* Other hardware descriptions: plans adapt (or are refused) and results stay right. */
static void run_on(const char *file, const char *op, const char *sample)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/hw/%s", SPYRE_TEST_FIXTURES, file);
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_file(&hw, path), 0, "%s", err_last());
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = op;
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	sample_opts(&o, sample);
	struct spyre_run_result r;
	cr_assert_eq(spyre_run(&o, &r), 0, "%s on %s: %s", op, file, err_last());
	cr_expect(r.passed, "%s on %s: %g", op, file, r.max_abs_err);
	cr_expect_leq(r.timing.lx_peak_max, hw.lx_bytes);
	spyre_run_result_finish(&r);
}

Test(run, other_hardware_descriptions, .timeout = 120)
{
	static const char *const files[] = { "one_core.yaml", "eight_cores.yaml", "small_lx.yaml" };
	for (size_t i = 0; i < 3; i++) {
		run_on(files[i], "softmax", "67x2880");
		run_on(files[i], "mm", "256x256,256x256");
		run_on(files[i], "sum", "4x2880");
		run_on(files[i], "transpose", "67x256");
		run_on(files[i], "scaled_dot_product_attention", "2x67x64,2x67x64,2x67x64");
	}
}

Test(run, runs_the_plan_that_plans_lists_first_and_remembers_it)
{
	struct spyre_plan_info *p;
	size_t n;
	plans_of("mm", "67x129,129x150", 4, &p, &n);
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	cr_assert_eq(spyre_hw_set_cores(&hw, 4), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = "mm";
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	sample_opts(&o, "67x129,129x150");
	for (int i = 0; i < 2; i++) { /* the second run hits the plan cache */
		struct spyre_run_result r;
		o.seed = (uint64_t)i;
		cr_assert_eq(spyre_run(&o, &r), 0, "%s", err_last());
		cr_expect_str_eq(r.plan, p[0].name, "run %d", i);
		cr_expect_eq(r.timing.cycles, p[0].cycles, "run %d", i);
		cr_expect(r.passed);
		spyre_run_result_finish(&r);
	}
	spyre_run_release_caches();
	free(p);
}
