/* Retention: finished jobs older than retention.jobs_days go with their deliveries, selections
 * and results; queued work, pending messages and young rows stay; report directories older than
 * retention.reports_days go unless their job is still in progress. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "config.h"
#include "dashboard-client/outbox.h"
#include "retention.h"
#include "store.h"
#include "tmpstate.h"

#define DAY ((int64_t)24 * 3600 * 1000)
#define T0  ((int64_t)1000)

static char dir[256];

static void make_dir(void)
{
	tmpstate_make(dir, sizeof(dir), "retention");
}

static void remove_dir(void)
{
	tmpstate_remove(dir);
}

TestSuite(retention, .init = make_dir, .fini = remove_dir);

static int64_t add_job(struct store *s, const char *did, char c)
{
	char head[41], key[64];
	memset(head, c, 40);
	head[40] = 0;
	snprintf(key, sizeof(key), "push:%s", head);
	struct job_spec j = {
		.event = "push", .ref = "refs/heads/main", .head = head, .tip_key = key
	};
	struct intake_item it = { .ids = { did }, .n_ids = 1, .event = "push", .job = &j };
	cr_assert_eq(s->ops->intake(s, &it, 1, T0), 0, "%s", err_last());
	return it.job_id;
}

static void run_to(struct store *s, int64_t id, enum job_state st)
{
	struct job_row j;
	cr_assert_eq(s->ops->claim(s, &j, "w", 60000, T0), 0, "%s", err_last());
	cr_assert_eq(j.id, id);
	struct result_row r = { "test_add[add-4-float16]", "passed", NULL };
	cr_assert_eq(s->ops->results_put(s, id, "w", &r, 1, T0), 0, "%s", err_last());
	cr_assert_eq(s->ops->finish(s, id, "w", st, "done", T0), 0, "%s", err_last());
}

static void report_dir(const char *name, bool old)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/reports", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/reports/%s", dir, name);
	cr_assert_eq(mkdir(p, 0755), 0);
	char f[600];
	snprintf(f, sizeof(f), "%s/results.jsonl", p);
	int fd = open(f, O_CREAT | O_WRONLY, 0644);
	cr_assert(fd >= 0);
	close(fd);
	if (old) {
		struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } }; /* 1970 */
		cr_assert_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	}
}

static bool exists(const char *name)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/reports/%s", dir, name);
	return access(p, F_OK) == 0;
}

static int64_t n_results;
static void tally(const char *outcome, int64_t n, void *ctx)
{
	n_results += n;
}

static void outbox_message(struct dc_outbox *ob, const char *key, int seq)
{
	struct dc_message m = { .seq = seq, .body = (char *)"{}", .body_len = 2 };
	snprintf(m.key, sizeof(m.key), "%s", key);
	snprintf(m.job_key, sizeof(m.job_key), "job-%s", key);
	bool added;
	cr_assert_eq(ob->ops->enqueue(ob, "crcr", &m, &added), 0, "%s", err_last());
}

