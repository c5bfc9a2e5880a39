/* bench-run: `spyre-ci run`'s executor on every kernel case of the shipped specs, each figure
 * printed beside a floor measured in the same run:
 *   1. every case (testspecs/specs, all tiers: at least 4,000) through the pool on 2 workers:
 *      wall time and cases per second, beside the same cases run one after another in this
 *      process without the pool;
 *   2. the pool's own overhead per case: N no-op cases (a runner that only answers) through
 *      the pool on 2 workers, beside the same no-op called N times in this process.
 * Targets: part 1 under 120 s; part 2 under 1 ms per case. Never asserts a time: exits 1 when
 * a run fails or a figure is not sane (fewer cases than the shipped specs give, a case that did
 * not pass or skip), 2 on bad usage. --smoke (the default test run) takes the first 300 cases
 * and 2,000 no-ops; --json adds one line of the figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"
#include "executors/adapters.h"
#include "executors/collect.h"
#include "executors/pool.h"
#include "executors/report.h"

#define SMOKE_CASES 300
#define NOOPS_FULL  50000
#define NOOPS_SMOKE 2000
#define JOBS        2

/* the figures, for --json */
static struct {
	size_t cases, noops;
	double pool_s, one_s, noop_pool_s, noop_one_s;
} fig;

static void noop(const struct exec_case *c, struct exec_result *r, int fd, void *ctx)
{
	(void)fd, (void)ctx;
	memcpy(r->id, c->id, sizeof(r->id));
	r->outcome = EXEC_PASSED;
}

static int load_cases(const char *dir, struct exec_case **out, size_t *n)
{
	struct spec_set *set = NULL;
	struct spec_resolver *r = NULL;
	struct spec_case_list list;
	struct spec_diag_list diags;
	struct spec_load_opts o = { .diags = &diags };
	testspecs_cases_init(&list);
	testspecs_diags_init(&diags);
	int rc = testspecs_set_create(&set);
	if (!rc)
		rc = testspecs_load_path(set, dir, &o);
	if (!rc)
		rc = testspecs_resolver_create(&r, set);
	if (!rc)
		rc = exec_collect_cases(&list, set, r, NULL);
	*out = calloc(list.n + 1, sizeof(**out));
	if (!rc && !*out)
		rc = err_set(ERR_NOMEM, "out of memory");
	for (size_t i = 0; !rc && i < list.n; i++)
		rc = exec_case_from_spec(&(*out)[i], &list.v[i]);
	*n = list.n;
	testspecs_cases_finish(&list);
	testspecs_diags_finish(&diags);
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
	return rc;
}

/* 0 when every result passed or was skipped (xpassed and xfailed are what the specs expect). */
static int sane(const struct exec_result *res, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (!exec_outcome_ok((enum exec_outcome)res[i].outcome)) {
			fprintf(stderr, "bench-run: %s: case %s %s: %s\n", what, res[i].id,
				exec_outcome_name((enum exec_outcome)res[i].outcome),
				res[i].message);
			return 1;
		}
	return 0;
}

static int part_cases(struct exec_case *cases, size_t n, const struct exec_adapters *ad)
{
	struct exec_result *res = calloc(n, sizeof(*res));
	if (!res)
		return 1;
	struct exec_pool_opts o = { .jobs = JOBS, .adapters = ad, .retries = 1 };
	uint64_t t0 = clock_mono_ns();
	int rc = exec_pool_run(cases, n, &o, res, NULL);
	double pool_s = clock_elapsed_s(t0, clock_mono_ns());
	rc = rc ? 1 : sane(res, n, "pool");
	t0 = clock_mono_ns();
	for (size_t i = 0; i < n; i++)
		exec_case_run(&cases[i], ad, &res[i]);
	double one_s = clock_elapsed_s(t0, clock_mono_ns());
	rc = rc ? rc : sane(res, n, "in process");
	fig.cases = n, fig.pool_s = pool_s, fig.one_s = one_s;
	struct exec_summary s;
	exec_summary_make(&s, res, n);
	printf("cases:     %zu kernel cases (%zu passed, %zu skipped, %zu xpassed)\n", n,
	       s.count[EXEC_PASSED], s.count[EXEC_SKIPPED], s.count[EXEC_XPASSED]);
	printf("pool x%d:   %8.2f s  %8.0f cases/s   (target < 120 s)\n", JOBS, pool_s,
	       (double)n / pool_s);
	printf("1 process: %8.2f s  %8.0f cases/s   (floor: no pool, no isolation, one core)\n",
	       one_s, (double)n / one_s);
	free(res);
	return rc;
}

