/* The property that every op plans at every shape that fits the device: a walk over the op
 * table, each op on a grid of shapes (tiny, stick-aligned, unaligned, and the sizes of Granite
 * 3.3 8B: hidden 4096, intermediate 12800, vocabulary 32000-49152, sequence 1024 / 1), on 1, 3
 * and 32 cores, must find a valid plan for each; the small ones also run functionally against
 * the float64 reference. Built twice: the default suite walks the grid below; the long suite
 * (PLAN_GRID_LONG) adds the largest Granite shapes and runs every grid point functionally. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"

#ifdef PLAN_GRID_LONG
#define FUNCTIONAL_MAX_ELEMS (INT64_C(1) << 40) /* everything */
#define BIG(s)               ";" s
#else
#define FUNCTIONAL_MAX_ELEMS (INT64_C(1) << 18)
#define BIG(s)               ""
#endif

/* Shapes per op, ';' between samples, ',' between inputs. Ops not named here (new ones) walk
 * their own samples from the op table. */
static const struct {
	const char *op;
	const char *grid;
} grids[] = {
	{ "#1", "1;3x5;67x129;64x256;2x63x150;1024x4096;1x12800" },
	{ "#2", "1,1;3x5,3x5;67x129,67x129;64x256,256;2x63x150,63x150;1024x4096,1024x4096;"
		"1x12800,1x12800" },
	{ "#3", "3x5,3x5,3x5;67x129,67x129,67x129;1024x4096,1024x4096,4096" },
	{ "#reduce", "3x5;67x129;64x256;2x63x150;3x70000;1024x4096;32x49152" },
	{ "softmax", "3x5;67x129;64x256;2x63x150;1024x4096;32x32000;1x300000" BIG("4096x32000") },
	{ "log_softmax", "3x5;67x129;64x256;2x63x150;1024x4096;32x32000;2x300001" },
	{ "layer_norm", "3x5,5,5;67x129,129,129;1024x4096,4096,4096;129x2880,2880,2880;"
			"3x300001,300001,300001" },
	{ "rms_norm", "3x5,5;67x129,129;1024x4096,4096;129x2880,2880;3x300001,300001" },
	{ "mm", "3x5,5x7;67x129,129x150;64x256,256x128;1x4096,4096x4096;1024x4096,4096x1024" BIG(
		    "1024x4096,4096x12800") },
	{ "bmm",
	  "2x3x5,2x5x7;4x67x129,4x129x150;32x64x128,32x128x64" BIG("32x1024x128,32x128x1024") },
	{ "matmul", "3x5,5x7;2x67x129,129x150;2x1x67x256,3x256x64;1x4096,4096x4096" },
	{ "linear", "3x5,7x5,7;67x129,150x129,150;1x4096,4096x4096,4096;1024x4096,1024x4096,"
		    "1024" BIG("1024x4096,12800x4096,12800") },
	{ "addmm", "7,3x5,5x7;150,67x129,129x150;256x256,256x256,256x256;1024,1024x4096,"
		   "4096x1024" },
	{ "transpose", "3x5;67x129;64x256;4x67x129;1024x4096" BIG("4096x4096") },
	{ "contiguous", "3x5;67x129;4x67x129;1024x4096" },
	{ "permute", "3x5;67x129;4x67x129;2x63x150x64;1024x4096" },
	{ "embedding", "7,10x130;67,1000x256;1,300x70000" BIG("1024,49152x4096") },
	{ "swiglu_mlp", "3x5,5x7,5x7,7x5;67x129,129x150,129x150,150x129;8x512,512x2048,512x2048,"
			"2048x512" BIG("1x4096,4096x12800,4096x12800,12800x4096")
			    BIG("1024x4096,4096x12800,4096x12800,12800x4096") },
	{ "scaled_dot_product_attention",
	  "1x3x64,1x3x64,1x3x64;4x67x64,4x67x64,4x67x64;4x256x128,4x256x128,4x256x128;"
	  "1x32x41x128,1x32x2048x128,1x32x2048x128" BIG("32x1024x128,32x1024x128,32x1024x128") },
};

