/* bench-emu: the emulator's own speed, each figure printed beside a floor measured in the same
 * run on the same machine (the ratio is what to track; wall-clock numbers alone mean nothing on
 * a shared box). Two parts:
 *   1. DL16 matmul throughput: `mm` float16 through spyre_run (no reference), GFLOP/s of the
 *      functional execution of the chosen plan, against cblas_sgemm on fp32 of the same shape.
 *      OpenBLAS is pinned to one thread, and the emulator (which calls OpenBLAS for every
 *      MATMUL) is single-threaded too, so it is one core against one core.
 *   2. Small kernel cases: N full spyre_run calls (with the reference, as a CI kernel case
 *      would), half `add` 67x256, half `mm` 256^3, against plain C loops doing that arithmetic.
 * Never asserts a time. Exits 1 when a run fails, a case's numbers disagree or a figure is not
 * sane (zero throughput), 2 on bad usage. Called by scripts/bench.sh and, with --smoke, by the
 * default test run. */
#include <cblas.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/num.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/run.h"

#define BENCH_MM_SHAPES_MAX  2
#define BENCH_REPS_MAX       20
#define BENCH_CASES_FULL     1000
#define BENCH_CASES_SMOKE    20
#define BENCH_SMALL_ADD_ROWS 67
#define BENCH_SMALL_ADD_COLS 256
#define BENCH_SMALL_MM       256

struct bench_cfg {
	int smoke, json, cores, reps;
	int no_mm, no_cases; /* --part */
	struct spyre_hw hw;
};

struct mm_fig {
	int64_t m, k, n;
	char plan[SPYRE_PLAN_NAME_MAX];
	double plan_s;     /* planning cold: candidates built, bounded, the promising ones timed */
	double plan_cpu_s; /* the same in CPU time: what it costs while others share the cores */
	double exec_cpu_s; /* execution in CPU time, the base of the cold planning's share */
	double plan_first_cpu_s; /* the first cold run's (the process's first plan for the first
				  * shape: fresh memory touched) */
	double plan_mem_s;       /* planning again: the choice from the in-memory plan cache */
	double plan_disk_s;      /* planning in a fresh cache: the choice read back from disk */
	double emu_s, blas_s;    /* best of reps */
	double emu_gflops, blas_gflops, ratio;
};

struct cases_fig {
	int n, passed;
	double emu_s, floor_s, ratio;
	double add_s, mm_s; /* the emulator's total split by kind */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench-emu [--smoke] [--cores N] [--reps N] [--part P] [--json]\n"
		"  --smoke    tiny sizes (256^3 matmul, %d small cases); a few seconds\n"
		"  --cores N  emulated cores, 1..%d (default: 32)\n"
		"  --reps N   repetitions per matmul figure, best kept (default 3, smoke 2)\n"
		"  --part P   mm, cases or all (default): which figures to measure (profiling)\n"
		"  --json     one JSON object with every figure\n",
		BENCH_CASES_SMOKE, SPYRE_CORES_MAX);
}

static int parse_args(struct bench_cfg *cfg, int argc, char **argv)
{
	cfg->cores = SPYRE_CORES_MAX;
	cfg->reps = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--smoke") == 0)
			cfg->smoke = 1;
		else if (strcmp(a, "--json") == 0)
			cfg->json = 1;
		else if (strcmp(a, "--cores") == 0 && i + 1 < argc) {
			if (num_parse_int(&cfg->cores, argv[++i], 1, SPYRE_CORES_MAX))
				return err_prefix("--cores");
		} else if (strcmp(a, "--part") == 0 && i + 1 < argc) {
			const char *v = argv[++i];
			cfg->no_mm = strcmp(v, "cases") == 0;
			cfg->no_cases = strcmp(v, "mm") == 0;
			if (!cfg->no_mm && !cfg->no_cases && strcmp(v, "all") != 0)
				return err_set(ERR_INVAL, "--part: '%s' is not mm, cases or all",
					       v);
		} else if (strcmp(a, "--reps") == 0 && i + 1 < argc) {
			if (num_parse_int(&cfg->reps, argv[++i], 1, BENCH_REPS_MAX))
				return err_prefix("--reps");
		} else
			return err_set(ERR_INVAL, "unexpected argument '%s'", a);
	}
	if (!cfg->reps)
		cfg->reps = cfg->smoke ? 2 : 3;
	int rc = spyre_hw_load_default(&cfg->hw);
	return rc ? rc : spyre_hw_set_cores(&cfg->hw, cfg->cores);
}

