/* funnel_report_messages and funnel_report_queue: a results directory (job.json from
 * tests/fixtures/dashboard/, results.jsonl from a funnel run) becomes the dashboard's messages,
 * queued in an SQLite outbox (dashboard-client's) that the tests read back. Only the statuses
 * asked for; idempotent by key; the completed message carries results.jsonl's counts; a
 * conclusion given replaces the job's; a missing job.json is an error naming it. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "dashboard-client/job.h"
#include "dashboard-client/outbox_sqlite.h"
#include "funnel/funnel.h"
#include "upstream.h"

#define TARGET "crcr"
#define LATER  ((int64_t)1 << 50) /* every message is due by then */

struct fixture {
	char dir[64];
	struct dc_outbox *ob;
};

/* The mix of outcomes a results.jsonl should count: by the case id's first digit. */
static void mixed(const struct exec_case *c, struct exec_result *r, int fd, void *ctx)
{
	(void)fd, (void)ctx;
	static const enum exec_outcome by_digit[16] = {
		EXEC_PASSED,  EXEC_PASSED,  EXEC_PASSED,  EXEC_PASSED, EXEC_PASSED,  EXEC_PASSED,
		EXEC_PASSED,  EXEC_PASSED,  EXEC_FAILED,  EXEC_FAILED, EXEC_SKIPPED, EXEC_SKIPPED,
		EXEC_XFAILED, EXEC_XPASSED, EXEC_CRASHED, EXEC_ERROR,
	};
	memcpy(r->id, c->id, sizeof r->id);
	const char *hex = "0123456789abcdef", *d = strchr(hex, c->id[0]);
	r->outcome = d && *d ? by_digit[d - hex] : EXEC_ERROR;
	r->first_outcome = r->outcome;
	r->attempts = 1;
}

/* dir/results.jsonl (and the other report files) from a run of HEAD~2..HEAD's cases. */
static void write_results(const char *dir)
{
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0);
	struct funnel_selection sel;
	up_select(&sel, specs, cache, "HEAD~2", "HEAD", NULL);
	struct funnel_run_opts o = { .jobs = 2, .retries = 0, .runner = mixed };
	struct funnel_results r;
	cr_assert_eq(funnel_run(&r, sel.cases, sel.n_cases, &o), 0, "%s", err_last());
	cr_assert_eq(funnel_results_write(&r, dir), 0, "%s", err_last());
	funnel_results_finish(&r);
	funnel_selection_finish(&sel);
	funnel_cache_destroy(cache);
	funnel_specs_destroy(specs);
}

/* A results directory with tests/fixtures/dashboard/<job> as job.json, results when asked. */
static void open_fixture(struct fixture *f, const char *job, bool results)
{
	char src[512], path[128], ob[128], *text = NULL;
	size_t len = 0;
	tmp_make(f->dir, sizeof f->dir, "report");
	snprintf(src, sizeof src, "%s/%s", FUNNEL_TEST_FIXTURES, job);
	cr_assert_eq(fs_read_file(&text, &len, src, 1 << 20), 0, "%s", err_last());
	tmp_write(path, sizeof path, f->dir, "job.json", text);
	free(text);
	if (results)
		write_results(f->dir);
	snprintf(ob, sizeof ob, "%s/outbox.sqlite", f->dir);
	cr_assert_eq(dc_outbox_sqlite_open(&f->ob, ob), 0, "%s", err_last());
}

static void close_fixture(struct fixture *f)
{
	dc_outbox_destroy(f->ob);
	tmp_remove(f->dir);
}

static size_t queue(struct fixture *f, const struct funnel_report *r)
{
	size_t added = 99;
	cr_assert_eq(funnel_report_queue(f->ob, TARGET, DC_FORMAT_CRCR, r, &added), 0, "%s",
		     err_last());
	return added;
}

/* The one message the outbox hands out next; finish it after use. */
static void claim_one(struct fixture *f, struct dc_message *m)
{
	size_t n = 0;
	cr_assert_eq(f->ob->ops->claim(f->ob, TARGET, LATER, 1, m, &n), 0, "%s", err_last());
	cr_assert_eq(n, 1, "a message is waiting");
}

static void deliver(struct fixture *f, const struct dc_message *m)
{
	struct dc_settlement s = { .key = m->key, .kind = DC_SETTLE_DELIVERED };
	cr_assert_eq(f->ob->ops->settle(f->ob, TARGET, &s, 1), 0, "%s", err_last());
}

