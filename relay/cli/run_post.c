/* `spyre-ci run --post URL`: the run's callbacks to the CRCR relay (or HUD) through
 * dashboard-client, from the same results directory `spyre-ci report` reads (docs/report.md):
 * --out holds job.json, results.jsonl and outbox.sqlite. `in_progress` is queued and tried once
 * when execution starts (a receiver that is down then does not hold the cases up: the message
 * waits in the outbox, and the outbox sends it before `completed`); `completed`, with the
 * counts, is queued at the end and the run waits until every message is delivered or
 * dead-lettered. The job's identity lives in --out/job.json, so a second run with the same
 * --out is the same job: it resumes, and sends nothing that was delivered. */
#include <errno.h>
#include <git2.h>
#include <inttypes.h>
#include <limits.h>
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
#include "dashboard-client/drain.h"
#include "dashboard-client/encode.h"
#include "dashboard-client/job.h"
#include "dashboard-client/outbox_sqlite.h"
#include "dashboard-client/transport.h"
#include "funnel/funnel.h"
#include "run_cmd.h"

struct run_post {
	const struct run_args *a;
	struct dc_transport *t;
	struct dc_outbox *ob;
	json_t *job; /* job.json as written */
	char job_path[PATH_TEXT_MAX];
	volatile sig_atomic_t *stop;
	volatile sig_atomic_t once_stop; /* the first, one-pass drain */
};

/* ---- job.json ---- */

/* The head SHA a job without --job is keyed by: --head (a selection) or HEAD (--all). */
static int head_sha(char out[GIT_OID_HEXSZ + 1], const struct run_args *a)
{
	if (!a->repo || a->diff)
		return err_set(ERR_INVAL,
			       "--post needs --job FILE (the job's identity) or --repo "
			       "DIR with --head REV or --all (the head SHA keys the job)");
	git_libgit2_init();
	git_repository *repo = NULL;
	git_object *obj = NULL;
	int rc = git_repository_open(&repo, a->repo) == 0 &&
			 git_revparse_single(&obj, repo, a->all ? "HEAD" : a->head) == 0
		     ? 0
		     : err_set(ERR_INVAL, "--post: cannot resolve the head of %s", a->repo);
	if (!rc)
		git_oid_tostr(out, GIT_OID_HEXSZ + 1, git_object_id(obj));
	git_object_free(obj);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

/* A job of our own: nightly (--all) or periodic (a selection nobody dispatched). */
static int default_job(json_t **out, const struct run_args *a)
{
	char sha[GIT_OID_HEXSZ + 1], dir[PATH_MAX], url[PATH_MAX + 8], name[64], run_id[32];
	int rc = head_sha(sha, a);
	if (rc)
		return rc;
	if (!realpath(a->out, dir))
		return err_set_errno(ERR_IO, "--out %s", a->out);
	snprintf(url, sizeof(url), "file://%s", dir);
	if (a->shard_count)
		snprintf(name, sizeof(name), "spyre-ci-run-shard-%d-of-%d", a->shard_index,
			 a->shard_count);
	else
		snprintf(name, sizeof(name), "spyre-ci-run");
	snprintf(run_id, sizeof(run_id), "%" PRId64, clock_wall_ms() / 1000);
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s}}", "event_type",
			 a->all ? "nightly" : "periodic", "head_sha", sha, "workflow", "name",
			 "spyre-ci", "url", url, "run_id", run_id, "run_attempt", "1", "job_name",
			 name, "check_run_id", "0", "artifact_url", url);
	return *out ? 0 : err_set(ERR_NOMEM, "out of memory");
}

static int load_json(json_t **out, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc = fs_read_file(&text, &len, path, DC_JOB_FILE_MAX);
	if (rc)
		return rc;
	*out = jx_loadb(text, len, DC_JOB_FILE_MAX);
	free(text);
	if (!*out || !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return err_prefix("%s", path);
	}
	return 0;
}

/* Sets workflow.KEY to the time now; with `keep`, only when it is absent. */
static int stamp(json_t *job, const char *key, bool keep)
{
	json_t *w = json_object_get(job, "workflow");
	if (!json_is_object(w))
		return err_set(ERR_INVAL, "job.json: workflow must be an object");
	if (keep && json_is_string(json_object_get(w, key)))
		return 0;
	char now[CLOCK_ISO8601_LEN + 1];
	int rc = clock_format_iso8601(now, sizeof(now), clock_wall_ms(), 0);
	return rc ? rc : jx_set_str(w, key, now);
}

/* Writes job.json and reads it back through the parser `report` uses: a bad --job is found
 * before any case runs. */
static int save_job(struct run_post *p)
{
	char *text = jx_dumps(p->job);
	if (!text)
		return err_set(ERR_NOMEM, "out of memory");
	int rc = fs_atomic_write(p->job_path, text, strlen(text), 0644);
	struct dc_job j;
	if (!rc && !(rc = dc_job_parse(&j, p->job_path, text, strlen(text))))
		dc_job_finish(&j);
	free(text);
	return rc;
}

