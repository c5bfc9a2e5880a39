/* The embedded store: SQLite in WAL mode with synchronous=FULL (a commit that returned is on
 * disk), every statement prepared once per handle with bound parameters. The SQL is kept to
 * what PostgreSQL also accepts (no INSERT OR ..., no SQLite-only functions) so that a second
 * backend can reuse it. Migrations are in store_migrate.c. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"
#include "dashboard-client/outbox_sqlite.h"
#include "store.h"
#include "store_dash.h"
#include "store_sqlite.h"

static const char *const sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_DELIVERY_FIND] = "SELECT job_id FROM deliveries WHERE delivery_id = ?1",
	[ST_DELIVERY_ADD] = "INSERT INTO deliveries (delivery_id, event, job_id, received_ms) "
			    "VALUES (?1, ?2, ?3, ?4)",
	[ST_JOB_BY_TIP] = "SELECT id FROM jobs WHERE tip_key = ?1",
	[ST_JOB_ADD] = "INSERT INTO jobs (event, ref, base, head, tip_key, pr_number, state, "
		       "created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?7)",
	[ST_JOB_SET_DISPATCH] = "UPDATE jobs SET dispatch = ?2 WHERE id = ?1",
	[ST_CURSOR_GET] = "SELECT tip FROM cursors WHERE ref = ?1",
	[ST_CURSOR_DEL] = "DELETE FROM cursors WHERE ref = ?1",
	[ST_CURSOR_ADD] = "INSERT INTO cursors (ref, tip, updated_ms) VALUES (?1, ?2, ?3)",
	/* a queued job's lease_expires_ms is the time before which it waits (a retry's backoff;
	 * 0 for a new or released job) */
	[ST_CLAIMABLE] = "SELECT id FROM jobs WHERE (state IN (0, 2) AND "
			 "lease_expires_ms <= ?1) OR (state = 1 AND lease_expires_ms < ?1) "
			 "ORDER BY id LIMIT 1",
	[ST_CLAIM] = "UPDATE jobs SET state = 1, lease_owner = ?2, lease_expires_ms = ?3, "
		     "attempts = attempts + 1, updated_ms = ?4, started_ms = ?4 WHERE id = ?1",
	[ST_RENEW] = "UPDATE jobs SET lease_expires_ms = ?3, updated_ms = ?4 WHERE id = ?1 AND "
		     "state = 1 AND lease_owner = ?2",
	[ST_RELEASE] = "UPDATE jobs SET state = 0, lease_owner = NULL, lease_expires_ms = 0, "
		       "attempts = attempts - 1, updated_ms = ?3 WHERE id = ?1 AND state = 1 AND "
		       "lease_owner = ?2",
	/* finish (?6 = 0) and retry (state queued, ?6 its not-before) */
	[ST_END_LEASE] = "UPDATE jobs SET state = ?3, detail = ?4, lease_owner = NULL, "
			 "lease_expires_ms = ?6, updated_ms = ?5 WHERE id = ?1 AND state = 1 AND "
			 "lease_owner = ?2",
	[ST_SELECTION_DEL] = "DELETE FROM selections WHERE job_id = ?1",
	[ST_SELECTION_ADD] = "INSERT INTO selections (job_id, report, scheduled, created_ms) "
			     "VALUES (?1, ?2, ?3, ?4)",
	[ST_SELECTION_GET] = "SELECT report FROM selections WHERE job_id = ?1",
	[ST_JOB_GET] = "SELECT id, state, event, ref, base, head, pr_number, attempts, "
		       "created_ms, updated_ms, lease_expires_ms, lease_owner, detail, started_ms "
		       "FROM jobs "
		       "WHERE id = ?1",
	[ST_JOB_LIST] = "SELECT id, state, event, ref, base, head, pr_number, attempts, "
			"created_ms, updated_ms, lease_expires_ms, lease_owner, detail, started_ms "
			"FROM jobs "
			"WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
	[ST_JOB_COUNTS] = "SELECT state, COUNT(*) FROM jobs GROUP BY state",
	[ST_DELIVERY_COUNT] = "SELECT COUNT(*) FROM deliveries",
	[ST_OUTBOX_DEPTH] = "SELECT COUNT(*) FROM outbox WHERE state = 'pending'",
	[ST_PING] = "SELECT 1",
	[ST_HELD] = "UPDATE jobs SET updated_ms = ?3 WHERE id = ?1 AND state = 1 AND "
		    "lease_owner = ?2",
	[ST_JOB_DISPATCH] = "SELECT dispatch FROM jobs WHERE id = ?1 AND dispatch IS NOT NULL",
	[ST_RESULTS_DEL] = "DELETE FROM results WHERE job_id = ?1",
	[ST_RESULT_ADD] = "INSERT INTO results (job_id, case_id, outcome, detail, created_ms) "
			  "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (job_id, case_id) DO UPDATE "
			  "SET outcome = excluded.outcome, detail = excluded.detail",
	[ST_RESULTS_COUNT] = "SELECT outcome, COUNT(*) FROM results WHERE job_id = ?1 "
			     "GROUP BY outcome ORDER BY outcome",
