/* Tests of a job as a worker holds it (relay/daemon/job.h): its reports directory named once,
 * the dashboard told twice (in_progress when it is announced, completed when it ends) and never
 * twice the same message, how an attempt that did not finish ends (release, retry, fail, a lost
 * lease), and every write checking the lease. On the real SQLite store and its outbox. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "config.h"
#include "job.h"
#include "store.h"
#include "tmpstate.h"

#define HEAD40 "cafecafecafecafecafecafecafecafecafecafe"
#define BASE40 "beefbeefbeefbeefbeefbeefbeefbeefbeefbeef"
#define OWNER  "w-test"
#define LEASE  60000

static char dir[256];

static void make_dir(void)
{
	tmpstate_make(dir, sizeof(dir), "job");
}

static void remove_dir(void)
{
	tmpstate_remove(dir);
}

TestSuite(job, .init = make_dir, .fini = remove_dir);

struct fx {
	struct config c;
	struct store *s;
	struct dc_outbox *ob;
	struct job_row row;
	struct job j;
};

/* A configuration with both dashboard targets (or none), a store with one push job claimed by
 * OWNER at time 1000, and the job held over them. */
static void setup(struct fx *f, bool targets)
{
	char text[1024];
	snprintf(text, sizeof(text), "state_dir: %s\nupstream:\n  repo: o/n\n  url: /nowhere\n%s",
		 dir,
		 targets ? "dashboard:\n  crcr_url: http://127.0.0.1:9/crcr\n"
			   "  hud_url: http://127.0.0.1:9/hud\n"
			 : "");
	cr_assert_eq(config_parse(&f->c, "job-test.yaml", text, strlen(text)), 0, "%s", err_last());
	cr_assert_eq(store_sqlite_open(&f->s, dir), 0, "%s", err_last());
	cr_assert_eq(f->s->ops->outbox_open(f->s, &f->ob), 0, "%s", err_last());
	struct job_spec js = { .event = "push",
			       .ref = "refs/heads/main",
			       .base = BASE40,
			       .head = HEAD40,
			       .tip_key = "push:" HEAD40 };
	struct intake_item it = { .ids = { "d1" }, .n_ids = 1, .event = "push", .job = &js };
	cr_assert_eq(f->s->ops->intake(f->s, &it, 1, 1000), 0, "%s", err_last());
	cr_assert_eq(f->s->ops->claim(f->s, &f->row, OWNER, LEASE, 1000), 0, "%s", err_last());
	cr_assert_eq(job_init(&f->j, &f->row, &f->c, f->s, f->ob, OWNER, NULL), 0, "%s",
		     err_last());
}

static void teardown(struct fx *f)
{
	dc_outbox_destroy(f->ob);
	store_close(f->s);
	config_finish(&f->c);
}

static struct dc_outbox_counts counts(struct fx *f, const char *target)
{
	struct dc_outbox_counts c;
	cr_assert_eq(f->ob->ops->counts(f->ob, target, &c), 0, "%s", err_last());
	return c;
}

/* The bodies of the pending messages of `target`, claimed far in the future so each is due. */
static size_t pending_bodies(struct fx *f, const char *target, char bodies[][8192], size_t max)
{
	struct dc_message m[8];
	size_t n = 0;
	cr_assert_eq(f->ob->ops->claim(f->ob, target, INT64_MAX / 2, max, m, &n), 0, "%s",
		     err_last());
	for (size_t i = 0; i < n; i++) {
		snprintf(bodies[i], 8192, "%s", m[i].body);
		dc_message_finish(&m[i]);
	}
	return n;
}

static struct job_row row_now(struct fx *f)
{
	struct job_row r;
	cr_assert_eq(f->s->ops->job_get(f->s, &r, f->row.id), 0, "%s", err_last());
	return r;
}

/* Two cases of one test: one passed, one failed. */
static void two_results(struct funnel_results *r, struct exec_case *cases, struct exec_result *res)
{
	memset(cases, 0, 2 * sizeof(*cases));
	memset(res, 0, 2 * sizeof(*res));
	for (int i = 0; i < 2; i++) {
		snprintf(cases[i].id, sizeof(cases[i].id), "%016d", i + 1);
		snprintf(cases[i].test_id, sizeof(cases[i].test_id),
			 "test/test_ops.py::TestOps::test_add");
		snprintf(cases[i].op, sizeof(cases[i].op), "add");
		snprintf(cases[i].emu_op, sizeof(cases[i].emu_op), "add");
		cases[i].nin = 2;
		cases[i].ndims[0] = cases[i].ndims[1] = 1;
		cases[i].shapes[0][0] = cases[i].shapes[1][0] = 64 * (i + 1);
		cases[i].dtype = SPEC_DTYPE_FLOAT16;
		memcpy(res[i].id, cases[i].id, sizeof(res[i].id));
		res[i].attempts = 1;
	}
	res[0].outcome = res[0].first_outcome = EXEC_PASSED;
	res[1].outcome = res[1].first_outcome = EXEC_FAILED;
	snprintf(res[1].message, sizeof(res[1].message), "mismatch");
	*r = (struct funnel_results){ .cases = cases, .res = res, .n = 2 };
	exec_summary_make(&r->summary, res, 2);
}