static uint64_t pending(struct fixture *f)
{
	struct dc_outbox_counts c;
	cr_assert_eq(f->ob->ops->counts(f->ob, TARGET, &c), 0, "%s", err_last());
	return c.pending;
}

/* workflow.KEY of a CRCR callback body. */
static json_t *workflow(json_t *body, const char *key)
{
	return json_object_get(json_object_get(body, "workflow"), key);
}

Test(funnel_report, in_progress_alone_when_only_it_is_asked)
{
	struct fixture f;
	open_fixture(&f, "job-pr.json", false);
	struct funnel_report r = { .dir = f.dir, .statuses = FUNNEL_STATUS(DC_STATUS_IN_PROGRESS) };
	cr_expect_eq(queue(&f, &r), 1);
	struct dc_message m;
	claim_one(&f, &m);
	cr_expect_eq(m.status, DC_STATUS_IN_PROGRESS);
	json_t *body = json_loads(m.body, 0, NULL);
	cr_expect_str_eq(json_string_value(workflow(body, "status")), "in_progress");
	json_decref(body);
	dc_message_finish(&m);
	close_fixture(&f);
}

Test(funnel_report, queueing_the_same_again_adds_nothing)
{
	struct fixture f;
	open_fixture(&f, "job-pr.json", true);
	struct funnel_report in = { .dir = f.dir,
				    .statuses = FUNNEL_STATUS(DC_STATUS_IN_PROGRESS) };
	struct funnel_report all = { .dir = f.dir, .with_results = true };
	cr_expect_eq(queue(&f, &in), 1);
	cr_expect_eq(queue(&f, &in), 0, "in_progress is there already");
	cr_expect_eq(queue(&f, &all), 1, "only completed is new");
	cr_expect_eq(queue(&f, &all), 0);
	cr_expect_eq(pending(&f), 2);
	close_fixture(&f);
}

Test(funnel_report, a_later_completion_time_is_the_same_message)
{
	struct fixture f;
	open_fixture(&f, "job-pr.json", false);
	struct funnel_report r = { .dir = f.dir,
				   .statuses = FUNNEL_STATUS(DC_STATUS_COMPLETED),
				   .conclusion = "failure",
				   .completed_at = "2031-01-02T03:04:05Z" };
	cr_expect_eq(queue(&f, &r), 1);
	r.completed_at = "2031-01-02T03:09:00Z"; /* the daemon stamps each attempt anew */
	cr_expect_eq(queue(&f, &r), 0, "the key is the job's and the transition's");
	cr_expect_eq(pending(&f), 1);
	close_fixture(&f);
}

/* results.jsonl's lines tallied as the completed callback counts them. */
static void tally(const char *dir, uint64_t out[3])
{
	char path[128];
	snprintf(path, sizeof path, "%s/results.jsonl", dir);
	FILE *fp = fopen(path, "r");
	cr_assert_not_null(fp, "%s", path);
	char line[1 << 14];
	memset(out, 0, 3 * sizeof *out);
	while (fgets(line, sizeof line, fp)) {
		json_t *j = json_loads(line, 0, NULL);
		enum dc_tally t;
		cr_assert_eq(dc_outcome_tally(&t, json_string_value(json_object_get(j, "outcome"))),
			     0);
		out[t]++;
		json_decref(j);
	}
	fclose(fp);
}