static int prepare_job(struct run_post *p)
{
	const struct run_args *a = p->a;
	struct stat st;
	int rc;
	if (a->job)
		rc = load_json(&p->job, a->job);
	else if (stat(p->job_path, &st) == 0)
		rc = load_json(&p->job, p->job_path); /* the same --out: the same job, resumed */
	else
		rc = default_job(&p->job, a);
	if (!rc)
		rc = stamp(p->job, "started_at", a->job != NULL);
	if (!rc)
		rc = stamp(p->job, "completed_at", true);
	return rc ? rc : save_job(p);
}

/* ---- sending ---- */

static int64_t once_now(void *ctx)
{
	(void)ctx;
	return clock_wall_ms();
}

/* The first drain waits for nothing: when no message is due, it stops. */
static void once_sleep(void *ctx, int64_t ms)
{
	(void)ms;
	struct run_post *p = ctx;
	p->once_stop = 1;
}

static void once_step(enum dc_step s, void *ctx)
{
	struct run_post *p = ctx;
	if (s == DC_STEP_SETTLED)
		p->once_stop = 1;
}

/* Saves job.json and queues its messages: only `in_progress` before the cases ran, every one
 * (with results.jsonl's counts) after. */
static int enqueue(struct run_post *p, bool first_only)
{
	int rc = save_job(p);
	struct funnel_report r = { .dir = p->a->out,
				   .with_results = !first_only,
				   .statuses =
				       first_only ? FUNNEL_STATUS(DC_STATUS_IN_PROGRESS) : 0 };
	return rc ? rc : funnel_report_queue(p->ob, p->a->post, p->a->format, &r, NULL);
}

int run__post_begin(struct run_post **out, const struct run_args *a, volatile sig_atomic_t *stop)
{
	struct run_post *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(ERR_NOMEM, "out of memory");
	*out = p;
	p->a = a;
	p->stop = stop;
	snprintf(p->job_path, sizeof(p->job_path), "%s/job.json", a->out);
	char *token = NULL, ob_path[PATH_TEXT_MAX];
	int rc = dc_token_read_file(&token, a->token_file);
	if (!rc) {
		struct dc_target_opts to = { .url = a->post,
					     .format = a->format,
					     .token = token,
					     .user_agent = "spyre-ci/" SPYRE_CI_VERSION,
					     .connect_timeout_ms = 10000,
					     .timeout_ms = 30000 };
		rc = dc_transport_create(&p->t, &to);
		dc_token_free(token); /* the transport holds its own copy in its header */
	}
	if (!rc && mkdir(a->out, 0755) != 0 && errno != EEXIST)
		rc = err_set_errno(ERR_IO, "--out %s", a->out);
	if (!rc)
		rc = prepare_job(p);
	snprintf(ob_path, sizeof(ob_path), "%s/outbox.sqlite", a->out);
	if (!rc && (rc = dc_outbox_sqlite_open(&p->ob, ob_path)) != 0)
		rc = ERR_IO;
	if (!rc)
		rc = enqueue(p, true);
	if (rc)
		return rc;
	struct dc_drain_opts o = { .policy = dc_retry_policy_default(),
				   .clock = { once_now, once_sleep, dc_clock_system().random, p },
				   .stop = &p->once_stop,
				   .step = once_step,
				   .step_ctx = p };
	struct dc_drain_stats st = { 0 };
	rc = dc_drain(p->ob, p->t, a->post, &o, &st);
	return rc == ERR_BADSTATE ? 0 : rc;
}

static void print_dead(const struct dc_dead_letter *d, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "spyre-ci run: dead letter %s (%s, %d attempts): %s\n", d->key,
		d->seq ? "completed" : "in_progress", d->attempts, d->error ? d->error : "?");
}

int run__post_end(struct run_post *p)
{
	int rc = stamp(p->job, "completed_at", false);
	if (!rc)
		rc = enqueue(p, false);
	if (rc)
		return rc;
	struct dc_drain_opts o = { .policy = dc_retry_policy_default(),
				   .clock = dc_clock_system(),
				   .stop = p->stop };
	o.policy.horizon_ms = p->a->post_horizon_s * 1000;
	struct dc_drain_stats st = { 0 };
	rc = dc_drain(p->ob, p->t, p->a->post, &o, &st);
	if (rc && rc != ERR_BADSTATE)
		return rc;
	struct dc_outbox_counts c;
	if (p->ob->ops->counts(p->ob, p->a->post, &c) != 0)
		return ERR_IO;
	p->ob->ops->each_dead(p->ob, p->a->post, print_dead, NULL);
	fprintf(stderr,
		"spyre-ci run: --post %s: %" PRIu64 " delivered, %" PRIu64
		" dead-lettered, %" PRIu64 " pending; %" PRIu64 " posts, %" PRIu64 " retried\n",
		p->a->post, c.delivered, c.dead, c.pending, st.posts, st.retries);
	return c.dead || c.pending ? RUN_POST_UNDELIVERED : 0;
}

void run__post_destroy(struct run_post *p)
{
	if (!p)
		return;
	dc_outbox_destroy(p->ob);
	dc_transport_destroy(p->t);
	json_decref(p->job);
	free(p);
}
