/* A job's run after its selection (jobrun.h): the fork pool, the report files, the results in
 * the store, the dashboard messages in the outbox. */
#include "jobrun.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "common/log.h"
#include "dashboard-client/encode.h"
#include "dashboard-client/job.h"
#include "executors/adapters.h"
#include "executors/report.h"
#include "metrics.h"

/* The outbox on the caller's store handle: the thread that uses the one uses the other. */
int jobrun_open(struct jobrun *jr, struct store *s)
{
	return s->ops->outbox_open(s, &jr->ob);
}

void jobrun_close(struct jobrun *jr)
{
	dc_outbox_destroy(jr->ob);
	jr->ob = NULL;
}

static int make_dir(const char *dir)
{
	if (mkdir(dir, 0750) != 0 && errno != EEXIST)
		return err_set_errno(ERR_IO, "cannot create %s", dir);
	return 0;
}

static int set_dir(struct jobrun *jr, const struct job_row *j, const struct config *c)
{
	char reports[PATH_TEXT_MAX - 128];
	snprintf(reports, sizeof(reports), "%s/reports", c->state_dir);
	if (snprintf(jr->dir, sizeof(jr->dir), "%s/%lld", reports, (long long)j->id) >=
	    (int)sizeof(jr->dir))
		return err_set(ERR_LIMIT, "state_dir is too long");
	int rc = make_dir(reports);
	return rc ? rc : make_dir(jr->dir);
}

/* The event the dashboard sees: the poller watches branches, so its jobs are pushes. */
static const char *dc_event_of(const struct job_row *j)
{
	return strcmp(j->event, "pull_request") == 0 ? "pull_request" : "push";
}

/* job.json (completed_at is rewritten when the job ends): the identity is the job's (delivery_id
 * "spyre-ci:<event>:<ref>@<head>", run_id and check_run_id the job id, run_attempt 1 whatever the
 * attempts: the keys must not change when a job is run again), and a payload in the CRCR shape
 * built from what the job knows. */
static json_t *job_json(const struct job_row *j, const struct config *c, int64_t now)
{
	char delivery[400], url[200], when[40], id[24];
	snprintf(delivery, sizeof(delivery), "spyre-ci:%s:%s@%s", j->event, j->ref, j->head);
	snprintf(url, sizeof(url), "http://%s:%d/api/jobs/%lld", c->listen_host, c->listen_port,
		 (long long)j->id);
	snprintf(id, sizeof(id), "%lld", (long long)j->id);
	clock_format_iso8601(when, sizeof(when), now, 0);
	json_t *payload = json_pack("{s:s, s:s, s:s, s:s?, s:{s:s}}", "event", j->event, "ref",
				    j->ref, "after", j->head, "before", j->base[0] ? j->base : NULL,
				    "repository", "full_name", c->upstream_repo);
	if (payload && j->pr_number)
		jx_set_int(payload, "number", j->pr_number);
	json_t *root = json_pack(
	    "{s:s, s:s, s:o, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}, s:{s:s, s:s}}",
	    "event_type", dc_event_of(j), "delivery_id", delivery, "payload", payload, "workflow",
	    "name", "spyre-ci", "url", url, "run_id", id, "run_attempt", "1", "job_name",
	    "kernel-cases", "check_run_id", id, "artifact_url", url, "started_at", when,
	    "completed_at", when, "hud", "verified_repo",
	    c->webhook_dispatch_repo[0] ? c->webhook_dispatch_repo : "local/spyre-ci",
	    "downstream_repo_level", "L1");
	return root;
}

/* The dispatch's identity in place of the job's own. */
static void echo_dispatch(json_t *root, struct store *s, int64_t id)
{
	char *text = NULL;
	if (s->ops->job_dispatch(s, &text, id) < 0)
		return;
	json_t *dj = jx_loadb(text, strlen(text), WEBHOOK_BODY_MAX);
	enum dc_event ev;
	const char *et = json_string_value(jx_get(dj, "event_type"));
	if (et && dc_event_parse(&ev, et) == 0 && !dc_event_is_periodic(ev))
		jx_set_str(root, "event_type", et);
	const char *did = json_string_value(jx_get(dj, "delivery_id"));
	if (did)
		jx_set_str(root, "delivery_id", did);
	if (json_is_object(jx_get(dj, "payload")))
		jx_set_new(root, "payload", json_incref(jx_get(dj, "payload")));
	json_decref(dj);
	free(text);
}

