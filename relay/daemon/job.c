/* A job held by a worker (job.h): its reports directory and job.json, its messages to the
 * dashboard through the funnel's report step, its results in the store, and how an attempt
 * that did not finish ends. */
#include "job.h"

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
#include "common/log.h"
#include "dashboard-client/job.h"
#include "metrics.h"

int job_init(struct job *j, const struct job_row *row, const struct config *c, struct store *s,
	     struct dc_outbox *ob, const char *owner, struct metrics *m)
{
	*j = (struct job){ .row = *row, .c = c, .s = s, .ob = ob, .owner = owner, .m = m };
	if (snprintf(j->dir, sizeof(j->dir), "%s/reports/%lld", c->state_dir, (long long)row->id) >=
	    (int)sizeof(j->dir))
		return err_set(ERR_LIMIT, "state_dir is too long");
	return 0;
}

bool job_announced(const struct job *j)
{
	char path[PATH_TEXT_MAX];
	snprintf(path, sizeof(path), "%s/job.json", j->dir);
	return access(path, R_OK) == 0;
}

static int make_dir(const char *dir)
{
	if (mkdir(dir, 0750) != 0 && errno != EEXIST)
		return err_set_errno(ERR_IO, "cannot create %s", dir);
	return 0;
}

/* The event the dashboard sees: the poller watches branches, so its jobs are pushes. */
static const char *dc_event_of(const struct job_row *j)
{
	return strcmp(j->event, "pull_request") == 0 ? "pull_request" : "push";
}

/* job.json (completed_at is replaced when the job ends): the identity is the job's
 * (delivery_id "spyre-ci:<event>:<ref>@<head>", run_id and check_run_id the job id, run_attempt
 * 1 whatever the attempts: the keys must not change when a job is run again), and a payload in
 * the CRCR shape built from what the job knows. */
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

/* Writes job.json, checked by the parser `spyre-ci report` reads it with. */
static int write_job_json(const struct job *j, json_t *root)
{
	char path[PATH_TEXT_MAX], *text = jx_dumps(root);
	if (!text)
		return err_set(ERR_NOMEM, "out of memory");
	struct dc_job parsed;
	snprintf(path, sizeof(path), "%s/job.json", j->dir);
	int rc = dc_job_parse(&parsed, path, text, strlen(text));
	if (rc == 0) {
		dc_job_finish(&parsed);
		rc = fs_atomic_write(path, text, strlen(text), 0640);
	}
	free(text);
	return rc;
}

/* Queues the job's messages of `r` for every configured target. */
static int queue(const struct job *j, struct funnel_report *r)
{
	const struct config *c = j->c;
	const struct {
		const char *url, *target;
		enum dc_format f;
	} t[] = { { c->crcr_url, OUTBOX_TARGET_CRCR, DC_FORMAT_CRCR },
		  { c->hud_url, OUTBOX_TARGET_HUD, DC_FORMAT_HUD } };
	r->dir = j->dir;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].url && t[i].url[0])
			rc = funnel_report_queue(j->ob, t[i].target, t[i].f, r, NULL);
	return rc;
}

int job_announce(struct job *j)
{
	char reports[PATH_TEXT_MAX];
	snprintf(reports, sizeof(reports), "%s/reports", j->c->state_dir);
	int rc = make_dir(reports);
	if (rc == 0)
		rc = make_dir(j->dir);
	json_t *root = rc == 0 ? job_json(&j->row, j->c, clock_wall_ms()) : NULL;
	if (rc == 0 && !root)
		rc = err_set(ERR_NOMEM, "out of memory");
	if (rc == 0) {
		echo_dispatch(root, j->s, j->row.id);
		rc = write_job_json(j, root);
	}
	json_decref(root);
	struct funnel_report r = { .statuses = FUNNEL_STATUS(DC_STATUS_IN_PROGRESS) };
	return rc ? rc : queue(j, &r);
}

/* The results as rows of the store, each case named as the JUnit report names it. */
static int record_rows(struct job *j, const struct funnel_results *r)
{
	struct result_row *rows = calloc(r->n + 1, sizeof(*rows));
	char(*names)[256] = calloc(r->n + 1, sizeof(*names));
	int rc = rows && names ? 0 : err_set(ERR_NOMEM, "out of memory for %zu results", r->n);
	size_t k = 0;
	for (size_t i = 0; rc == 0 && i < r->n; i++) {
		if (r->res[i].outcome == EXEC_NOT_RUN)
			continue;
		exec_case_name(names[k], sizeof(names[k]), &r->cases[i]);
		rows[k] =
		    (struct result_row){ names[k],
					 exec_outcome_name((enum exec_outcome)r->res[i].outcome),
					 r->res[i].message };
		k++;
		if (j->m && (unsigned)r->res[i].outcome < M_CASE_OUTCOMES)
			atomic_fetch_add(&j->m->case_outcomes[r->res[i].outcome], 1);
	}
	if (rc == 0)
		rc = j->s->ops->results_put(j->s, j->row.id, j->owner, rows, k, clock_wall_ms());
	free(rows);
	free(names);
	return rc;
}

