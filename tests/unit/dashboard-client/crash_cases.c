/* The crash cases of outbox_cases.h on any outbox implementation. The recorder's dedup
 * answers a repeated key with 400 "invalid state transition", as the relay does. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "dashboard-client/drain.h"
#include "drain_check.h"
#include "helpers.h"
#include "outbox_cases.h"
#include "recorder.h"

#define JOBS  3
#define TOKEN "tok-crash"

struct death {
	enum outbox_crash_point point;
	int nth, seen;
	bool kill9;
};

static void die(struct death *d)
{
	if (d->kill9)
		raise(SIGKILL);
	_exit(3);
}

static void on_step(enum dc_step s, void *ctx)
{
	struct death *d = ctx;
	enum outbox_crash_point p = s == DC_STEP_CLAIMED  ? AT_CLAIM
				    : s == DC_STEP_POSTED ? AT_POST
							  : AT_SETTLE;
	if (p == d->point && ++d->seen == d->nth)
		die(d);
}

static void on_enqueue(void *ctx)
{
	struct death *d = ctx;
	if (d->point == AT_ENQUEUE && ++d->seen == d->nth)
		die(d);
}

/* One sender's life: open, enqueue all, drain. The child's dies in `d`; the parent's not. */
static int sender_life(const struct outbox_impl *impl, const char *dir, const char *url,
		       struct death *d)
{
	struct dc_outbox *ob = NULL;
	struct dc_transport *t = NULL;
	struct fake_clock fc = { 0 };
	struct dc_target_opts to = { .url = url,
				     .format = DC_FORMAT_CRCR,
				     .token = TOKEN,
				     .user_agent = "spyre-ci/test",
				     .timeout_ms = 5000 };
	struct dc_drain_opts o = {
		.policy = { .base_ms = 10, .max_ms = 100, .horizon_ms = 60000 },
		.clock = fake_clock(&fc),
		.batch = 2,
		.step = d ? on_step : NULL,
		.step_ctx = d,
	};
	struct dc_drain_stats st = { 0 };
	int rc = impl->open(&ob, dir);
	if (rc == 0)
		rc = dc_transport_create(&t, &to);
	if (rc == 0)
		rc = check_enqueue_jobs_quiet(ob, url, JOBS, DC_FORMAT_CRCR, d ? on_enqueue : NULL,
					      d);
	if (rc == 0)
		rc = dc_drain(ob, t, url, &o, &st);
	dc_transport_destroy(t);
	impl->close(ob);
	return rc;
}

static void remove_dir(const struct outbox_impl *impl, const char *dir)
{
	char p[512];
	const char *sfx[] = { "", "-wal", "-shm", "-journal" };
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s%s", dir, impl->file, sfx[i]);
		unlink(p);
	}
	rmdir(dir);
}

void outbox_case_crash(const struct outbox_impl *impl, enum outbox_crash_point point, int nth,
		       bool kill9)
{
	char dir[] = "/tmp/dc-crash-XXXXXX", url[256];
	cr_assert_not_null(mkdtemp(dir));
	struct recorder *rec = recorder_start();
	cr_assert_not_null(rec);
	recorder_url(rec, "/github/callback", url, sizeof(url));
	cr_assert_eq(recorder_wait_idle(rec, 10000), 0, "the recorder stayed busy");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct death d = { point, nth, 0, kill9 };
		sender_life(impl, dir, url, &d);
		_exit(0); /* the death point was past the end: a whole life */
	}
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (kill9)
		cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			  "%s: the child did not die at point %d #%d", impl->name, point, nth);
	else
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3,
			  "%s: the child did not die at point %d #%d (status %d)", impl->name,
			  point, nth, status);
	int rc = sender_life(impl, dir, url, NULL);
	cr_assert_eq(rc, 0, "%s: resume: %s", impl->name, err_last());
	check_exactly_once_in_order(rec, NULL, url, 2 * JOBS);
	recorder_stop(rec);
	remove_dir(impl, dir);
}

/* Enqueue: after the 1st (one job's in_progress alone), 2nd (a whole job), 5th message. */
void outbox_case_crash_enqueue(const struct outbox_impl *impl)
{
	int nth[] = { 1, 2, 5 };
	for (int i = 0; i < 3; i++) {
		outbox_case_crash(impl, AT_ENQUEUE, nth[i], false);
		outbox_case_crash(impl, AT_ENQUEUE, nth[i], true);
	}
}

/* After a claim (attempt recorded, nothing sent), a post (sent, not settled: the resend meets
 * "already recorded"), a settle; at the first, second and third of each. */
void outbox_case_crash_claim_post_settle(const struct outbox_impl *impl)
{
	enum outbox_crash_point pts[] = { AT_CLAIM, AT_POST, AT_SETTLE };
	for (int p = 0; p < 3; p++) {
		for (int nth = 1; nth <= 3; nth++) {
			outbox_case_crash(impl, pts[p], nth, false);
			outbox_case_crash(impl, pts[p], nth, true);
		}
	}
}