static int write_json(const char *dir, const char *name, json_t *v)
{
	char path[PATH_TEXT_MAX], *text = jx_dumps(v);
	if (!text)
		return err_set(ERR_NOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int rc = fs_atomic_write(path, text, strlen(text), 0640);
	free(text);
	return rc;
}

/* Queues the job's message of `status` for every configured target. */
static int queue(struct jobrun *jr, const struct config *c, const struct dc_job *job,
		 const struct dc_results *r, enum dc_status status)
{
	struct {
		const char *url, *target;
		enum dc_format f;
	} t[] = { { c->crcr_url, OUTBOX_TARGET_CRCR, DC_FORMAT_CRCR },
		  { c->hud_url, OUTBOX_TARGET_HUD, DC_FORMAT_HUD } };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < 2; i++) {
		if (!t[i].url || !t[i].url[0])
			continue;
		struct dc_message *m = NULL;
		size_t n = 0;
		rc = dc_job_messages(&m, &n, job, r, t[i].f);
		for (size_t k = 0; rc == 0 && k < n; k++) {
			bool added;
			if (m[k].status == status)
				rc = jr->ob->ops->enqueue(jr->ob, t[i].target, &m[k], &added);
		}
		for (size_t k = 0; k < n; k++)
			dc_message_finish(&m[k]);
		free(m);
	}
	return rc;
}

int jobrun_started(struct jobrun *jr, struct store *s, const struct job_row *j,
		   const struct config *c)
{
	int rc = set_dir(jr, j, c);
	json_t *root = rc == 0 ? job_json(j, c, clock_wall_ms()) : NULL;
	if (rc == 0 && !root)
		rc = err_set(ERR_NOMEM, "out of memory");
	if (rc == 0)
		echo_dispatch(root, s, j->id);
	if (rc == 0)
		rc = write_json(jr->dir, "job.json", root);
	struct dc_job job;
	char *text = rc == 0 ? jx_dumps(root) : NULL;
	if (rc == 0 && !text)
		rc = err_set(ERR_NOMEM, "out of memory");
	if (rc == 0)
		rc = dc_job_parse(&job, "job.json", text, strlen(text));
	if (rc == 0) {
		struct dc_results none = { 0 };
		rc = queue(jr, c, &job, &none, DC_STATUS_IN_PROGRESS);
		dc_job_finish(&job);
	}
	free(text);
	json_decref(root);
	return rc;
}

static int write_reports(const char *dir, const struct exec_case *cases,
			 const struct exec_result *res, size_t n)
{
	char path[PATH_TEXT_MAX];
	struct exec_summary sum;
	exec_summary_make(&sum, res, n);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	int rc = exec_report_junit(path, cases, res, n);
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/results.jsonl", dir);
		rc = exec_report_jsonl(path, cases, res, n);
	}
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/summary.json", dir);
		rc = exec_report_summary(path, &sum);
	}
	return rc;
}

/* The results as rows of the store, each case named as the JUnit report names it. */
static int record(struct jobrun *jr, struct store *s, const char *owner, const struct job_row *j,
		  const struct exec_case *cases, const struct exec_result *res, size_t n)
{
	struct result_row *rows = calloc(n + 1, sizeof(*rows));
	char(*names)[256] = calloc(n + 1, sizeof(*names));
	int rc = rows && names ? 0 : err_set(ERR_NOMEM, "out of memory for %zu results", n);
	size_t k = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (res[i].outcome == EXEC_NOT_RUN)
			continue;
		exec_case_name(names[k], sizeof(names[k]), &cases[i]);
		rows[k] = (struct result_row){ names[k],
					       exec_outcome_name((enum exec_outcome)res[i].outcome),
					       res[i].message };
		k++;
		if ((unsigned)res[i].outcome < M_CASE_OUTCOMES)
			atomic_fetch_add(&jr->metrics->case_outcomes[res[i].outcome], 1);
	}
	if (rc == 0)
		rc = s->ops->results_put(s, j->id, owner, rows, k, clock_wall_ms());
	free(rows);
	free(names);
	return rc;
}