static void mm_opts(struct spyre_run_opts *o, const struct bench_cfg *cfg, int64_t m, int64_t k,
		    int64_t n, uint64_t seed)
{
	spyre_run_opts_init(o);
	o->op = "mm";
	o->nin = 2;
	o->ndims[0] = o->ndims[1] = 2;
	o->shapes[0][0] = m, o->shapes[0][1] = k;
	o->shapes[1][0] = k, o->shapes[1][1] = n;
	o->dtype = SPYRE_DTYPE_FLOAT16;
	o->hw = &cfg->hw;
	o->seed = seed;
}

/* One spyre_run; fills *res (the caller finishes it). Fails on a run error. */
static int run_one(const struct spyre_run_opts *o, struct spyre_run_result *res)
{
	int rc = spyre_run(o, res);
	if (rc)
		return err_prefix("%s seed %" PRIu64, o->op, o->seed);
	return 0;
}

/* Removes the plan cache directory the benchmark made (its files are all *.plan). */
static void remove_cache_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		for (struct dirent *e; (e = readdir(d)) != NULL;) {
			size_t n = strlen(e->d_name);
			if (n > 5 && strcmp(e->d_name + n - 5, ".plan") == 0) {
				char path[512];
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		}
		closedir(d);
	}
	rmdir(dir);
}

/* Emulator side of one shape: `reps` runs plan cold (caches emptied before each; the last one
 * writes its choice to a fresh on-disk plan cache), one more finds it in memory, and one more
 * after emptying the memory finds it on disk. Each figure is the best of its runs, in wall and
 * CPU time: on a shared machine a single cold sample is mostly the wait for a core. */
static int mm_emu(struct mm_fig *f, const struct bench_cfg *cfg)
{
	struct spyre_run_opts o;
	mm_opts(&o, cfg, f->m, f->k, f->n, 1);
	o.skip_reference = 1;
	char dir[] = "/tmp/bench-emu-plans-XXXXXX";
	if (!mkdtemp(dir))
		return err_set(ERR_IO, "cannot make a plan cache directory in /tmp");
	int rc = 0;
	for (int r = 0; r < cfg->reps + 2 && !rc; r++) {
		int cold = r < cfg->reps, disk = r == cfg->reps + 1;
		struct spyre_run_result res;
		if (cold || disk)
			spyre_run_release_caches();
		o.plan_cache_dir = cold && r < cfg->reps - 1 ? NULL : dir;
		if ((rc = run_one(&o, &res)) != 0)
			break;
		snprintf(f->plan, sizeof(f->plan), "%s", res.plan);
		if (cold && (!r || res.plan_s < f->plan_s))
			f->plan_s = res.plan_s;
		if (cold && (!r || res.plan_cpu_s < f->plan_cpu_s))
			f->plan_cpu_s = res.plan_cpu_s;
		if (!r)
			f->plan_first_cpu_s = res.plan_cpu_s;
		if (!cold && !disk)
			f->plan_mem_s = res.plan_s;
		if (disk)
			f->plan_disk_s = res.plan_s;
		if (cold == res.plan_cached)
			rc = err_set(ERR_INVAL, "run %d %s the plan in the cache", r,
				     cold ? "found" : "did not find");
		if (!r || res.exec_s < f->emu_s)
			f->emu_s = res.exec_s;
		if (!r || res.exec_cpu_s < f->exec_cpu_s)
			f->exec_cpu_s = res.exec_cpu_s;
		spyre_run_result_finish(&res);
	}
	remove_cache_dir(dir);
	return rc;
}

static void fill_rand(float *p, size_t n, uint64_t seed)
{
	uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		p[i] = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5);
	}
}