#define OLD_JOBS "SELECT id FROM jobs WHERE state IN (3, 4) AND updated_ms < ?1"
	[ST_RET_DELIVERIES] = "DELETE FROM deliveries WHERE job_id IN (" OLD_JOBS ") OR "
			      "(job_id IS NULL AND received_ms < ?1)",
	[ST_RET_SELECTIONS] = "DELETE FROM selections WHERE job_id IN (" OLD_JOBS ")",
	[ST_RET_RESULTS] = "DELETE FROM results WHERE job_id IN (" OLD_JOBS ")",
	[ST_RET_JOBS] = "DELETE FROM jobs WHERE state IN (3, 4) AND updated_ms < ?1",
#undef OLD_JOBS
	[ST_RET_OUTBOX] = "DELETE FROM outbox WHERE state IN ('delivered', 'dead') AND "
			  "created_ms < ?1",
};

int store__fail(struct store_sqlite *s, const char *what)
{
	return err_set(ERR_IO, "store: %s: %s", what, sqlite3_errmsg(s->db));
}

sqlite3_stmt *store__stmt(struct store_sqlite *s, enum st_id id)
{
	if (!s->st[id] && sqlite3_prepare_v3(s->db, sql[id], -1, SQLITE_PREPARE_PERSISTENT,
					     &s->st[id], NULL) != SQLITE_OK) {
		store__fail(s, "prepare");
		return NULL;
	}
	sqlite3_reset(s->st[id]);
	sqlite3_clear_bindings(s->st[id]);
	return s->st[id];
}

static int exec_simple(struct store_sqlite *s, enum st_id id)
{
	sqlite3_stmt *st = store__stmt(s, id);
	if (!st)
		return ERR_IO;
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store__fail(s, sql[id]);
}

int store__begin(struct store_sqlite *s)
{
	return exec_simple(s, ST_BEGIN);
}

int store__commit(struct store_sqlite *s)
{
	return exec_simple(s, ST_COMMIT);
}