Test(funnel_report, completed_carries_the_counts_of_results_jsonl)
{
	struct fixture f;
	open_fixture(&f, "job-pr.json", true);
	uint64_t want[3];
	tally(f.dir, want);
	cr_assert(want[DC_TALLY_PASSED] && want[DC_TALLY_FAILED] && want[DC_TALLY_SKIPPED],
		  "a mix of outcomes");
	struct funnel_report all = { .dir = f.dir, .with_results = true };
	cr_expect_eq(queue(&f, &all), 2, "in_progress, then completed");
	struct dc_message m;
	claim_one(&f, &m);
	cr_expect_eq(m.status, DC_STATUS_IN_PROGRESS, "in_progress first");
	deliver(&f, &m);
	dc_message_finish(&m);
	claim_one(&f, &m);
	cr_expect_eq(m.status, DC_STATUS_COMPLETED);
	json_t *body = json_loads(m.body, 0, NULL);
	json_t *counts = workflow(body, "test_results");
	cr_expect_eq(json_integer_value(json_object_get(counts, "passed")),
		     (json_int_t)want[DC_TALLY_PASSED]);
	cr_expect_eq(json_integer_value(json_object_get(counts, "failed")),
		     (json_int_t)want[DC_TALLY_FAILED]);
	cr_expect_eq(json_integer_value(json_object_get(counts, "skipped")),
		     (json_int_t)want[DC_TALLY_SKIPPED]);
	cr_expect_str_eq(json_string_value(workflow(body, "conclusion")), "failure",
			 "a failed case fails the job");
	json_decref(body);
	/* what was queued is what funnel_report_messages makes */
	struct dc_message *ms = NULL;
	size_t n = 0;
	struct funnel_report done = { .dir = f.dir,
				      .with_results = true,
				      .statuses = FUNNEL_STATUS(DC_STATUS_COMPLETED) };
	cr_assert_eq(funnel_report_messages(&ms, &n, &done, DC_FORMAT_CRCR), 0, "%s", err_last());
	cr_assert_eq(n, 1);
	cr_expect_str_eq(ms[0].key, m.key);
	cr_expect_str_eq(ms[0].body, m.body);
	dc_message_finish(&ms[0]);
	free(ms);
	dc_message_finish(&m);
	close_fixture(&f);
}

Test(funnel_report, a_conclusion_given_replaces_the_jobs)
{
	struct fixture f;
	open_fixture(&f, "job-pr.json", false);
	struct funnel_report r = { .dir = f.dir,
				   .statuses = FUNNEL_STATUS(DC_STATUS_COMPLETED),
				   .conclusion = "failure",
				   .completed_at = "2031-01-02T03:04:05Z" };
	cr_expect_eq(queue(&f, &r), 1, "completed alone");
	struct dc_message m;
	claim_one(&f, &m);
	cr_expect_eq(m.status, DC_STATUS_COMPLETED);
	json_t *body = json_loads(m.body, 0, NULL);
	cr_expect_str_eq(json_string_value(workflow(body, "conclusion")), "failure",
			 "no results would say success");
	cr_expect_str_eq(json_string_value(workflow(body, "completed_at")), "2031-01-02T03:04:05Z");
	json_decref(body);
	dc_message_finish(&m);
	close_fixture(&f);
}

Test(funnel_report, a_nightly_job_has_no_in_progress)
{
	struct fixture f;
	open_fixture(&f, "job-nightly.json", true);
	struct funnel_report in = { .dir = f.dir,
				    .statuses = FUNNEL_STATUS(DC_STATUS_IN_PROGRESS) };
	struct funnel_report all = { .dir = f.dir, .with_results = true };
	cr_expect_eq(queue(&f, &in), 0);
	cr_expect_eq(queue(&f, &all), 1);
	struct dc_message m;
	claim_one(&f, &m);
	cr_expect_eq(m.status, DC_STATUS_COMPLETED);
	dc_message_finish(&m);
	close_fixture(&f);
}

Test(funnel_report, a_missing_job_json_is_an_error_naming_it)
{
	struct fixture f;
	open_fixture(&f, "job-pr.json", false);
	char path[128];
	snprintf(path, sizeof path, "%s/job.json", f.dir);
	cr_assert_eq(remove(path), 0);
	struct funnel_report r = { .dir = f.dir };
	size_t added = 99;
	cr_expect_lt(funnel_report_queue(f.ob, TARGET, DC_FORMAT_CRCR, &r, &added), 0);
	cr_expect(strstr(err_last(), path), "names %s: %s", path, err_last());
	cr_expect_eq(added, 0);
	cr_expect_eq(pending(&f), 0);
	close_fixture(&f);
}

Test(funnel_report, missing_results_are_an_error_naming_them)
{
	struct fixture f;
	open_fixture(&f, "job-pr.json", false);
	char path[128];
	snprintf(path, sizeof path, "%s/results.jsonl", f.dir);
	struct funnel_report r = { .dir = f.dir, .with_results = true };
	size_t added = 99;
	cr_expect_lt(funnel_report_queue(f.ob, TARGET, DC_FORMAT_CRCR, &r, &added), 0);
	cr_expect(strstr(err_last(), path), "names %s: %s", path, err_last());
	cr_expect_eq(added, 0);
	cr_expect_eq(pending(&f), 0, "nothing, not even in_progress, is queued");
	close_fixture(&f);
}