Test(job, the_reports_directory_is_named_once_from_the_id_and_nothing_is_made_before_announce)
{
	struct fx f;
	setup(&f, true);
	char want[PATH_TEXT_MAX];
	snprintf(want, sizeof(want), "%s/reports/%lld", dir, (long long)f.row.id);
	cr_expect_str_eq(f.j.dir, want);
	struct stat sb;
	cr_expect_neq(stat(want, &sb), 0, "job_init made the directory");
	cr_expect_not(job_announced(&f.j));
	teardown(&f);
}

Test(job, a_state_dir_too_long_for_the_reports_path_is_a_limit)
{
	struct fx f;
	setup(&f, false);
	struct config c = f.c;
	char *longdir = malloc(PATH_TEXT_MAX);
	memset(longdir, 'a', PATH_TEXT_MAX - 1);
	longdir[PATH_TEXT_MAX - 1] = '\0';
	c.state_dir = longdir;
	struct job j;
	cr_expect_eq(job_init(&j, &f.row, &c, f.s, f.ob, OWNER, NULL), ERR_LIMIT);
	free(longdir);
	teardown(&f);
}

Test(job, announce_writes_job_json_and_queues_in_progress_once_per_target)
{
	struct fx f;
	setup(&f, true);
	cr_assert_eq(job_announce(&f.j), 0, "%s", err_last());
	cr_expect(job_announced(&f.j));
	char path[PATH_TEXT_MAX];
	snprintf(path, sizeof(path), "%s/job.json", f.j.dir);
	json_error_t e;
	json_t *jj = json_load_file(path, 0, &e);
	cr_assert_not_null(jj, "%s", e.text);
	cr_expect_str_eq(json_string_value(json_object_get(jj, "delivery_id")),
			 "spyre-ci:push:refs/heads/main@" HEAD40);
	cr_expect_str_eq(json_string_value(json_object_get(jj, "event_type")), "push");
	json_decref(jj);
	cr_expect_eq(counts(&f, OUTBOX_TARGET_CRCR).pending, 1);
	cr_expect_eq(counts(&f, OUTBOX_TARGET_HUD).pending, 1);
	/* a later attempt announces again: the same keys, nothing new queued */
	cr_assert_eq(job_announce(&f.j), 0, "%s", err_last());
	cr_expect_eq(counts(&f, OUTBOX_TARGET_CRCR).pending, 1);
	char bodies[4][8192];
	cr_assert_eq(pending_bodies(&f, OUTBOX_TARGET_CRCR, bodies, 4), 1);
	cr_expect(strstr(bodies[0], "in_progress") != NULL, "%s", bodies[0]);
	teardown(&f);
}

Test(job, without_targets_announce_writes_job_json_and_queues_nothing)
{
	struct fx f;
	setup(&f, false);
	cr_assert_eq(job_announce(&f.j), 0, "%s", err_last());
	cr_expect(job_announced(&f.j));
	cr_expect_eq(counts(&f, OUTBOX_TARGET_CRCR).pending, 0);
	cr_expect_eq(counts(&f, OUTBOX_TARGET_HUD).pending, 0);
	teardown(&f);
}

Test(job, record_then_complete_queues_the_counts_and_reports_the_job)
{
	struct fx f;
	setup(&f, true);
	cr_assert_eq(job_announce(&f.j), 0, "%s", err_last());
	struct exec_case cases[2];
	struct exec_result res[2];
	struct funnel_results r;
	two_results(&r, cases, res);
	cr_assert_eq(job_record(&f.j, &r), 0, "%s", err_last());
	char path[PATH_TEXT_MAX];
	const char *files[] = { "junit.xml", "results.jsonl", "summary.json" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", f.j.dir, files[i]);
		cr_expect_eq(access(path, R_OK), 0, "%s missing", files[i]);
	}
	cr_assert_eq(job_complete(&f.j, "2 kernel cases run"), 0, "%s", err_last());
	struct job_row now = row_now(&f);
	cr_expect_eq(now.state, JOB_REPORTED);
	cr_expect_str_eq(now.detail, "2 kernel cases run");
	char bodies[4][8192];
	cr_assert_eq(pending_bodies(&f, OUTBOX_TARGET_CRCR, bodies, 4), 1); /* the job's head */
	cr_assert_eq(counts(&f, OUTBOX_TARGET_CRCR).pending, 2);
	cr_expect(strstr(bodies[0], "in_progress") != NULL);
	/* the completed one waits behind in_progress: settle that, then claim it */
	struct dc_message m[2];
	size_t n = 0;
	cr_assert_eq(f.ob->ops->claim(f.ob, OUTBOX_TARGET_HUD, INT64_MAX / 2, 2, m, &n), 0);
	cr_assert_eq(n, 1);
	struct dc_settlement st = { .key = m[0].key, .kind = DC_SETTLE_DELIVERED, .status = 200 };
	cr_assert_eq(f.ob->ops->settle(f.ob, OUTBOX_TARGET_HUD, &st, 1), 0);
	dc_message_finish(&m[0]);
	cr_assert_eq(pending_bodies(&f, OUTBOX_TARGET_HUD, bodies, 4), 1);
	cr_expect(strstr(bodies[0], "completed") != NULL, "%s", bodies[0]);
	cr_expect(strstr(bodies[0], "\\\"passed\\\": 1") || strstr(bodies[0], "\"passed\": 1") ||
		      strstr(bodies[0], "passed\":1") || strstr(bodies[0], "passed\\\":1"),
		  "no passed count of 1 in %s", bodies[0]);
	teardown(&f);
}