/* Ends a failed transaction; keeps the error that made it fail. */
int store__rollback(struct store_sqlite *s, int rc)
{
	if (sqlite3_get_autocommit(s->db))
		return rc;
	sqlite3_stmt *st = store__stmt(s, ST_ROLLBACK);
	if (st) {
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	return rc;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Runs a statement that returns at most one integer; *out stays as it was without a row.
 * 1 with a row, 0 without, <0 on error. */
static int step_int(struct store_sqlite *s, sqlite3_stmt *st, int64_t *out)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		return 1;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store__fail(s, "step");
}

static int step_done(struct store_sqlite *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store__fail(s, "step");
}

static int job_find_or_add(struct store_sqlite *s, int64_t *id, const struct job_spec *j,
			   int64_t now)
{
	sqlite3_stmt *st = store__stmt(s, ST_JOB_BY_TIP);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, j->tip_key);
	int rc = step_int(s, st, id);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (!(st = store__stmt(s, ST_JOB_ADD)))
		return ERR_IO;
	bind_text(st, 1, j->event);
	bind_text(st, 2, j->ref);
	bind_text(st, 3, j->base);
	bind_text(st, 4, j->head);
	bind_text(st, 5, j->tip_key);
	sqlite3_bind_int64(st, 6, j->pr_number);
	sqlite3_bind_int64(st, 7, now);
	if ((rc = step_done(s, st)) < 0)
		return rc;
	*id = sqlite3_last_insert_rowid(s->db);
	if (!j->dispatch)
		return 0;
	if (!(st = store__stmt(s, ST_JOB_SET_DISPATCH)))
		return ERR_IO;
	sqlite3_bind_int64(st, 1, *id);
	bind_text(st, 2, j->dispatch);
	return step_done(s, st);
}

static int delivery_add(struct store_sqlite *s, const char *id, const char *event, int64_t job,
			int64_t now)
{
	sqlite3_stmt *st = store__stmt(s, ST_DELIVERY_ADD);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, id);
	bind_text(st, 2, event);
	if (job)
		sqlite3_bind_int64(st, 3, job);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int64(st, 4, now);
	return step_done(s, st);
}

static int intake_one(struct store_sqlite *s, struct intake_item *it, int64_t now)
{
	bool seen[2] = { false, false };
	it->duplicate = false;
	it->job_id = 0;
	for (size_t i = 0; i < it->n_ids; i++) {
		sqlite3_stmt *st = store__stmt(s, ST_DELIVERY_FIND);
		if (!st)
			return ERR_IO;
		bind_text(st, 1, it->ids[i]);
		int64_t job = 0;
		int rc = step_int(s, st, &job);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			seen[i] = true;
			it->duplicate = true;
			if (!it->job_id)
				it->job_id = job;
		}
	}
	if (!it->duplicate && it->job) {
		int rc = job_find_or_add(s, &it->job_id, it->job, now);
		if (rc < 0)
			return rc;
	}
	/* A dispatch whose upstream id was seen still records its own id, so that its own
	 * redelivery is a duplicate too. */
	for (size_t i = 0; i < it->n_ids; i++) {
		if (seen[i])
			continue;
		int rc = delivery_add(s, it->ids[i], it->event, it->job_id, now);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int sq_intake(struct store *base, struct intake_item *items, size_t n, int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	int rc = store__begin(s);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = intake_one(s, &items[i], now);
	if (rc == 0)
		rc = store__commit(s);
	return store__rollback(s, rc);
}

static int cursor_set(struct store_sqlite *s, const char *ref, const char *tip, int64_t now)
{
	sqlite3_stmt *st = store__stmt(s, ST_CURSOR_DEL);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, ref);
	int rc = step_done(s, st);
	if (rc < 0 || !(st = store__stmt(s, ST_CURSOR_ADD)))
		return rc < 0 ? rc : ERR_IO;
	bind_text(st, 1, ref);
	bind_text(st, 2, tip);
	sqlite3_bind_int64(st, 3, now);
	return step_done(s, st);
}

static int sq_poll_tip(struct store *base, int64_t *job_id, const struct job_spec *job,
		       const char *cursor_ref, int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	*job_id = 0;
	int rc = store__begin(s);
	if (rc == 0) {
		sqlite3_stmt *st = store__stmt(s, ST_JOB_BY_TIP);
		int64_t old = 0;
		if (!st)
			rc = ERR_IO;
		else
			bind_text(st, 1, job->tip_key);
		if (rc == 0 && (rc = step_int(s, st, &old)) == 0)
			rc = job_find_or_add(s, job_id, job, now);
		else if (rc == 1)
			rc = 0;
	}
	if (rc == 0)
		rc = cursor_set(s, cursor_ref, job->head, now);
	if (rc == 0)
		rc = store__commit(s);
	return store__rollback(s, rc);
}