static const char *grid_of(const struct spyre_op_info *op)
{
	char key[16];
	if (op->cls == SPYRE_OPC_POINTWISE)
		snprintf(key, sizeof(key), "#%d", op->nin);
	else if (op->cls == SPYRE_OPC_REDUCTION)
		snprintf(key, sizeof(key), "#reduce");
	else
		snprintf(key, sizeof(key), "%s", op->name);
	for (size_t i = 0; i < sizeof(grids) / sizeof(grids[0]); i++)
		if (strcmp(grids[i].op, key) == 0)
			return grids[i].grid;
	return op->samples;
}

static int64_t parse_sample(struct spyre_run_opts *o, const char *sample)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", sample);
	int64_t elems = 0;
	o->nin = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int n = 0;
		int64_t e = 1;
		char *s2 = NULL;
		for (char *d = strtok_r(t, "x", &s2); d; d = strtok_r(NULL, "x", &s2)) {
			o->shapes[o->nin][n++] = strtoll(d, NULL, 10);
			e *= o->shapes[o->nin][n - 1];
		}
		o->ndims[o->nin++] = n;
		elems += e;
	}
	return elems;
}

static void set_params(struct spyre_run_opts *o, const struct spyre_op_info *op, int dim)
{
	o->params.dim = dim;
	o->params.scalar = 2.0;
	o->params.scalar2 = 0.1;
	o->params.has_min = o->params.has_max = 1;
	if (strcmp(op->name, "clamp") == 0)
		o->params.scalar = -0.1;
	if (strcmp(op->name, "permute") == 0) {
		static const int p2[] = { 1, 0 }, p3[] = { 0, 2, 1 }, p4[] = { 1, 0, 2, 3 };
		const int *p = o->ndims[0] == 2 ? p2 : o->ndims[0] == 3 ? p3 : p4;
		memcpy(o->params.perm, p, (size_t)o->ndims[0] * sizeof(int));
	}
}