static void add_count(const char *outcome, int64_t n, void *ctx)
{
	(void)outcome;
	*(int64_t *)ctx += n;
}

Test(job, cases_a_stop_left_unrun_are_in_the_report_files_but_not_in_the_store)
{
	struct fx f;
	setup(&f, false);
	cr_assert_eq(job_announce(&f.j), 0);
	struct exec_case cases[2];
	struct exec_result res[2];
	struct funnel_results r;
	two_results(&r, cases, res);
	res[1].outcome = EXEC_NOT_RUN;
	exec_summary_make(&r.summary, res, 2);
	cr_assert_eq(job_record(&f.j, &r), 0, "%s", err_last());
	int64_t rows = 0;
	cr_assert_eq(f.s->ops->results_count(f.s, f.row.id, add_count, &rows), 0);
	cr_expect_eq(rows, 1);
	teardown(&f);
}

Test(job, the_end_of_an_unfinished_attempt_is_decided_by_its_code_alone)
{
	/* a stop in the middle of the run: back in the queue, whatever else */
	cr_expect_eq(job_end_of(JOB_ATTEMPT_STOPPED, true, 1, 3), JOB_END_RELEASE);
	cr_expect_eq(job_end_of(JOB_ATTEMPT_STOPPED, false, 3, 3), JOB_END_RELEASE);
	/* a lost lease is someone else's job, stopping or not */
	cr_expect_eq(job_end_of(ERR_BADSTATE, false, 1, 3), JOB_END_LOST);
	cr_expect_eq(job_end_of(ERR_BADSTATE, true, 1, 3), JOB_END_LOST);
	/* anything cut short by the daemon's stop is not the job's failure */
	cr_expect_eq(job_end_of(ERR_INVAL, true, 1, 3), JOB_END_RELEASE);
	cr_expect_eq(job_end_of(ERR_IO, true, 3, 3), JOB_END_RELEASE);
	/* a failure that may pass is retried while attempts remain */
	cr_expect_eq(job_end_of(ERR_IO, false, 1, 3), JOB_END_RETRY);
	cr_expect_eq(job_end_of(ERR_NOMEM, false, 2, 3), JOB_END_RETRY);
	cr_expect_eq(job_end_of(ERR_IO, false, 3, 3), JOB_END_FAIL);
	/* any other failure fails the job at once */
	cr_expect_eq(job_end_of(ERR_INVAL, false, 1, 3), JOB_END_FAIL);
	cr_expect_eq(job_end_of(ERR_NOTFOUND, false, 1, 3), JOB_END_FAIL);
	cr_expect_eq(job_end_of(ERR_LIMIT, false, 1, 3), JOB_END_FAIL);
}

Test(job, the_retry_wait_doubles_from_the_first_and_stops_at_the_cap)
{
	cr_expect_eq(job_retry_wait_ms(1), JOB_RETRY_FIRST_MS);
	cr_expect_eq(job_retry_wait_ms(2), 2 * JOB_RETRY_FIRST_MS);
	cr_expect_eq(job_retry_wait_ms(3), 4 * JOB_RETRY_FIRST_MS);
	cr_expect_eq(job_retry_wait_ms(40), JOB_RETRY_MAX_MS);
	cr_expect_eq(job_retry_wait_ms(INT64_MAX), JOB_RETRY_MAX_MS);
}