/* The floor of one shape: cblas_sgemm on fp32, best of reps. */
static int mm_blas(struct mm_fig *f, int reps)
{
	size_t na = (size_t)(f->m * f->k), nb = (size_t)(f->k * f->n), nc = (size_t)(f->m * f->n);
	float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float));
	float *c = malloc(nc * sizeof(float));
	if (!a || !b || !c) {
		free(a), free(b), free(c);
		return err_set(ERR_NOMEM, "sgemm floor %" PRId64 "x%" PRId64 "x%" PRId64, f->m,
			       f->k, f->n);
	}
	fill_rand(a, na, 1);
	fill_rand(b, nb, 2);
	f->blas_s = 0;
	for (int r = 0; r < reps; r++) {
		uint64_t t0 = clock_mono_ns();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)f->m, (int)f->n,
			    (int)f->k, 1.0f, a, (int)f->k, b, (int)f->n, 0.0f, c, (int)f->n);
		double s = clock_elapsed_s(t0, clock_mono_ns());
		if (!r || s < f->blas_s)
			f->blas_s = s;
	}
	free(a), free(b), free(c);
	return 0;
}

static int mm_bench(struct mm_fig *f, const struct bench_cfg *cfg)
{
	int rc = mm_emu(f, cfg);
	if (!rc)
		rc = mm_blas(f, cfg->reps);
	if (rc)
		return rc;
	double flop = 2.0 * (double)f->m * (double)f->n * (double)f->k;
	f->emu_gflops = f->emu_s > 0 ? flop / f->emu_s * 1e-9 : 0;
	f->blas_gflops = f->blas_s > 0 ? flop / f->blas_s * 1e-9 : 0;
	f->ratio = f->blas_gflops > 0 ? f->emu_gflops / f->blas_gflops : 0;
	if (!(f->emu_gflops > 0) || !(f->blas_gflops > 0))
		return err_set(ERR_INVAL, "mm %" PRId64 "x%" PRId64 "x%" PRId64 ": zero throughput",
			       f->m, f->k, f->n);
	return 0;
}

static void add_opts(struct spyre_run_opts *o, const struct bench_cfg *cfg, uint64_t seed)
{
	spyre_run_opts_init(o);
	o->op = "add";
	o->nin = 2;
	o->ndims[0] = o->ndims[1] = 2;
	o->shapes[0][0] = o->shapes[1][0] = BENCH_SMALL_ADD_ROWS;
	o->shapes[0][1] = o->shapes[1][1] = BENCH_SMALL_ADD_COLS;
	o->dtype = SPYRE_DTYPE_FLOAT16;
	o->hw = &cfg->hw;
	o->seed = seed;
}

/* n full kernel cases, alternating add and mm, each with its own seed. */
static int cases_emu(struct cases_fig *f, const struct bench_cfg *cfg)
{
	uint64_t t0 = clock_mono_ns();
	f->passed = 0;
	for (int i = 0; i < f->n; i++) {
		struct spyre_run_opts o;
		if (i % 2)
			mm_opts(&o, cfg, BENCH_SMALL_MM, BENCH_SMALL_MM, BENCH_SMALL_MM,
				(uint64_t)i + 1);
		else
			add_opts(&o, cfg, (uint64_t)i + 1);
		struct spyre_run_result res;
		uint64_t c0 = clock_mono_ns();
		int rc = run_one(&o, &res);
		if (rc)
			return rc;
		*(i % 2 ? &f->mm_s : &f->add_s) += clock_elapsed_s(c0, clock_mono_ns());
		if (res.passed)
			f->passed++;
		else
			fprintf(stderr, "bench-emu: %s seed %" PRIu64 " FAILED: max abs err %g\n",
				o.op, o.seed, res.max_abs_err);
		spyre_run_result_finish(&res);
	}
	f->emu_s = clock_elapsed_s(t0, clock_mono_ns());
	return 0;
}