struct tally {
	int points, functional;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void grid_point_at(const struct spyre_op_info *op, const char *sample, int cores, int dim,
			  struct tally *t);

/* PLAN_GRID_VERBOSE=1 prints each point and its wall time on stderr (to find the slow ones). */
static void grid_point(const struct spyre_op_info *op, const char *sample, int cores, int dim,
		       struct tally *t)
{
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("PLAN_GRID_VERBOSE") != NULL;
	double t0 = verbose ? now_s() : 0;
	if (verbose)
		fprintf(stderr, "%s %s cores %d dim %d ...\n", op->name, sample, cores, dim);
	grid_point_at(op, sample, cores, dim, t);
	if (verbose)
		fprintf(stderr, "  %.2f s\n", now_s() - t0);
}

static void grid_point_at(const struct spyre_op_info *op, const char *sample, int cores, int dim,
			  struct tally *t)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
	cr_assert_eq(spyre_hw_set_cores(&hw, cores), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = op->name;
	o.dtype = SPYRE_DTYPE_FLOAT16;
	o.hw = &hw;
	o.seed = 11;
	int64_t elems = parse_sample(&o, sample);
	set_params(&o, op, dim);
	t->points++;
	if (elems <= FUNCTIONAL_MAX_ELEMS) {
		struct spyre_run_result r;
		int rc = spyre_run(&o, &r);
		cr_expect_eq(rc, 0, "%s %s on %d cores (dim %d): %s", op->name, sample, cores, dim,
			     err_last());
		if (rc)
			return;
		cr_expect(r.passed, "%s %s on %d cores (plan %s): max abs err %g", op->name, sample,
			  cores, r.plan, r.max_abs_err);
		t->functional++;
		spyre_run_result_finish(&r);
		return;
	}
	struct spyre_plan_info *p = NULL;
	size_t n = 0;
	int rc = spyre_run_plans(&o, &p, &n);
	cr_expect_eq(rc, 0, "%s %s on %d cores: %s", op->name, sample, cores, err_last());
	if (!rc) {
		cr_expect(n > 0 && p[0].valid, "%s %s on %d cores: no valid plan (%s: %s)",
			  op->name, sample, cores, n ? p[0].name : "-", n ? p[0].why : "-");
		free(p);
	}
}

/* Walks the ops whose class is in `mask` (bit = 1u << class). */
static void walk(unsigned mask, const char *label)
{
	static const int cores[] = { 1, 3, 32 };
	struct tally t = { 0 };
	for (size_t i = 0; i < spyre_ops_count; i++) {
		const struct spyre_op_info *op = &spyre_ops[i];
		if (!(mask & (1u << op->cls)))
			continue;
		char grid[1024];
		snprintf(grid, sizeof(grid), "%s", grid_of(op));
		char *save = NULL;
		for (char *s = strtok_r(grid, ";", &save); s; s = strtok_r(NULL, ";", &save))
			for (size_t c = 0; c < sizeof(cores) / sizeof(cores[0]); c++) {
				grid_point(op, s, cores[c], -1, &t);
				if (op->cls == SPYRE_OPC_REDUCTION)
					grid_point(op, s, cores[c], 0, &t);
			}
	}
	printf("plan grid, %s: %d points planned, %d of them run functionally\n", label, t.points,
	       t.functional);
	spyre_run_release_caches();
}

#define CLS(c) (1u << (c))

Test(plan_grid, pointwise, .timeout = 1800)
{
	walk(CLS(SPYRE_OPC_POINTWISE), "pointwise");
}

Test(plan_grid, reductions_and_norms, .timeout = 1800)
{
	walk(CLS(SPYRE_OPC_REDUCTION) | CLS(SPYRE_OPC_NORM), "reductions and norms");
}

Test(plan_grid, matmul_family, .timeout = 1800)
{
	walk(CLS(SPYRE_OPC_MATMUL), "matmul family");
}

/* layout, gather, fused, and any class added later */
Test(plan_grid, the_rest, .timeout = 3600)
{
	walk(~(CLS(SPYRE_OPC_POINTWISE) | CLS(SPYRE_OPC_REDUCTION) | CLS(SPYRE_OPC_NORM) |
	       CLS(SPYRE_OPC_MATMUL)),
	     "layout, gather, fused");
}

/* The plans for what does not fit LX whole (attention's keys in chunks with an online softmax,
 * norm and log_softmax rows in column chunks) run functionally here in the default suite: the
 * grid above only plans them there (they are above its size for functional runs). */
Test(plan_grid, chunked_plans_run, .timeout = 1800)
{
	static const struct {
		const char *op, *sample, *plan_prefix;
		int causal;
	} cases[] = {
		{ "scaled_dot_product_attention", "1x16x64,1x3000x64,1x3000x64", "flash_", 0 },
		{ "scaled_dot_product_attention", "2x100x64,2x3001x64,2x3001x64", "flash_", 1 },
		{ "log_softmax", "3x300001", "online_cols", 0 },
		{ "rms_norm", "3x300001,300001", "chunked_cols", 0 },
		{ "layer_norm", "3x300001,300001,300001", "chunked_cols", 0 },
	};
	static const int cores[] = { 1, 3 };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t k = 0; k < 2; k++) {
			struct spyre_hw hw;
			cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
			cr_assert_eq(spyre_hw_set_cores(&hw, cores[k]), 0);
			struct spyre_run_opts o;
			spyre_run_opts_init(&o);
			o.op = cases[i].op;
			o.dtype = i % 2 ? SPYRE_DTYPE_BFLOAT16 : SPYRE_DTYPE_FLOAT16;
			o.hw = &hw;
			o.seed = 5;
			parse_sample(&o, cases[i].sample);
			o.params.dim = -1;
			o.params.causal = cases[i].causal;
			struct spyre_run_result r;
			cr_assert_eq(spyre_run(&o, &r), 0, "%s %s: %s", o.op, cases[i].sample,
				     err_last());
			cr_expect(r.passed, "%s %s on %d cores (%s): max abs err %g", o.op,
				  cases[i].sample, cores[k], r.plan, r.max_abs_err);
			cr_expect(strncmp(r.plan, cases[i].plan_prefix,
					  strlen(cases[i].plan_prefix)) == 0,
				  "%s %s: plan %s", o.op, cases[i].sample, r.plan);
			spyre_run_result_finish(&r);
		}
	spyre_run_release_caches();
}