Test(job, a_failure_after_announce_tells_the_dashboard_failure_and_fails_the_row)
{
	struct fx f;
	setup(&f, true);
	cr_assert_eq(job_announce(&f.j), 0);
	cr_expect_eq(job_settle(&f.j, ERR_INVAL, false, "bad range"), JOB_END_FAIL);
	struct job_row now = row_now(&f);
	cr_expect_eq(now.state, JOB_FAILED);
	cr_expect_str_eq(now.detail, "bad range");
	cr_expect_eq(counts(&f, OUTBOX_TARGET_CRCR).pending, 2); /* in_progress, completed */
	cr_expect_eq(counts(&f, OUTBOX_TARGET_HUD).pending, 2);
	teardown(&f);
}

Test(job, a_failure_before_announce_tells_the_dashboard_nothing)
{
	struct fx f;
	setup(&f, true);
	cr_expect_eq(job_settle(&f.j, ERR_NOTFOUND, false, "commit is not upstream"), JOB_END_FAIL);
	cr_expect_eq(row_now(&f).state, JOB_FAILED);
	cr_expect_eq(counts(&f, OUTBOX_TARGET_CRCR).pending, 0);
	cr_expect_eq(counts(&f, OUTBOX_TARGET_HUD).pending, 0);
	teardown(&f);
}

Test(job, a_failure_that_may_pass_is_queued_again_with_its_reason_and_the_attempt_counts)
{
	struct fx f;
	setup(&f, false);
	cr_expect_eq(job_settle(&f.j, ERR_IO, false, "fetch lost its connection"), JOB_END_RETRY);
	struct job_row now = row_now(&f);
	cr_expect_eq(now.state, JOB_QUEUED);
	cr_expect(strstr(now.detail, "attempt 1 of") && strstr(now.detail, "fetch lost"), "%s",
		  now.detail);
	/* not claimable before its wait, claimable after it, as attempt 2 */
	struct job_row again;
	int64_t now_ms = clock_wall_ms();
	cr_expect_eq(f.s->ops->claim(f.s, &again, "w2", LEASE, now_ms), ERR_NOTFOUND);
	cr_assert_eq(
	    f.s->ops->claim(f.s, &again, "w2", LEASE, now_ms + job_retry_wait_ms(1) + 1000), 0,
	    "%s", err_last());
	cr_expect_eq(again.attempts, 2);
	teardown(&f);
}

Test(job, a_stop_puts_the_job_back_at_once_and_the_attempt_does_not_count)
{
	struct fx f;
	setup(&f, true);
	cr_assert_eq(job_announce(&f.j), 0);
	cr_expect_eq(job_settle(&f.j, ERR_IO, true, "fetch cut short"), JOB_END_RELEASE);
	cr_expect_eq(row_now(&f).state, JOB_QUEUED);
	cr_expect_eq(counts(&f, OUTBOX_TARGET_CRCR).pending, 1); /* in_progress only */
	struct job_row again;
	cr_assert_eq(f.s->ops->claim(f.s, &again, "w2", LEASE, clock_wall_ms()), 0, "%s",
		     err_last());
	cr_expect_eq(again.attempts, f.row.attempts, "a released attempt was counted");
	teardown(&f);
}

Test(job, a_lost_lease_writes_nothing_and_its_writes_are_refused)
{
	struct fx f;
	setup(&f, true);
	cr_assert_eq(job_announce(&f.j), 0);
	/* the lease expires; another worker claims the job */
	struct job_row other;
	cr_assert_eq(f.s->ops->claim(f.s, &other, "w2", LEASE, 1000 + LEASE + 1), 0, "%s",
		     err_last());
	struct exec_case cases[2];
	struct exec_result res[2];
	struct funnel_results r;
	two_results(&r, cases, res);
	cr_expect_eq(job_record(&f.j, &r), ERR_BADSTATE, "%s", err_last());
	cr_expect_eq(job_complete(&f.j, "done"), ERR_BADSTATE, "%s", err_last());
	cr_expect_eq(job_settle(&f.j, ERR_BADSTATE, false, "lease lost"), JOB_END_LOST);
	struct job_row now = row_now(&f);
	cr_expect_eq(now.state, JOB_RUNNING);
	cr_expect_str_eq(now.lease_owner, "w2");
	teardown(&f);
}

Test(job, giving_up_says_after_how_many_attempts_and_tells_the_dashboard)
{
	struct fx f;
	setup(&f, true);
	cr_assert_eq(job_announce(&f.j), 0); /* an earlier attempt announced it, then died */
	f.j.row.attempts = 4;
	snprintf(f.j.row.detail, sizeof(f.j.row.detail), "lease expired");
	job_give_up(&f.j);
	struct job_row now = row_now(&f);
	cr_expect_eq(now.state, JOB_FAILED);
	cr_expect(strstr(now.detail, "gave up after 3 attempts (workers.max_attempts") &&
		      strstr(now.detail, "last: lease expired"),
		  "%s", now.detail);
	cr_expect_eq(counts(&f, OUTBOX_TARGET_HUD).pending, 2);
	teardown(&f);
}