static int pool(struct jobrun *jr, const struct config *c, struct exec_case *cases, size_t n,
		struct exec_result *res, struct exec_pool_stats *st)
{
	struct exec_adapters *adapters = NULL;
	int rc = exec_adapters_load_beside(&adapters, (const char *const *)c->specs.v, c->specs.n);
	struct exec_pool_opts o = {
		.jobs = c->executor_jobs,
		.timeout_s = c->executor_timeout_s,
		.mem_bytes = c->executor_memory_max,
		.retries = 1,
		.adapters = adapters,
		.runner = jr->runner,
		.runner_ctx = jr->runner_ctx,
		.stop = jr->stop,
	};
	if (rc == 0)
		rc = exec_pool_run(cases, n, &o, res, st);
	exec_adapters_destroy(adapters);
	return rc;
}

int jobrun_cases(struct jobrun *jr, struct store *s, const char *owner, const struct job_row *j,
		 const struct config *c, const struct spec_case_list *list)
{
	size_t n = list->n;
	struct exec_case *cases = calloc(n + 1, sizeof(*cases));
	struct exec_result *res = calloc(n + 1, sizeof(*res));
	int rc = cases && res ? 0 : err_set(ERR_NOMEM, "out of memory for %zu cases", n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = exec_case_from_spec(&cases[i], &list->v[i]);
	struct exec_pool_stats st = { 0 };
	if (rc == 0 && n > 0)
		rc = pool(jr, c, cases, n, res, &st);
	if (rc == 0 && st.stopped)
		rc = 1;
	if (rc == 0)
		rc = write_reports(jr->dir, cases, res, n);
	if (rc == 0)
		rc = record(jr, s, owner, j, cases, res, n);
	free(cases);
	free(res);
	return rc;
}

/* completed from the job.json in `dir`: with its results.jsonl, or (failed) with none and the
 * conclusion "failure". */
static int queue_completed(struct jobrun *jr, const char *dir, const struct config *c, bool failed)
{
	char path[PATH_TEXT_MAX], when[40];
	struct dc_job job;
	struct dc_results r = { 0 };
	snprintf(path, sizeof(path), "%s/job.json", dir);
	int rc = dc_job_load(&job, path);
	if (rc)
		return rc;
	free(job.completed_at);
	clock_format_iso8601(when, sizeof(when), clock_wall_ms(), 0);
	if (!(job.completed_at = strdup(when)))
		rc = err_set(ERR_NOMEM, "out of memory");
	if (rc == 0 && failed) {
		free(job.conclusion);
		if (!(job.conclusion = strdup("failure")))
			rc = err_set(ERR_NOMEM, "out of memory");
	}
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	if (rc == 0 && !failed)
		rc = dc_results_load(&r, path);
	if (rc == 0)
		rc = queue(jr, c, &job, &r, DC_STATUS_COMPLETED);
	dc_results_finish(&r);
	dc_job_finish(&job);
	return rc;
}

int jobrun_completed(struct jobrun *jr, const struct job_row *j, const struct config *c)
{
	return queue_completed(jr, jr->dir, c, false);
}

int jobrun_failed(struct jobrun *jr, const struct job_row *j, const struct config *c)
{
	char dir[PATH_TEXT_MAX - 64], path[PATH_TEXT_MAX];
	snprintf(dir, sizeof(dir), "%s/reports/%lld", c->state_dir, (long long)j->id);
	snprintf(path, sizeof(path), "%s/job.json", dir);
	if (access(path, R_OK) != 0)
		return 0; /* in_progress was never queued: the dashboard knows nothing of it */
	return queue_completed(jr, dir, c, true);
}
