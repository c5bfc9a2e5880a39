/* The run (funnel.h: funnel_run): kernel cases flattened for the executors, cut to one shard
 * when asked, run in the executors' process pool with the adapter table, and the report files
 * written from the results. Also the nightly run's cases (every entry of the specs). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "common/limits.h"
#include "executors/adapters.h"
#include "executors/collect.h"
#include "funnel/funnel.h"

int funnel_all_cases(struct spec_case_list *list, const struct funnel_specs *specs,
		     const char *tier)
{
	return exec_collect_cases(list, specs->set, specs->resolver, tier);
}

void funnel_results_finish(struct funnel_results *r)
{
	free(r->cases);
	free(r->res);
	memset(r, 0, sizeof *r);
}

/* The cases flattened, then only the shard's when a shard is asked for. */
static int flatten(struct funnel_results *out, const struct spec_case *const *cases, size_t n,
		   const struct funnel_run_opts *o)
{
	bool *keep = calloc(n + 1, sizeof *keep);
	out->cases = calloc(n + 1, sizeof *out->cases);
	int rc = keep && out->cases ? 0 : err_set(ERR_NOMEM, "out of memory for %zu cases", n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = exec_case_from_spec(&out->cases[i], cases[i]);
	if (rc == 0 && o->shard_count)
		rc = exec_shard_plan(out->cases, n, o->durations, o->n_durations, o->shard_index,
				     o->shard_count, keep, NULL);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!o->shard_count || keep[i])
			out->cases[out->n++] = out->cases[i];
	free(keep);
	return rc;
}

static int load_adapters(struct exec_adapters **out, const struct funnel_run_opts *o)
{
	if (o->adapters_file)
		return exec_adapters_load(out, o->adapters_file);
	return exec_adapters_load_beside(out, o->spec_paths, o->n_spec_paths);
}

int funnel_run(struct funnel_results *out, const struct spec_case *const *cases, size_t n,
	       const struct funnel_run_opts *o)
{
	memset(out, 0, sizeof *out);
	struct exec_adapters *adapters = NULL;
	int rc = flatten(out, cases, n, o);
	if (rc == 0)
		rc = load_adapters(&adapters, o);
	if (rc == 0 && !(out->res = calloc(out->n + 1, sizeof *out->res)))
		rc = err_set(ERR_NOMEM, "out of memory for %zu results", out->n);
	if (rc == 0 && o->on_start)
		o->on_start(o->progress_ctx, out->n);
	struct exec_pool_opts po = {
		.jobs = o->jobs,
		.timeout_s = o->timeout_s,
		.mem_bytes = o->mem_bytes,
		.retries = o->retries,
		.adapters = adapters,
		.runner = o->runner,
		.runner_ctx = o->runner_ctx,
		.worker_exe = o->worker_exe,
		.progress = o->progress,
		.progress_ctx = o->progress_ctx,
		.stop = o->stop,
	};
	struct exec_pool_stats st = { 0 };
	if (rc == 0 && out->n > 0)
		rc = exec_pool_run(out->cases, out->n, &po, out->res, &st);
	if (rc == 1) { /* a stop request ended the run: the cases left are EXEC_NOT_RUN */
		out->stopped = true;
		rc = 0;
	}
	exec_adapters_destroy(adapters);
	if (rc == 0)
		exec_summary_make(&out->summary, out->res, out->n);
	return rc;
}

static int make_dir(const char *dir)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return err_set_errno(ERR_IO, "cannot create %s", dir);
	return 0;
}

int funnel_results_write(const struct funnel_results *r, const char *dir)
{
	char path[PATH_TEXT_MAX];
	int rc = make_dir(dir);
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/junit.xml", dir);
		rc = exec_report_junit(path, r->cases, r->res, r->n);
	}
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/results.jsonl", dir);
		rc = exec_report_jsonl(path, r->cases, r->res, r->n);
	}
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/summary.json", dir);
		rc = exec_report_summary(path, &r->summary);
	}
	return rc;
}