static int part_noop(size_t n)
{
	struct exec_case *cases = calloc(n, sizeof(*cases));
	struct exec_result *res = calloc(n, sizeof(*res));
	if (!cases || !res)
		return 1;
	for (size_t i = 0; i < n; i++) {
		snprintf(cases[i].id, sizeof(cases[i].id), "%016zx", i);
		snprintf(cases[i].test_id, sizeof(cases[i].test_id), "test/t.py::T::test_%zu", i);
	}
	struct exec_pool_opts o = { .jobs = JOBS, .runner = noop };
	uint64_t t0 = clock_mono_ns();
	int rc = exec_pool_run(cases, n, &o, res, NULL);
	double pool_s = clock_elapsed_s(t0, clock_mono_ns());
	rc = rc ? 1 : sane(res, n, "no-op pool");
	t0 = clock_mono_ns();
	for (size_t i = 0; i < n; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		noop(&cases[i], &res[i], -1, NULL);
	}
	double one_s = clock_elapsed_s(t0, clock_mono_ns());
	fig.noops = n, fig.noop_pool_s = pool_s, fig.noop_one_s = one_s;
	printf("no-op x%zu through the pool x%d: %.1f us per case of wall time, %.1f us per case "
	       "per worker (target < 1000 us); worker start-up included\n",
	       n, JOBS, pool_s / (double)n * 1e6, pool_s * JOBS / (double)n * 1e6);
	printf("no-op x%zu in one process:       %.3f us per case (floor)\n", n,
	       one_s / (double)n * 1e6);
	free(cases);
	free(res);
	return rc;
}

int main(int argc, char **argv)
{
	int smoke = 0, json = 0;
	const char *specs = SPYRE_SPECS_DIR, *adapters = SPYRE_ADAPTERS_FILE;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke"))
			smoke = 1;
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else {
			fprintf(stderr, "usage: bench-run [--smoke] [--json]\n");
			return 2;
		}
	}
	struct exec_case *cases = NULL;
	size_t n = 0;
	struct exec_adapters *ad = NULL;
	if (load_cases(specs, &cases, &n) != 0 || exec_adapters_load(&ad, adapters) != 0) {
		fprintf(stderr, "bench-run: %s\n", err_last());
		return 1;
	}
	int rc = 0;
	if (!smoke && n < 4000) {
		fprintf(stderr, "bench-run: only %zu cases in %s (want at least 4,000)\n", n,
			specs);
		rc = 1;
	}
	size_t take = smoke && n > SMOKE_CASES ? SMOKE_CASES : n;
	rc |= part_cases(cases, take, ad);
	rc |= part_noop(smoke ? NOOPS_SMOKE : NOOPS_FULL);
	if (json)
		printf("{\"bench\":\"run\",\"cases\":%zu,\"pool_s\":%.3f,\"one_process_s\":%.3f,"
		       "\"noops\":%zu,\"noop_pool_us\":%.2f,\"noop_floor_us\":%.4f}\n",
		       fig.cases, fig.pool_s, fig.one_s, fig.noops,
		       fig.noops ? fig.noop_pool_s / (double)fig.noops * 1e6 : 0,
		       fig.noops ? fig.noop_one_s / (double)fig.noops * 1e6 : 0);
	exec_adapters_destroy(ad);
	free(cases);
	return rc;
}