static int sq_cursor_get(struct store *base, char tip[41], const char *ref)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_CURSOR_GET);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, ref);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(tip, 41, "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? err_set(ERR_NOTFOUND, "no cursor for %s", ref)
				 : store__fail(s, "cursor");
}

static void col_text(char *dst, size_t size, sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	snprintf(dst, size, "%s", t ? (const char *)t : "");
}

static void read_job(struct job_row *j, sqlite3_stmt *st)
{
	j->id = sqlite3_column_int64(st, 0);
	j->state = (enum job_state)sqlite3_column_int(st, 1);
	col_text(j->event, sizeof(j->event), st, 2);
	col_text(j->ref, sizeof(j->ref), st, 3);
	col_text(j->base, sizeof(j->base), st, 4);
	col_text(j->head, sizeof(j->head), st, 5);
	j->pr_number = sqlite3_column_int64(st, 6);
	j->attempts = sqlite3_column_int64(st, 7);
	j->created_ms = sqlite3_column_int64(st, 8);
	j->updated_ms = sqlite3_column_int64(st, 9);
	j->lease_expires_ms = sqlite3_column_int64(st, 10);
	col_text(j->lease_owner, sizeof(j->lease_owner), st, 11);
	col_text(j->detail, sizeof(j->detail), st, 12);
	j->started_ms = sqlite3_column_int64(st, 13);
}

static int sq_job_get(struct store *base, struct job_row *out, int64_t id)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_JOB_GET);
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_job(out, st);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? err_set(ERR_NOTFOUND, "no job %lld", (long long)id)
				 : store__fail(s, "job");
}

static int sq_job_list(struct store *base, struct job_row *out, size_t *n, size_t max,
		       int64_t before)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_JOB_LIST);
	*n = 0;
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, before > 0 ? before : INT64_MAX);
	sqlite3_bind_int64(st, 2, (int64_t)max);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < max)
		read_job(&out[(*n)++], st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store__fail(s, "jobs");
}

static int sq_claim(struct store *base, struct job_row *out, const char *owner, int64_t lease_ms,
		    int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	int rc = store__begin(s);
	int64_t id = 0;
	sqlite3_stmt *st = rc == 0 ? store__stmt(s, ST_CLAIMABLE) : NULL;
	if (rc == 0 && !st)
		rc = ERR_IO;
	if (rc == 0) {
		sqlite3_bind_int64(st, 1, now);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		if (r != SQLITE_ROW && r != SQLITE_DONE)
			rc = store__fail(s, "claim");
	}
	if (rc == 0 && id && !(st = store__stmt(s, ST_CLAIM)))
		rc = ERR_IO;
	if (rc == 0 && id) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, owner);
		sqlite3_bind_int64(st, 3, now + lease_ms);
		sqlite3_bind_int64(st, 4, now);
		rc = step_done(s, st);
	}
	if (rc == 0)
		rc = store__commit(s);
	rc = store__rollback(s, rc);
	if (rc == 0 && id == 0)
		return err_set(ERR_NOTFOUND, "no job to claim");
	return rc < 0 ? rc : sq_job_get(base, out, id);
}

/* Runs an UPDATE that must change exactly one row held by `owner`. */
static int held_update(struct store_sqlite *s, sqlite3_stmt *st)
{
	int rc = step_done(s, st);
	if (rc < 0)
		return rc;
	return sqlite3_changes(s->db) == 1 ? 0 : err_set(ERR_BADSTATE, "the lease is lost");
}

/* Checks, inside the caller's transaction, that `owner` still holds the job. */
static int still_held(struct store_sqlite *s, int64_t id, const char *owner, int64_t now)
{
	sqlite3_stmt *st = store__stmt(s, ST_HELD);
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, owner);
	sqlite3_bind_int64(st, 3, now);
	return held_update(s, st);
}

