/* outbox.h's promises as test cases any outbox implementation must pass (outbox_cases.h):
 * idempotent enqueue, a job's completed held back until its in_progress is delivered, attempts
 * counted at claim, dead letters taking the rest of their job, re-posts, and the outbox
 * surviving a reopen. */
#include "outbox_cases.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "helpers.h"

#define TARGET "http://127.0.0.1:1/github/callback"

/* The messages of job i (in_progress, completed). */
static void job_messages(struct dc_message **ms, size_t *n, int i)
{
	char text[2048];
	struct dc_job job;
	job_text(text, sizeof(text), i);
	cr_assert_eq(dc_job_parse(&job, "job.json", text, strlen(text)), 0, "%s", err_last());
	struct dc_results r = { 0 };
	cr_assert_eq(dc_job_messages(ms, n, &job, &r, DC_FORMAT_CRCR), 0, "%s", err_last());
	dc_job_finish(&job);
}

static void free_messages(struct dc_message *ms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dc_message_finish(&ms[i]);
	free(ms);
}

static void enqueue_job(struct dc_outbox *ob, int i, struct dc_message **keep)
{
	struct dc_message *ms;
	size_t n;
	bool added;
	job_messages(&ms, &n, i);
	/* completed first: the order of enqueueing must not decide the order of sending */
	for (size_t k = n; k-- > 0;) {
		cr_assert_eq(ob->ops->enqueue(ob, TARGET, &ms[k], &added), 0, "%s", err_last());
		cr_assert(added);
	}
	if (keep)
		*keep = ms;
	else
		free_messages(ms, n);
}

static size_t claim(struct dc_outbox *ob, int64_t now, struct dc_message *out, size_t max)
{
	size_t n = 0;
	cr_assert_eq(ob->ops->claim(ob, TARGET, now, max, out, &n), 0, "%s", err_last());
	return n;
}

static void settle(struct dc_outbox *ob, const char *key, enum dc_settle_kind kind, int64_t at)
{
	struct dc_settlement s = { .key = key, .kind = kind, .next_at_ms = at, .error = "x" };
	cr_assert_eq(ob->ops->settle(ob, TARGET, &s, 1), 0, "%s", err_last());
}

void outbox_case_order(const struct outbox_impl *impl, const char *dir)
{
	struct dc_outbox *ob;
	cr_assert_eq(impl->open(&ob, dir), 0, "%s: %s", impl->name, err_last());
	struct dc_message *ms;
	enqueue_job(ob, 1, &ms);
	bool added = true;
	cr_assert_eq(ob->ops->enqueue(ob, TARGET, &ms[0], &added), 0);
	cr_assert_not(added);

	struct dc_message got[8];
	size_t n = claim(ob, 1000, got, 8);
	cr_assert_eq(n, 1, "only the in_progress is claimable");
	cr_assert_str_eq(got[0].key, ms[0].key);
	cr_assert_eq(got[0].attempts, 0);
	cr_assert_str_eq(got[0].body, ms[0].body);
	/* Not settled: claimable again, its attempt counted. */
	dc_message_finish(&got[0]);
	n = claim(ob, 1000, got, 8);
	cr_assert_eq(n, 1);
	cr_assert_eq(got[0].attempts, 1);
	int64_t first = 0;
	cr_assert_eq(ob->ops->first_attempt(ob, TARGET, ms[0].key, &first), 0);
	cr_assert_eq(first, 1000);
	settle(ob, ms[0].key, DC_SETTLE_RETRY, 5000);
	dc_message_finish(&got[0]);
	cr_assert_eq(claim(ob, 4999, got, 8), 0, "not due yet, and completed waits");
	int64_t due = 0;
	cr_assert_eq(ob->ops->next_due(ob, TARGET, &due), 0);
	cr_assert_eq(due, 5000);
	n = claim(ob, 5000, got, 8);
	cr_assert_eq(n, 1);
	settle(ob, got[0].key, DC_SETTLE_DELIVERED, 0);
	dc_message_finish(&got[0]);
	n = claim(ob, 5000, got, 8);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(got[0].key, ms[1].key);
	cr_assert_eq(got[0].status, DC_STATUS_COMPLETED);
	settle(ob, got[0].key, DC_SETTLE_DELIVERED, 0);
	dc_message_finish(&got[0]);
	cr_assert_eq(ob->ops->next_due(ob, TARGET, &due), ERR_NOTFOUND);
	struct dc_outbox_counts c;
	cr_assert_eq(ob->ops->counts(ob, TARGET, &c), 0);
	cr_assert(c.pending == 0 && c.delivered == 2 && c.dead == 0);
	free_messages(ms, 2);
	impl->close(ob);
}

static void count_dead(const struct dc_dead_letter *d, void *ctx)
{
	(*(int *)ctx)++;
	cr_assert_not_null(d->error);
}

