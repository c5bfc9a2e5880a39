/* The plan choices at the sizes of Granite 3.3 8B (hidden 4096, intermediate 12800, a 32000
 * vocabulary row block, sequence 1024 for prefill and 1 for decode), on 32 cores, as the timing
 * model sees them with the calibrated compute peak: the fused MLP is valid and not slower than
 * the unfused graph (faster, with a busier PE array, where compute matters: prefill), and the
 * softmax that keeps its row in LX beats the one that spills to device memory. Plans only:
 * nothing this size is executed here (the long plan grid does that). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/run.h"

static void plans(const char *op, const int64_t (*shapes)[2], int nin, struct spyre_plan_info **p,
		  size_t *n)
{
	static struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = op;
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	o.nin = nin;
	for (int i = 0; i < nin; i++) {
		o.ndims[i] = 2;
		o.shapes[i][0] = shapes[i][0];
		o.shapes[i][1] = shapes[i][1];
	}
	cr_assert_eq(spyre_run_plans(&o, p, n), 0, "%s", err_last());
}

static const struct spyre_plan_info *named(const struct spyre_plan_info *p, size_t n,
					   const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0) {
			cr_assert(p[i].valid, "%s refused: %s", name, p[i].why);
			return &p[i];
		}
	cr_assert_fail("no plan %s", name);
	return NULL;
}

static void mlp(int64_t T, double min_ratio)
{
	const int64_t s[4][2] = { { T, 4096 }, { 4096, 12800 }, { 4096, 12800 }, { 12800, 4096 } };
	struct spyre_plan_info *p;
	size_t n;
	plans("swiglu_mlp", s, 4, &p, &n);
	const struct spyre_plan_info *f = named(p, n, "fused_ffn_split"),
				     *u = named(p, n, "unfused");
	printf(
	    "swiglu_mlp %lldx4096x12800 fp16, 32 cores: fused %.1f us (PE %.1f%%), unfused %.1f us "
	    "(PE %.1f%%), ratio %.3f\n",
	    (long long)T, f->modeled_us, 100 * f->util_pe, u->modeled_us, 100 * u->util_pe,
	    u->modeled_us / f->modeled_us);
	cr_expect(p[0].valid && strncmp(p[0].name, "fused", 5) == 0, "fastest: %s", p[0].name);
	cr_expect_geq(u->modeled_us / f->modeled_us, min_ratio);
	free(p);
}

Test(plan_granite, fused_mlp_prefill, .timeout = 600)
{
	mlp(1024, 1.2);
}

/* Decode reads every weight once whatever the plan: both are bound by device memory */
Test(plan_granite, fused_mlp_decode, .timeout = 600)
{
	mlp(1, 1.0);
}

Test(plan_granite, softmax_in_lx_beats_spilling, .timeout = 600)
{
	const int64_t s[1][2] = { { 4096, 32000 } };
	struct spyre_plan_info *p;
	size_t n;
	plans("softmax", s, 1, &p, &n);
	const struct spyre_plan_info *f = named(p, n, "fused_lx_rows16");
	const struct spyre_plan_info *sp = named(p, n, "spill_devmem_rows16");
	printf("softmax 4096x32000 fp16, 32 cores: in LX %.1f us, spilled %.1f us, ratio %.2f\n",
	       f->modeled_us, sp->modeled_us, sp->modeled_us / f->modeled_us);
	cr_expect_gt(sp->modeled_us / f->modeled_us, 1.27);
	free(p);
}
