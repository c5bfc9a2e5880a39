/* The timing model's shortcuts change no result: dependences shared between cores whose
 * programs touch LX alike, and the heap of ready queue heads, against the reference simulation
 * (spyre_timing_reference_mode: every core on its own, every head scanned each step). Every
 * op's samples and a few larger shapes, on 1, 2, 3, 8 and 32 cores: every candidate plan's
 * cycles, utilization and traffic must be identical both ways. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"
#include "spyre-emu/timing.h"

static void parse(struct spyre_run_opts *o, const char *sample)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", sample);
	o->nin = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int n = 0;
		char *s2 = NULL;
		for (char *d = strtok_r(t, "x", &s2); d; d = strtok_r(NULL, "x", &s2))
			o->shapes[o->nin][n++] = strtoll(d, NULL, 10);
		o->ndims[o->nin++] = n;
	}
}

static int plans(const char *op, const char *sample, int cores, int reference,
		 struct spyre_plan_info **p, size_t *n)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
	cr_assert_eq(spyre_hw_set_cores(&hw, cores), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = op;
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	o.seed = 3;
	o.params.dim = -1;
	o.params.scalar = 2.0;
	parse(&o, sample);
	spyre_timing_reference_mode(reference);
	int rc = spyre_run_plans(&o, p, n);
	spyre_timing_reference_mode(0);
	return rc;
}

/* 1 when both listings agree on everything the timing model computed. */
static int compare(const char *op, const char *sample, int cores)
{
	struct spyre_plan_info *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int ra = plans(op, sample, cores, 0, &a, &na);
	int rb = plans(op, sample, cores, 1, &b, &nb);
	cr_expect_eq(ra, rb, "%s %s on %d cores: rc %d vs %d", op, sample, cores, ra, rb);
	int timed = 0;
	for (size_t i = 0; !ra && !rb && i < na && i < nb; i++) {
		cr_expect_str_eq(a[i].name, b[i].name, "%s %s on %d cores", op, sample, cores);
		cr_expect_eq(a[i].valid, b[i].valid);
		cr_expect_eq(a[i].cycles, b[i].cycles, "%s %s on %d cores, %s: %llu vs %llu", op,
			     sample, cores, a[i].name, (unsigned long long)a[i].cycles,
			     (unsigned long long)b[i].cycles);
		cr_expect(a[i].util_pe == b[i].util_pe && a[i].util_vec == b[i].util_vec &&
			      a[i].util_dma == b[i].util_dma && a[i].util_ring == b[i].util_ring,
			  "%s %s on %d cores, %s: utilization differs", op, sample, cores,
			  a[i].name);
		cr_expect(a[i].dev_bytes == b[i].dev_bytes && a[i].ring_bytes == b[i].ring_bytes &&
			      a[i].lx_peak_bytes == b[i].lx_peak_bytes,
			  "%s %s on %d cores, %s: traffic differs", op, sample, cores, a[i].name);
		timed += a[i].valid;
	}
	cr_expect_eq(na, nb);
	free(a);
	free(b);
	return timed;
}

Test(timing_fast, equals_the_reference_simulation_on_every_plan, .timeout = 900)
{
	static const int cores[] = { 1, 2, 3, 8, 32 };
	static const struct {
		const char *op, *sample;
	} extra[] = {
		{ "mm", "1024x1024,1024x1024" },
		{ "mm", "63x2880,2880x64" },
		{ "mm", "1x4096,4096x4096" },
		{ "softmax", "256x2880" },
		{ "softmax", "4x70000" },
		{ "transpose", "1024x1024" },
		{ "swiglu_mlp", "64x256,256x1024,256x1024,1024x256" },
		{ "layer_norm", "67x2880,2880,2880" },
		{ "bmm", "4x67x129,4x129x150" },
	};
	int lists = 0, timed = 0;
	for (size_t i = 0; i < spyre_ops_count; i++) {
		char grid[1024];
		snprintf(grid, sizeof(grid), "%s", spyre_ops[i].samples);
		char *save = NULL;
		for (char *s = strtok_r(grid, ";", &save); s; s = strtok_r(NULL, ";", &save))
			for (size_t c = 0; c < sizeof(cores) / sizeof(cores[0]); c++, lists++)
				timed += compare(spyre_ops[i].name, s, cores[c]);
	}
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		for (size_t c = 0; c < sizeof(cores) / sizeof(cores[0]); c++, lists++)
			timed += compare(extra[i].op, extra[i].sample, cores[c]);
	printf("timing shortcuts: %d plan listings, %d timed plans, identical to the reference\n",
	       lists, timed);
	cr_expect_gt(timed, 1000);
	spyre_run_release_caches();
}
