/* Tests of the daemon's SQLite store: intake and dedup, tip keys, leases (claim, renew, expiry
 * and reclaim, attempts counted, release, retry after a wait), migrations of an older
 * state directory in place, and a newer one refused untouched. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "store.h"
#include "tmpstate.h"

static char dir[256];

static void make_dir(void)
{
	tmpstate_make(dir, sizeof(dir), "store");
}

static void remove_dir(void)
{
	tmpstate_remove(dir);
}

TestSuite(store, .init = make_dir, .fini = remove_dir);

static struct job_spec push_job(const char *head, char *key)
{
	sprintf(key, "push:%s", head);
	return (struct job_spec){
		.event = "push", .ref = "refs/heads/main", .head = head, .tip_key = key
	};
}

static int64_t deliver(struct store *s, const char *id, const char *id2, const char *head,
		       bool *dup)
{
	char key[64];
	struct job_spec j = push_job(head, key);
	struct intake_item it = {
		.ids = { id, id2 }, .n_ids = id2 ? 2 : 1, .event = "push", .job = &j
	};
	cr_assert_eq(s->ops->intake(s, &it, 1, 1000), 0, "%s", err_last());
	*dup = it.duplicate;
	return it.job_id;
}

#define A40 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B40 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

Test(store, intake_dedups_by_delivery_and_by_tip)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	bool dup;
	int64_t j1 = deliver(s, "d1", NULL, A40, &dup);
	cr_assert(j1 > 0 && !dup);
	cr_assert_eq(deliver(s, "d1", NULL, A40, &dup), j1);
	cr_assert(dup);
	/* another delivery of the same tip: recorded, same job */
	cr_assert_eq(deliver(s, "d2", NULL, A40, &dup), j1);
	cr_assert(!dup);
	/* a dispatch whose upstream id was seen: duplicate, and its own id recorded */
	cr_assert_eq(deliver(s, "outer", "d1", B40, &dup), j1);
	cr_assert(dup);
	cr_assert_eq(deliver(s, "outer", NULL, B40, &dup), j1);
	cr_assert(dup);
	int64_t n;
	cr_assert_eq(s->ops->delivery_count(s, &n), 0);
	cr_assert_eq(n, 3);
	int64_t counts[JOB_STATES];
	cr_assert_eq(s->ops->job_counts(s, counts), 0);
	cr_assert_eq(counts[JOB_QUEUED], 1);
	store_close(s);
}

Test(store, lease_expiry_and_reclaim)
{
	struct store *s, *t;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	cr_assert_eq(store_sqlite_open(&t, dir), 0, "%s", err_last());
	bool dup;
	int64_t id = deliver(s, "d1", NULL, A40, &dup);
	struct job_row j;
	cr_assert_eq(s->ops->claim(s, &j, "w1", 100, 1000), 0, "%s", err_last());
	cr_assert_eq(j.id, id);
	cr_assert_eq(j.state, JOB_RUNNING);
	cr_assert_eq(j.attempts, 1);
	/* held: nobody else gets it before expiry */
	cr_assert_eq(t->ops->claim(t, &j, "w2", 100, 1050), ERR_NOTFOUND);
	cr_assert_eq(s->ops->renew(s, id, "w1", 100, 1090), 0);
	cr_assert_eq(t->ops->claim(t, &j, "w2", 100, 1150), ERR_NOTFOUND);
	/* w1 "crashes": after expiry w2 reclaims it, and w1's lease is gone */
	cr_assert_eq(t->ops->claim(t, &j, "w2", 100, 1200), 0);
	cr_assert_eq(j.attempts, 2);
	cr_assert_str_eq(j.lease_owner, "w2");
	cr_assert_eq(s->ops->renew(s, id, "w1", 100, 1210), ERR_BADSTATE);
	cr_assert_eq(s->ops->finish(s, id, "w1", JOB_AWAITING, "x", 1210), ERR_BADSTATE);
	cr_assert_eq(t->ops->selection_put(t, id, "w2", "{\"stages\":[]}", 0, 1220), 0);
	cr_assert_eq(t->ops->finish(t, id, "w2", JOB_AWAITING, "waiting", 1230), 0);
	cr_assert_eq(s->ops->job_get(s, &j, id), 0);
	cr_assert_eq(j.state, JOB_AWAITING);
	cr_assert_str_eq(j.detail, "waiting");
	store_close(s);
	store_close(t);
}

Test(store, counts_attempts_and_release_gives_one_back)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	bool dup;
	int64_t id = deliver(s, "d1", NULL, A40, &dup);
	struct job_row j;
	cr_assert_eq(s->ops->claim(s, &j, "w", 10, 0), 0);
	cr_assert_eq(s->ops->release(s, id, "w", 1), 0);
	cr_assert_eq(s->ops->job_get(s, &j, id), 0);
	cr_assert_eq(j.state, JOB_QUEUED);
	cr_assert_eq(j.attempts, 0);
	cr_assert_eq(s->ops->claim(s, &j, "w", 10, 2), 0);
	cr_assert_eq(s->ops->claim(s, &j, "w", 10, 100), 0); /* expired: attempt 2 */
	cr_assert_eq(j.attempts, 2);
	/* past any limit it is still claimed: the claimer reports it failed while it holds it */
	cr_assert_eq(s->ops->claim(s, &j, "w", 10, 200), 0);
	cr_assert_eq(j.attempts, 3);
	cr_assert_eq(j.state, JOB_RUNNING);
	cr_assert_eq(s->ops->finish(s, id, "w", JOB_FAILED, "gave up", 201), 0);
	cr_assert_eq(s->ops->claim(s, &j, "w", 10, 300), ERR_NOTFOUND);
	store_close(s);
}