int job_record(struct job *j, const struct funnel_results *r)
{
	int rc = funnel_results_write(r, j->dir);
	return rc ? rc : record_rows(j, r);
}

static int queue_completed(struct job *j, const char *conclusion, bool with_results)
{
	char when[CLOCK_ISO8601_LEN + 1];
	clock_format_iso8601(when, sizeof(when), clock_wall_ms(), 0);
	struct funnel_report r = { .with_results = with_results,
				   .statuses = FUNNEL_STATUS(DC_STATUS_COMPLETED),
				   .conclusion = conclusion,
				   .completed_at = when };
	return queue(j, &r);
}

int job_complete(struct job *j, const char *detail)
{
	int rc = queue_completed(j, NULL, true);
	if (rc == 0)
		rc = j->s->ops->finish(j->s, j->row.id, j->owner, JOB_REPORTED, detail,
				       clock_wall_ms());
	if (rc == 0 && j->m)
		atomic_fetch_add(&j->m->jobs_completed, 1);
	return rc;
}

static bool may_pass(int rc)
{
	return rc == ERR_IO || rc == ERR_NOMEM;
}

enum job_end job_end_of(int rc, bool stopping, int64_t attempts, int max_attempts)
{
	if (rc == JOB_ATTEMPT_STOPPED)
		return JOB_END_RELEASE;
	if (rc == ERR_BADSTATE)
		return JOB_END_LOST;
	if (stopping) /* a fetch or a write cut short by the stop: not the job's failure */
		return JOB_END_RELEASE;
	if (may_pass(rc) && attempts < max_attempts)
		return JOB_END_RETRY;
	return JOB_END_FAIL;
}

int64_t job_retry_wait_ms(int64_t attempts)
{
	int64_t ms = JOB_RETRY_FIRST_MS;
	for (int64_t i = 1; i < attempts && ms < JOB_RETRY_MAX_MS; i++)
		ms *= 2;
	return ms < JOB_RETRY_MAX_MS ? ms : JOB_RETRY_MAX_MS;
}

/* Fails the job for good: `completed` with the conclusion "failure" when the dashboard heard
 * of it, then the row. */
static void fail(struct job *j, const char *detail)
{
	long long id = (long long)j->row.id;
	log_error("job %lld: %s", id, detail);
	if (job_announced(j) && queue_completed(j, "failure", false) < 0)
		log_error("job %lld: %s", id, err_last());
	if (j->s->ops->finish(j->s, j->row.id, j->owner, JOB_FAILED, detail, clock_wall_ms()) < 0)
		log_error("job %lld: %s", id, err_last());
}

enum job_end job_settle(struct job *j, int rc, bool stopping, const char *why)
{
	long long id = (long long)j->row.id;
	int max = j->c->max_attempts;
	enum job_end end = job_end_of(rc, stopping, j->row.attempts, max);
	char detail[400];
	int64_t now = clock_wall_ms();
	switch (end) {
	case JOB_END_RELEASE:
		if (j->m)
			atomic_fetch_add(&j->m->jobs_released, 1);
		log_info("job %lld: stopped (%s); back in the queue", id,
			 rc == JOB_ATTEMPT_STOPPED ? "mid-run" : why);
		if (j->s->ops->release(j->s, j->row.id, j->owner, now) < 0)
			log_error("job %lld: %s", id, err_last());
		break;
	case JOB_END_RETRY: {
		int64_t wait = job_retry_wait_ms(j->row.attempts);
		snprintf(detail, sizeof(detail), "attempt %lld of %d failed, next in %lld s: %s",
			 (long long)j->row.attempts, max, (long long)(wait / 1000), why);
		log_warn("job %lld: %s", id, detail);
		if (j->s->ops->retry(j->s, j->row.id, j->owner, now + wait, detail, now) < 0)
			log_error("job %lld: %s", id, err_last());
		else if (j->m)
			atomic_fetch_add(&j->m->jobs_retried, 1);
		break;
	}
	case JOB_END_FAIL:
		if (may_pass(rc))
			snprintf(detail, sizeof(detail), "attempt %lld of %d failed, no more: %s",
				 (long long)j->row.attempts, max, why);
		else
			snprintf(detail, sizeof(detail), "%s", why);
		if (j->m)
			atomic_fetch_add(&j->m->selections_failed, 1);
		fail(j, detail);
		break;
	case JOB_END_LOST:
		if (j->m)
			atomic_fetch_add(&j->m->selections_failed, 1);
		log_error("job %lld: %s", id, why);
		break;
	}
	return end;
}

void job_give_up(struct job *j)
{
	char detail[sizeof(j->row.detail) + 96];
	snprintf(detail, sizeof(detail),
		 "gave up after %lld attempts (workers.max_attempts %d)%s%s",
		 (long long)(j->row.attempts - 1), j->c->max_attempts,
		 j->row.detail[0] ? "; last: " : "", j->row.detail);
	fail(j, detail);
}