void outbox_case_dead(const struct outbox_impl *impl, const char *dir)
{
	struct dc_outbox *ob;
	cr_assert_eq(impl->open(&ob, dir), 0, "%s: %s", impl->name, err_last());
	struct dc_message *ms;
	enqueue_job(ob, 1, &ms);
	enqueue_job(ob, 2, NULL);
	struct dc_message got[8];
	size_t n = claim(ob, 10, got, 8);
	cr_assert_eq(n, 2, "the heads of both jobs");
	struct dc_settlement s[2] = {
		{ .key = ms[0].key,
		  .kind = DC_SETTLE_DEAD,
		  .status = 401,
		  .error = "HTTP 401",
		  .body = "{\"detail\":\"bad credentials\"}",
		  .body_len = 28 },
		{ .key = strcmp(got[0].key, ms[0].key) ? got[0].key : got[1].key,
		  .kind = DC_SETTLE_DELIVERED,
		  .status = 200 },
	};
	cr_assert_eq(ob->ops->settle(ob, TARGET, s, 2), 0, "%s", err_last());
	for (size_t i = 0; i < n; i++)
		dc_message_finish(&got[i]);
	struct dc_outbox_counts c;
	cr_assert_eq(ob->ops->counts(ob, TARGET, &c), 0);
	cr_assert_eq(c.dead, 2, "job 1's completed went with its in_progress");
	cr_assert_eq(c.pending, 1);
	int dead = 0;
	cr_assert_eq(ob->ops->each_dead(ob, TARGET, count_dead, &dead), 0);
	cr_assert_eq(dead, 2);
	/* Enqueueing job 1 again changes nothing; a re-post makes everything pending again. */
	bool added = true;
	cr_assert_eq(ob->ops->enqueue(ob, TARGET, &ms[1], &added), 0);
	cr_assert_not(added);
	uint64_t again = 0;
	cr_assert_eq(ob->ops->requeue(ob, TARGET, &again), 0);
	cr_assert_eq(again, 3);
	cr_assert_eq(ob->ops->counts(ob, TARGET, &c), 0);
	cr_assert_eq(c.pending, 4);
	n = claim(ob, 20, got, 8);
	cr_assert_eq(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(got[i].key, ms[0].key) == 0)
			cr_assert_eq(got[i].attempts, 1, "a re-post keeps the attempts");
		dc_message_finish(&got[i]);
	}
	free_messages(ms, 2);
	impl->close(ob);
}

void outbox_case_reopen(const struct outbox_impl *impl, const char *dir)
{
	struct dc_outbox *ob;
	cr_assert_eq(impl->open(&ob, dir), 0, "%s: %s", impl->name, err_last());
	enqueue_job(ob, 3, NULL);
	impl->close(ob);
	cr_assert_eq(impl->open(&ob, dir), 0, "%s: %s", impl->name, err_last());
	struct dc_outbox_counts c;
	cr_assert_eq(ob->ops->counts(ob, TARGET, &c), 0);
	cr_assert_eq(c.pending, 2);
	cr_assert_eq(ob->ops->counts(ob, "http://elsewhere.invalid/", &c), 0);
	cr_assert_eq(c.pending, 0);
	struct dc_message got[2];
	size_t n = 0;
	cr_assert_eq(ob->ops->claim(ob, "http://elsewhere.invalid/", 1, 2, got, &n), 0);
	cr_assert_eq(n, 0);
	/* The same messages for a second target are messages of their own. */
	struct dc_message *ms;
	size_t k;
	bool added = false;
	job_messages(&ms, &k, 3);
	cr_assert_eq(ob->ops->enqueue(ob, "http://elsewhere.invalid/", &ms[0], &added), 0);
	cr_assert(added);
	cr_assert_eq(ob->ops->counts(ob, "http://elsewhere.invalid/", &c), 0);
	cr_assert_eq(c.pending, 1);
	/* Many at once: the new ones counted, the known one ignored. */
	size_t many = 9;
	cr_assert_eq(ob->ops->enqueue_many(ob, "http://elsewhere.invalid/", ms, k, &many), 0);
	cr_assert_eq(many, 1);
	cr_assert_eq(ob->ops->counts(ob, "http://elsewhere.invalid/", &c), 0);
	cr_assert_eq(c.pending, 2);
	free_messages(ms, k);
	impl->close(ob);
	cr_assert_neq(impl->open(&ob, "/nonexistent-dir/x"), 0);
}

void outbox_case_late(const struct outbox_impl *impl, const char *dir)
{
	struct dc_outbox *ob;
	cr_assert_eq(impl->open(&ob, dir), 0, "%s: %s", impl->name, err_last());
	struct dc_message *ms;
	size_t k;
	bool added = false;
	job_messages(&ms, &k, 4);
	cr_assert_eq(ob->ops->enqueue(ob, TARGET, &ms[0], &added), 0, "%s", err_last());
	struct dc_message got[2];
	cr_assert_eq(claim(ob, 7, got, 2), 1);
	dc_message_finish(&got[0]);
	/* Closed between claim and settle, as a crash would: the attempt is on record. */
	impl->close(ob);
	cr_assert_eq(impl->open(&ob, dir), 0, "%s: %s", impl->name, err_last());
	int64_t first = 0;
	cr_assert_eq(ob->ops->first_attempt(ob, TARGET, ms[0].key, &first), 0, "%s", err_last());
	cr_assert_eq(first, 7);
	cr_assert_eq(ob->ops->first_attempt(ob, TARGET, "sci1-unknown", &first), ERR_NOTFOUND);
	cr_assert_eq(claim(ob, 8, got, 2), 1);
	cr_assert_eq(got[0].attempts, 1, "the claim before the crash counted");
	settle(ob, got[0].key, DC_SETTLE_DEAD, 0);
	dc_message_finish(&got[0]);
	/* The completed queued after its in_progress died could only be rejected. */
	cr_assert_eq(ob->ops->enqueue(ob, TARGET, &ms[1], &added), 0, "%s", err_last());
	cr_assert(added);
	struct dc_outbox_counts c;
	cr_assert_eq(ob->ops->counts(ob, TARGET, &c), 0);
	cr_assert(c.pending == 0 && c.dead == 2, "pending %llu dead %llu",
		  (unsigned long long)c.pending, (unsigned long long)c.dead);
	int64_t due = 0;
	cr_assert_eq(ob->ops->next_due(ob, TARGET, &due), ERR_NOTFOUND);
	free_messages(ms, k);
	impl->close(ob);
}