/* The same arithmetic as plain host code: a naive fp32 add, one cblas_sgemm. */
static int cases_floor(struct cases_fig *f)
{
	size_t na = BENCH_SMALL_ADD_ROWS * BENCH_SMALL_ADD_COLS;
	size_t nm = (size_t)BENCH_SMALL_MM * BENCH_SMALL_MM;
	float *x = malloc(na * 3 * sizeof(float)), *m = malloc(nm * 3 * sizeof(float));
	if (!x || !m) {
		free(x), free(m);
		return err_set(ERR_NOMEM, "small-case floor buffers");
	}
	fill_rand(x, na * 2, 3);
	fill_rand(m, nm * 2, 4);
	volatile float sink = 0;
	uint64_t t0 = clock_mono_ns();
	for (int i = 0; i < f->n; i++) {
		if (i % 2) {
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, BENCH_SMALL_MM,
				    BENCH_SMALL_MM, BENCH_SMALL_MM, 1.0f, m, BENCH_SMALL_MM, m + nm,
				    BENCH_SMALL_MM, 0.0f, m + 2 * nm, BENCH_SMALL_MM);
			sink += m[2 * nm + (size_t)i % nm];
		} else {
			for (size_t j = 0; j < na; j++)
				x[2 * na + j] = x[j] + x[na + j];
			sink += x[2 * na + (size_t)i % na];
		}
	}
	f->floor_s = clock_elapsed_s(t0, clock_mono_ns());
	(void)sink;
	free(x), free(m);
	return 0;
}

static int cases_bench(struct cases_fig *f, const struct bench_cfg *cfg)
{
	int rc = cases_emu(f, cfg);
	if (!rc)
		rc = cases_floor(f);
	if (rc)
		return rc;
	f->ratio = f->floor_s > 0 ? f->emu_s / f->floor_s : 0;
	if (f->passed != f->n)
		return err_set(ERR_INVAL, "%d of %d small cases disagree with the reference",
			       f->n - f->passed, f->n);
	return 0;
}

/* Milliseconds per case of one kind: add cases are the even indices, mm the odd ones. */
static double case_ms(double total_s, int n, int odd)
{
	int k = odd ? n / 2 : (n + 1) / 2;
	return k ? total_s / k * 1e3 : 0;
}

static void print_text(const struct bench_cfg *cfg, const struct mm_fig *mm, int nmm,
		       const struct cases_fig *cs)
{
	printf("bench-emu%s: %d emulated cores; emulator and OpenBLAS both on one host thread\n",
	       cfg->smoke ? " (smoke)" : "", cfg->cores);
	for (int i = 0; i < nmm; i++) {
		const struct mm_fig *f = &mm[i];
		printf("mm f16 %" PRId64 "x%" PRId64 "x%" PRId64 " (MxKxN): emulator %.2f GFLOP/s "
		       "(exec %.4f s, plan %s), OpenBLAS sgemm %.2f GFLOP/s (%.4f s), "
		       "ratio %.3f (target >= 0.5), best of %d\n",
		       f->m, f->k, f->n, f->emu_gflops, f->emu_s, f->plan, f->blas_gflops,
		       f->blas_s, f->ratio, cfg->reps);
		printf(
		    "  planning: cold %.4f s (%.1f%% of execution, target <= 10%%), CPU %.4f s "
		    "(%.1f%% of execution's CPU %.4f s), best of %d cold (the first %.4f s CPU); "
		    "cached in memory %.4f s, cached on disk %.4f s; execution %.4f s\n",
		    f->plan_s, f->emu_s > 0 ? 100 * f->plan_s / f->emu_s : 0, f->plan_cpu_s,
		    f->exec_cpu_s > 0 ? 100 * f->plan_cpu_s / f->exec_cpu_s : 0, f->exec_cpu_s,
		    cfg->reps, f->plan_first_cpu_s, f->plan_mem_s, f->plan_disk_s, f->emu_s);
	}
	if (!cs->n)
		return;
	printf("small cases: %d (add %dx%d, mm %d^3, f16, with reference), %d passed: "
	       "%.3f s total (target < 5 s), %.3f ms per case; host floor %.4f s, ratio %.1fx\n",
	       cs->n, BENCH_SMALL_ADD_ROWS, BENCH_SMALL_ADD_COLS, BENCH_SMALL_MM, cs->passed,
	       cs->emu_s, cs->emu_s / cs->n * 1e3, cs->floor_s, cs->ratio);
	printf("  per case: add %.3f ms, mm %.3f ms; host floor per case %.4f ms\n",
	       case_ms(cs->add_s, cs->n, 0), case_ms(cs->mm_s, cs->n, 1),
	       cs->floor_s / cs->n * 1e3);
}