Test(store, retry_waits_counts_the_attempt_and_says_why)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	bool dup;
	int64_t id = deliver(s, "d1", NULL, A40, &dup);
	struct job_row j;
	cr_assert_eq(s->ops->claim(s, &j, "w", 1000, 0), 0);
	cr_assert_eq(s->ops->retry(s, id, "other", 500, "no", 10), ERR_BADSTATE);
	cr_assert_eq(s->ops->retry(s, id, "w", 500, "fetch: lock", 10), 0);
	cr_assert_eq(s->ops->job_get(s, &j, id), 0);
	cr_assert_eq(j.state, JOB_QUEUED);
	cr_assert_eq(j.attempts, 1);
	cr_assert_str_eq(j.detail, "fetch: lock");
	cr_assert_str_eq(j.lease_owner, "");
	/* not before its time, then claimed as its second attempt */
	cr_assert_eq(s->ops->claim(s, &j, "w", 1000, 499), ERR_NOTFOUND);
	cr_assert_eq(s->ops->claim(s, &j, "w", 1000, 500), 0);
	cr_assert_eq(j.id, id);
	cr_assert_eq(j.attempts, 2);
	/* a job waiting out its retry does not hold back a newer one */
	cr_assert_eq(s->ops->retry(s, id, "w", 9000, "again", 600), 0);
	int64_t id2 = deliver(s, "d2", NULL, B40, &dup);
	cr_assert_eq(s->ops->claim(s, &j, "w", 1000, 700), 0);
	cr_assert_eq(j.id, id2);
	store_close(s);
}

Test(store, poll_tip_and_webhook_share_tips)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	bool dup;
	int64_t id = deliver(s, "d1", NULL, A40, &dup);
	char key[64], tip[41];
	struct job_spec a = push_job(A40, key);
	int64_t made;
	cr_assert_eq(s->ops->poll_tip(s, &made, &a, "refs/heads/main", 5), 0);
	cr_assert_eq(made, 0);
	cr_assert_eq(s->ops->cursor_get(s, tip, "refs/heads/main"), 0);
	cr_assert_str_eq(tip, A40);
	char key2[64];
	struct job_spec b = push_job(B40, key2);
	cr_assert_eq(s->ops->poll_tip(s, &made, &b, "refs/heads/main", 6), 0);
	cr_assert(made > id);
	cr_assert_eq(s->ops->cursor_get(s, tip, "refs/heads/main"), 0);
	cr_assert_str_eq(tip, B40);
	store_close(s);
}

Test(store, older_schema_migrated_in_place)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open_at(&s, dir, 1), 0, "%s", err_last());
	bool dup;
	int64_t id = deliver(s, "d1", NULL, A40, &dup); /* version 1 has no detail column yet */
	store_close(s);
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct job_row j;
	cr_assert_eq(s->ops->job_get(s, &j, id), 0, "%s", err_last());
	cr_assert_str_eq(j.head, A40);
	cr_assert_eq(deliver(s, "d1", NULL, A40, &dup), id);
	cr_assert(dup);
	store_close(s);
}

/* Version 4 had no claim stamp: a job made then migrates with none (never claimed), and the
 * next claim stamps it, which is where the dashboard's queue and run times come from. */
Test(store, version_4_gains_the_claim_stamp)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open_at(&s, dir, 4), 0, "%s", err_last());
	bool dup;
	int64_t id = deliver(s, "d1", NULL, A40, &dup);
	store_close(s);
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct job_row j;
	cr_assert_eq(s->ops->job_get(s, &j, id), 0, "%s", err_last());
	cr_assert_eq(j.created_ms, 1000);
	cr_assert_eq(j.started_ms, 0);
	cr_assert_eq(s->ops->claim(s, &j, "w1", 30000, 4500), 0, "%s", err_last());
	cr_assert_eq(j.id, id);
	cr_assert_eq(s->ops->finish(s, id, "w1", JOB_REPORTED, "done", 9000), 0, "%s", err_last());
	cr_assert_eq(s->ops->job_get(s, &j, id), 0, "%s", err_last());
	cr_assert_eq(j.started_ms, 4500);
	cr_assert_eq(j.updated_ms, 9000);
	struct job_row rows[2];
	size_t n;
	cr_assert_eq(s->ops->job_list(s, rows, &n, 2, 0), 0, "%s", err_last());
	cr_assert_eq(n, 1);
	cr_assert_eq(rows[0].started_ms, 4500);
	store_close(s);
}

Test(store, newer_schema_refused_untouched)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	store_close(s);
	char path[512];
	snprintf(path, sizeof(path), "%s/spyre-ci.db", dir);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "UPDATE schema_meta SET value = 99", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	cr_assert_eq(store_sqlite_open(&s, dir), ERR_BADSTATE);
	cr_assert(strstr(err_last(), "newer") != NULL, "%s", err_last());
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, "SELECT value FROM schema_meta", -1, &st, NULL);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(st, 0), 99);
	sqlite3_finalize(st);
	sqlite3_close(db);
}