static int sq_renew(struct store *base, int64_t id, const char *owner, int64_t lease_ms,
		    int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_RENEW);
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, owner);
	sqlite3_bind_int64(st, 3, now + lease_ms);
	sqlite3_bind_int64(st, 4, now);
	return held_update(s, st);
}

static int sq_release(struct store *base, int64_t id, const char *owner, int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_RELEASE);
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, owner);
	sqlite3_bind_int64(st, 3, now);
	return held_update(s, st);
}

/* Ends `owner`'s lease: the job to `state` with `detail`, claimable again from `not_before`
 * when queued. */
static int end_lease(struct store *base, int64_t id, const char *owner, enum job_state state,
		     const char *detail, int64_t not_before, int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_END_LEASE);
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, owner);
	sqlite3_bind_int(st, 3, (int)state);
	bind_text(st, 4, detail);
	sqlite3_bind_int64(st, 5, now);
	sqlite3_bind_int64(st, 6, not_before);
	return held_update(s, st);
}

static int sq_retry(struct store *base, int64_t id, const char *owner, int64_t not_before,
		    const char *detail, int64_t now)
{
	return end_lease(base, id, owner, JOB_QUEUED, detail, not_before, now);
}

static int sq_finish(struct store *base, int64_t id, const char *owner, enum job_state state,
		     const char *detail, int64_t now)
{
	return end_lease(base, id, owner, state, detail, 0, now);
}

static int sq_selection_put(struct store *base, int64_t id, const char *owner, const char *json,
			    int64_t scheduled, int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	int rc = store__begin(s);
	sqlite3_stmt *st = rc == 0 ? store__stmt(s, ST_SELECTION_DEL) : NULL;
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		rc = step_done(s, st);
	}
	if (rc == 0 && (st = store__stmt(s, ST_SELECTION_ADD))) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, json);
		sqlite3_bind_int64(st, 3, scheduled);
		sqlite3_bind_int64(st, 4, now);
		rc = step_done(s, st);
	}
	if (rc == 0)
		/* the selection counts only while the lease is held: check it in the same
		 * transaction (leaving the lease's expiry to the keeper) */
		rc = still_held(s, id, owner, now);
	if (rc == 0)
		rc = store__commit(s);
	return store__rollback(s, rc);
}

/* One text column of the row of statement `which` for `id`, copied into *json; ERR_NOTFOUND
 * (its detail left to the caller) when there is no row. */
static int text_by_id(struct store *base, enum st_id which, char **json, int64_t id,
		      const char *what)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, which);
	*json = NULL;
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && !(*json = strdup((const char *)sqlite3_column_text(st, 0))))
		rc = SQLITE_NOMEM;
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? ERR_NOTFOUND : store__fail(s, what);
}

static int sq_selection_get(struct store *base, char **json, int64_t id)
{
	int rc = text_by_id(base, ST_SELECTION_GET, json, id, "selection");
	return rc == ERR_NOTFOUND ? err_set(rc, "no selection for job %lld", (long long)id) : rc;
}

static int sq_job_counts(struct store *base, int64_t counts[JOB_STATES])
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	memset(counts, 0, sizeof(int64_t) * JOB_STATES);
	sqlite3_stmt *st = store__stmt(s, ST_JOB_COUNTS);
	if (!st)
		return ERR_IO;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int state = sqlite3_column_int(st, 0);
		if (state >= 0 && state < JOB_STATES)
			counts[state] = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store__fail(s, "counts");
}

static int count(struct store *base, enum st_id id, int64_t *n)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, id);
	*n = 0;
	if (!st)
		return ERR_IO;
	int rc = step_int(s, st, n);
	return rc < 0 ? rc : 0;
}

static int sq_delivery_count(struct store *base, int64_t *n)
{
	return count(base, ST_DELIVERY_COUNT, n);
}

static int sq_outbox_depth(struct store *base, int64_t *n)
{
	return count(base, ST_OUTBOX_DEPTH, n);
}

