/* See drain_check.h. */
#include "drain_check.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "helpers.h"

int check_enqueue_jobs_quiet(struct dc_outbox *ob, const char *target, int n, enum dc_format f,
			     void (*after_each)(void *ctx), void *ctx)
{
	for (int i = 0; i < n; i++) {
		char text[2048];
		struct dc_job job;
		job_text(text, sizeof(text), i);
		if (dc_job_parse(&job, "job.json", text, strlen(text)) != 0)
			return -1;
		struct dc_results r = { .passed = 3, .failed = 0, .skipped = 1 };
		struct dc_message *ms = NULL;
		size_t k = 0;
		int rc = dc_job_messages(&ms, &k, &job, &r, f);
		dc_job_finish(&job);
		for (size_t j = 0; rc == 0 && j < k; j++) {
			bool added;
			rc = ob->ops->enqueue(ob, target, &ms[j], &added);
			if (rc == 0 && after_each)
				after_each(ctx);
		}
		for (size_t j = 0; j < k; j++)
			dc_message_finish(&ms[j]);
		free(ms);
		if (rc)
			return -1;
	}
	return 0;
}

void check_enqueue_jobs(struct dc_outbox *ob, const char *target, int n, enum dc_format f)
{
	cr_assert_eq(check_enqueue_jobs_quiet(ob, target, n, f, NULL, NULL), 0, "%s", err_last());
}

/* The callback inside a recorded body (CRCR: the body; HUD: untrusted.callback_payload). */
static json_t *callback_of(json_t *body)
{
	json_t *cb = jx_get(body, "untrusted.callback_payload");
	return cb ? cb : body;
}

struct seen {
	char job[256];
	int in_progress_at, completed_at;
};

void check_exactly_once_in_order(struct recorder *rec, struct dc_outbox *ob, const char *target,
				 size_t expected)
{
	(void)ob;
	(void)target;
	size_t n = recorder_count(rec), accepted = 0, njobs = 0;
	struct seen *jobs = calloc(n + 1, sizeof(*jobs));
	for (size_t i = 0; i < n; i++) {
		struct rec_request q = recorder_get(rec, i);
		if (!q.accepted)
			continue;
		accepted++;
		cr_assert_eq(recorder_accepted(rec, q.idem), 1, "key %s accepted %d times", q.idem,
			     recorder_accepted(rec, q.idem));
		json_t *body = jx_loadb(q.body, q.body_len, HUD_BODY_MAX);
		cr_assert_not_null(body, "request %zu: %s", i, err_last());
		json_t *cb = callback_of(body);
		char job[256];
		snprintf(job, sizeof(job), "%s/%s/%s", jx_get_str(cb, "delivery_id"),
			 jx_get_str(cb, "workflow.run_id"), jx_get_str(cb, "workflow.job_name"));
		const char *status = jx_get_str(cb, "workflow.status");
		cr_assert_not_null(status);
		size_t j = 0;
		while (j < njobs && strcmp(jobs[j].job, job) != 0)
			j++;
		if (j == njobs) {
			snprintf(jobs[njobs].job, sizeof(jobs[njobs].job), "%s", job);
			jobs[njobs].in_progress_at = jobs[njobs].completed_at = -1;
			njobs++;
		}
		int *at = strcmp(status, "completed") == 0 ? &jobs[j].completed_at
							   : &jobs[j].in_progress_at;
		cr_assert_eq(*at, -1, "%s %s recorded twice", job, status);
		*at = (int)i;
		json_decref(body);
	}
	for (size_t j = 0; j < njobs; j++) {
		if (jobs[j].completed_at >= 0)
			cr_assert(jobs[j].in_progress_at >= 0 &&
				      jobs[j].in_progress_at < jobs[j].completed_at,
				  "%s: completed (#%d) before in_progress (#%d)", jobs[j].job,
				  jobs[j].completed_at, jobs[j].in_progress_at);
	}
	free(jobs);
	cr_assert_eq(accepted, expected, "the recorder accepted %zu messages, want %zu", accepted,
		     expected);
}

struct dead_ctx {
	long status;
	const char *needle;
	int n;
};

static void on_dead(const struct dc_dead_letter *d, void *ctx)
{
	struct dead_ctx *c = ctx;
	c->n++;
	/* Later messages of a dead job were never sent: they say why instead. */
	if (d->status == 0) {
		cr_assert(strstr(d->error, "earlier message") != NULL, "%s", d->error);
		return;
	}
	cr_assert_eq(d->status, c->status, "dead letter with status %ld", d->status);
	bool found =
	    (d->error && strstr(d->error, c->needle)) || (d->body && strstr(d->body, c->needle));
	cr_assert(found, "dead letter '%s' / '%s' lacks '%s'", d->error, d->body ? d->body : "",
		  c->needle);
}

void check_dead_letters(struct dc_outbox *ob, const char *target, long status, const char *needle)
{
	struct dead_ctx c = { status, needle, 0 };
	cr_assert_eq(ob->ops->each_dead(ob, target, on_dead, &c), 0);
	cr_assert_gt(c.n, 0, "no dead letters");
}

void check_remove_outbox(const char *dir)
{
	char p[512];
	const char *sfx[] = { "", "-wal", "-shm", "-journal" };
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/outbox.sqlite%s", dir, sfx[i]);
		unlink(p);
	}
	rmdir(dir);
}