static void print_json(const struct bench_cfg *cfg, const struct mm_fig *mm, int nmm,
		       const struct cases_fig *cs)
{
	printf("{\"smoke\": %s, \"cores\": %d, \"reps\": %d, \"mm\": [",
	       cfg->smoke ? "true" : "false", cfg->cores, cfg->reps);
	for (int i = 0; i < nmm; i++) {
		const struct mm_fig *f = &mm[i];
		printf("%s{\"m\": %" PRId64 ", \"k\": %" PRId64 ", \"n\": %" PRId64
		       ", \"plan\": \"%s\", \"emu_exec_s\": %.6f, \"emu_gflops\": %.4f, "
		       "\"blas_s\": %.6f, \"blas_gflops\": %.4f, \"ratio\": %.4f, "
		       "\"plan_s\": %.6f, \"plan_cpu_s\": %.6f, \"plan_first_cpu_s\": %.6f, "
		       "\"emu_exec_cpu_s\": %.6f, \"plan_mem_s\": %.6f, \"plan_disk_s\": %.6f}",
		       i ? ", " : "", f->m, f->k, f->n, f->plan, f->emu_s, f->emu_gflops, f->blas_s,
		       f->blas_gflops, f->ratio, f->plan_s, f->plan_cpu_s, f->plan_first_cpu_s,
		       f->exec_cpu_s, f->plan_mem_s, f->plan_disk_s);
	}
	if (!cs->n) {
		printf("], \"cases\": null}\n");
		return;
	}
	printf("], \"cases\": {\"n\": %d, \"passed\": %d, \"total_s\": %.6f, "
	       "\"per_case_ms\": %.6f, \"add_ms\": %.6f, \"mm_ms\": %.6f, \"floor_s\": %.6f, "
	       "\"ratio\": %.4f}}\n",
	       cs->n, cs->passed, cs->emu_s, cs->emu_s / cs->n * 1e3, case_ms(cs->add_s, cs->n, 0),
	       case_ms(cs->mm_s, cs->n, 1), cs->floor_s, cs->ratio);
}

int main(int argc, char **argv)
{
	struct bench_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	if (parse_args(&cfg, argc, argv)) {
		fprintf(stderr, "bench-emu: %s\n", err_last());
		usage(stderr);
		return 2;
	}
	openblas_set_num_threads(1);
	struct mm_fig mm[BENCH_MM_SHAPES_MAX];
	memset(mm, 0, sizeof(mm));
	int nmm = 0;
	if (!cfg.no_mm && cfg.smoke)
		mm[nmm].m = mm[nmm].k = mm[nmm].n = 256, nmm++;
	else if (!cfg.no_mm) {
		mm[nmm].m = mm[nmm].k = mm[nmm].n = 1024, nmm++;
		mm[nmm].m = 4096, mm[nmm].k = 1024, mm[nmm].n = 4096, nmm++;
	}
	struct cases_fig cs = { .n = cfg.no_cases ? 0
				     : cfg.smoke  ? BENCH_CASES_SMOKE
						  : BENCH_CASES_FULL };
	int rc = 0;
	for (int i = 0; i < nmm && !rc; i++)
		rc = mm_bench(&mm[i], &cfg);
	if (!rc && cs.n)
		rc = cases_bench(&cs, &cfg);
	if (rc) {
		fprintf(stderr, "bench-emu: %s\n", err_last());
		return 1;
	}
	if (cfg.json)
		print_json(&cfg, mm, nmm, &cs);
	else
		print_text(&cfg, mm, nmm, &cs);
	return 0;
}