/* dashboard-client's outbox on this handle's connection, which it borrows (store.h). */
static int sq_outbox_open(struct store *base, struct dc_outbox **out)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	return dc_outbox_sqlite_attach(out, s->db);
}

static int sq_ping(struct store *base)
{
	int64_t one;
	return count(base, ST_PING, &one);
}

static int sq_job_dispatch(struct store *base, char **json, int64_t id)
{
	int rc = text_by_id(base, ST_JOB_DISPATCH, json, id, "job dispatch");
	return rc == ERR_NOTFOUND ? err_set(rc, "job %lld came from no dispatch", (long long)id)
				  : rc;
}

static int sq_results_put(struct store *base, int64_t id, const char *owner,
			  const struct result_row *rows, size_t n, int64_t now)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	int rc = store__begin(s);
	if (rc == 0)
		rc = still_held(s, id, owner, now);
	sqlite3_stmt *st = rc == 0 ? store__stmt(s, ST_RESULTS_DEL) : NULL;
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		rc = step_done(s, st);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!(st = store__stmt(s, ST_RESULT_ADD))) {
			rc = ERR_IO;
			break;
		}
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, rows[i].case_id);
		bind_text(st, 3, rows[i].outcome);
		if (rows[i].detail && rows[i].detail[0])
			bind_text(st, 4, rows[i].detail);
		sqlite3_bind_int64(st, 5, now);
		rc = step_done(s, st);
	}
	if (rc == 0)
		rc = store__commit(s);
	return store__rollback(s, rc);
}

static int sq_results_count(struct store *base, int64_t id,
			    void (*fn)(const char *outcome, int64_t n, void *ctx), void *ctx)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_RESULTS_COUNT);
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		fn((const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1), ctx);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store__fail(s, "results");
}

static int sq_retention(struct store *base, int64_t before, struct retention_stats *out)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	static const enum st_id steps[] = { ST_RET_DELIVERIES, ST_RET_SELECTIONS, ST_RET_RESULTS,
					    ST_RET_JOBS, ST_RET_OUTBOX };
	int64_t *counts[] = { &out->deliveries, NULL, &out->results, &out->jobs, &out->outbox };
	*out = (struct retention_stats){ 0 };
	int rc = store__begin(s);
	for (size_t i = 0; rc == 0 && i < sizeof(steps) / sizeof(steps[0]); i++) {
		sqlite3_stmt *st = store__stmt(s, steps[i]);
		if (!st) {
			rc = ERR_IO;
			break;
		}
		sqlite3_bind_int64(st, 1, before);
		if ((rc = step_done(s, st)) == 0 && counts[i])
			*counts[i] = sqlite3_changes(s->db);
	}
	if (rc == 0)
		rc = store__commit(s);
	return store__rollback(s, rc);
}

static void sq_close(struct store *base)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	free(s);
}

const struct store_ops store__sqlite_ops = {
	.close = sq_close,
	.intake = sq_intake,
	.poll_tip = sq_poll_tip,
	.cursor_get = sq_cursor_get,
	.claim = sq_claim,
	.renew = sq_renew,
	.release = sq_release,
	.retry = sq_retry,
	.finish = sq_finish,
	.selection_put = sq_selection_put,
	.selection_get = sq_selection_get,
	.job_get = sq_job_get,
	.job_list = sq_job_list,
	.job_dispatch = sq_job_dispatch,
	.results_put = sq_results_put,
	.results_count = sq_results_count,
	.retention = sq_retention,
	.job_counts = sq_job_counts,
	.delivery_count = sq_delivery_count,
	.outbox_depth = sq_outbox_depth,
	.outbox_open = sq_outbox_open,
	.ping = sq_ping,
	.dash = &store__sqlite_dash_ops,
};

const char *job_state_name(enum job_state s)
{
	static const char *names[JOB_STATES] = { "queued", "running", "awaiting", "reported",
						 "failed" };
	return (unsigned)s < JOB_STATES ? names[s] : "unknown";
}