Test(retention, deletes_old_finished_work_only)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	int64_t a = add_job(s, "d-a", 'a'), b = add_job(s, "d-b", 'b'), c = add_job(s, "d-c", 'c');
	struct intake_item none = { .ids = { "d-none" }, .n_ids = 1, .event = "ping" };
	cr_assert_eq(s->ops->intake(s, &none, 1, T0), 0, "%s", err_last());
	run_to(s, a, JOB_REPORTED);
	run_to(s, b, JOB_FAILED);
	/* c stays queued */
	char idtext[3][24];
	snprintf(idtext[0], 24, "%lld", (long long)a);
	snprintf(idtext[1], 24, "%lld", (long long)c);
	report_dir(idtext[0], true);
	report_dir(idtext[1], true);
	report_dir("999", true);
	report_dir("9998", false);
	report_dir("notes", true);

	struct config cfg;
	cr_assert_eq(config_defaults(&cfg), 0);
	char *keep = cfg.state_dir;
	cfg.state_dir = dir;
	struct retention_stats st;
	int64_t reports = 0;
	/* a day after T0: nothing is old enough */
	cr_assert_eq(retention_run(s, &cfg, T0 + DAY, &st, &reports), 0, "%s", err_last());
	cr_assert_eq(st.jobs + st.deliveries + st.results, 0);
	/* past retention.jobs_days (30) */
	cr_assert_eq(retention_run(s, &cfg, T0 + 31 * DAY, &st, &reports), 0, "%s", err_last());
	cr_assert_eq(st.jobs, 2);
	cr_assert_eq(st.deliveries, 3, "the two jobs' deliveries and the old one without a job");
	cr_assert_eq(st.results, 2);
	struct job_row j;
	cr_assert_eq(s->ops->job_get(s, &j, a), ERR_NOTFOUND);
	cr_assert_eq(s->ops->job_get(s, &j, b), ERR_NOTFOUND);
	cr_assert_eq(s->ops->job_get(s, &j, c), 0, "queued work is kept");
	n_results = 0;
	cr_assert_eq(s->ops->results_count(s, a, tally, NULL), 0);
	cr_assert_eq(n_results, 0);
	int64_t n;
	cr_assert_eq(s->ops->delivery_count(s, &n), 0);
	cr_assert_eq(n, 1, "d-c stays with its queued job");
	cr_assert_eq(reports, 0, "the directories are not 90 days old as of then");
	/* today: the directories dated 1970 are past retention.reports_days (90) */
	cr_assert_eq(retention_run(s, &cfg, clock_wall_ms(), &st, &reports), 0, "%s", err_last());
	cr_assert_eq(reports, 2,
		     "the finished job's and the one with no job (999), both 1970: %lld",
		     (long long)reports);
	cr_assert(!exists(idtext[0]));
	cr_assert(exists(idtext[1]), "a queued job's directory is kept");
	cr_assert(!exists("999"));
	cr_assert(exists("9998"), "a young directory is kept");
	cr_assert(exists("notes"), "a name that is no job id is left alone");
	cfg.state_dir = keep;
	config_finish(&cfg);
	store_close(s);
}

Test(retention, outbox_keeps_pending_messages)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct dc_outbox *ob;
	cr_assert_eq(s->ops->outbox_open(s, &ob), 0, "%s", err_last());
	outbox_message(ob, "sci1-delivered", 0);
	outbox_message(ob, "sci1-pending", 0);
	struct dc_message got[2];
	size_t n = 0;
	cr_assert_eq(ob->ops->claim(ob, "crcr", INT64_MAX / 2, 1, got, &n), 0, "%s", err_last());
	cr_assert_eq(n, 1);
	struct dc_settlement set = { .key = got[0].key,
				     .kind = DC_SETTLE_DELIVERED,
				     .status = 200 };
	cr_assert_eq(ob->ops->settle(ob, "crcr", &set, 1), 0, "%s", err_last());
	dc_message_finish(&got[0]);
	int64_t depth;
	cr_assert_eq(s->ops->outbox_depth(s, &depth), 0);
	cr_assert_eq(depth, 1);
	struct retention_stats st;
	/* now: the messages are young */
	cr_assert_eq(s->ops->retention(s, clock_wall_ms() - 30 * DAY, &st), 0, "%s", err_last());
	cr_assert_eq(st.outbox, 0);
	/* a year on: the delivered one goes, the pending one stays */
	cr_assert_eq(s->ops->retention(s, clock_wall_ms() + 365 * DAY, &st), 0, "%s", err_last());
	cr_assert_eq(st.outbox, 1);
	struct dc_outbox_counts cn;
	cr_assert_eq(ob->ops->counts(ob, "crcr", &cn), 0);
	cr_assert_eq(cn.pending, 1);
	cr_assert_eq(cn.delivered, 0);
	dc_outbox_destroy(ob);
	store_close(s);
}
