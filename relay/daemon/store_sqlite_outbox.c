/* The SQLite store's outbox operations (store.h, with dashboard-client/outbox.h's promises):
 * one transaction a call, every statement prepared once per handle with bound parameters.
 * The SQL is what PostgreSQL accepts too: INSERT ... ON CONFLICT DO NOTHING, correlated
 * subqueries instead of UPDATE ... FROM, no SQLite-only functions; the time a message was
 * made is bound, not taken from the database's clock. */
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store.h"
#include "store_sqlite.h"

/* A pending message is its job's head when no earlier message of its job is pending. */
#define HEAD                                                                                       \
	" NOT EXISTS (SELECT 1 FROM outbox p WHERE p.target = o.target AND p.job_key = o.job_key"  \
	" AND p.seq < o.seq AND p.state = 'pending')"
#define ORPHANED "'an earlier message of its job was dead-lettered'"
/* The job and place of the message (?1 key, ?2 target). */
#define ITS(col) "(SELECT d." col " FROM outbox d WHERE d.target = ?2 AND d.key = ?1)"

const char *const store__outbox_sql[ST_COUNT - ST_OB_INSERT] = {
	[ST_OB_INSERT - ST_OB_INSERT] =
	    "INSERT INTO outbox (key, target, job_key, seq, format, body, created_ms)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (target, key) DO NOTHING",
	/* A message whose job already lost an earlier one could only be rejected. */
	[ST_OB_ORPHAN - ST_OB_INSERT] =
	    "UPDATE outbox SET state = 'dead', last_error = " ORPHANED
	    " WHERE key = ?1 AND target = ?2 AND state = 'pending' AND EXISTS (SELECT 1 FROM outbox"
	    " p WHERE p.target = ?2 AND p.job_key = " ITS("job_key") " AND p.seq < " ITS(
		"seq") " AND p.state = 'dead')",
	[ST_OB_CLAIM - ST_OB_INSERT] =
	    "SELECT o.key, o.job_key, o.seq, o.format, o.body, o.attempts FROM outbox o"
	    " WHERE o.target = ?1 AND o.state = 'pending' AND o.next_at_ms <= ?2 AND" HEAD
	    " ORDER BY o.next_at_ms, o.id LIMIT ?3",
	[ST_OB_ATTEMPT - ST_OB_INSERT] =
	    "UPDATE outbox SET attempts = attempts + 1,"
	    " first_attempt_ms = COALESCE(first_attempt_ms, ?3) WHERE key = ?1 AND target = ?2",
	[ST_OB_DELIVERED - ST_OB_INSERT] =
	    "UPDATE outbox SET state = 'delivered', last_status = ?3, already = ?4"
	    " WHERE key = ?1 AND target = ?2 AND state = 'pending'",
	[ST_OB_RETRY - ST_OB_INSERT] =
	    "UPDATE outbox SET next_at_ms = ?3, last_status = ?4, last_error = ?5"
	    " WHERE key = ?1 AND target = ?2 AND state = 'pending'",
	[ST_OB_DEAD - ST_OB_INSERT] =
	    "UPDATE outbox SET state = 'dead', last_status = ?3, last_error = ?4, dead_body = ?5"
	    " WHERE key = ?1 AND target = ?2 AND state = 'pending'",
	[ST_OB_CASCADE - ST_OB_INSERT] =
	    "UPDATE outbox SET state = 'dead', last_error = " ORPHANED
	    " WHERE target = ?2 AND state = 'pending' AND job_key = " ITS(
		"job_key") " AND seq > " ITS("seq"),
	[ST_OB_NEXT_DUE - ST_OB_INSERT] = "SELECT MIN(o.next_at_ms) FROM outbox o"
					  " WHERE o.target = ?1 AND o.state = 'pending' AND" HEAD,
	[ST_OB_FIRST - ST_OB_INSERT] =
	    "SELECT first_attempt_ms FROM outbox WHERE key = ?1 AND target = ?2",
	[ST_OB_COUNTS - ST_OB_INSERT] =
	    "SELECT state, COUNT(*) FROM outbox WHERE target = ?1 GROUP BY state",
	[ST_OB_DEAD_LIST - ST_OB_INSERT] =
	    "SELECT key, seq, attempts, last_status, last_error, dead_body FROM outbox"
	    " WHERE target = ?1 AND state = 'dead' ORDER BY id",
	[ST_OB_REQUEUE - ST_OB_INSERT] =
	    "UPDATE outbox SET state = 'pending', next_at_ms = 0, first_attempt_ms = NULL"
	    " WHERE target = ?1 AND state IN ('delivered', 'dead')",
};

#undef ITS
#undef ORPHANED
#undef HEAD

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* A statement keyed by (?1 key, ?2 target), the usual head of the outbox's updates. */
static sqlite3_stmt *keyed(struct store_sqlite *s, enum st_id id, const char *key,
			   const char *target)
{
	sqlite3_stmt *st = store__stmt(s, id);
	if (st) {
		bind_text(st, 1, key);
		bind_text(st, 2, target);
	}
	return st;
}

static int step_done(struct store_sqlite *s, sqlite3_stmt *st, const char *what)
{
	if (!st)
		return ERR_IO;
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store__fail(s, what);
}

/* Ends the call's transaction: commits when rc is 0, else rolls back keeping rc. */
static int end(struct store_sqlite *s, int rc)
{
	if (rc == 0)
		rc = store__commit(s);
	return store__rollback(s, rc);
}

/* Inserts one message inside the caller's transaction; *added when it was new. */
static int insert(struct store_sqlite *s, const char *target, const struct dc_message *m,
		  bool *added, int64_t now)
{
	*added = false;
	if (m->body_len > INT_MAX)
		return err_set(ERR_LIMIT, "store: outbox message %s is too large", m->key);
	sqlite3_stmt *st = keyed(s, ST_OB_INSERT, m->key, target);
	if (!st)
		return ERR_IO;
	bind_text(st, 3, m->job_key);
	sqlite3_bind_int(st, 4, m->seq);
	bind_text(st, 5, dc_format_name(m->format));
	sqlite3_bind_blob(st, 6, m->body ? m->body : "", (int)m->body_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, now);
	int rc = step_done(s, st, "outbox enqueue");
	if (rc || sqlite3_changes(s->db) == 0)
		return rc;
	*added = true;
	return step_done(s, keyed(s, ST_OB_ORPHAN, m->key, target), "outbox enqueue");
}

int store__outbox_enqueue(struct store *base, const char *target, const struct dc_message *m,
			  size_t n, size_t *added, int64_t now_ms)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	size_t count = 0;
	*added = 0;
	int rc = store__begin(s);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		bool one = false;
		rc = insert(s, target, &m[i], &one, now_ms);
		count += one;
	}
	rc = end(s, rc);
	if (rc == 0)
		*added = count;
	return rc;
}

static int row_message(struct dc_message *m, sqlite3_stmt *st)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->key, sizeof(m->key), "%s", (const char *)sqlite3_column_text(st, 0));
	snprintf(m->job_key, sizeof(m->job_key), "%s", (const char *)sqlite3_column_text(st, 1));
	m->seq = sqlite3_column_int(st, 2);
	m->status = m->seq > 0 ? DC_STATUS_COMPLETED : DC_STATUS_IN_PROGRESS;
	if (dc_format_parse(&m->format, (const char *)sqlite3_column_text(st, 3)) != 0)
		return err_set(ERR_BADSTATE, "store: outbox message %s has an unknown format",
			       m->key);
	int len = sqlite3_column_bytes(st, 4);
	m->body = malloc((size_t)len + 1);
	if (!m->body)
		return err_set(ERR_NOMEM, "out of memory");
	if (len)
		memcpy(m->body, sqlite3_column_blob(st, 4), (size_t)len);
	m->body[len] = '\0';
	m->body_len = (size_t)len;
	m->attempts = sqlite3_column_int(st, 5);
	return 0;
}

/* Reads the due heads into out[]; the statement is reset before return. */
static int claim_select(struct store_sqlite *s, const char *target, int64_t now, size_t max,
			struct dc_message *out, size_t *n)
{
	sqlite3_stmt *st = store__stmt(s, ST_OB_CLAIM);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, target);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_int64(st, 3, max > INT64_MAX ? INT64_MAX : (int64_t)max);
	int rc = 0, step = SQLITE_DONE;
	while (rc == 0 && *n < max && (step = sqlite3_step(st)) == SQLITE_ROW) {
		rc = row_message(&out[*n], st);
		(*n)++;
	}
	if (rc == 0 && step != SQLITE_ROW && step != SQLITE_DONE)
		rc = store__fail(s, "outbox claim");
	sqlite3_reset(st);
	return rc;
}

int store__outbox_claim(struct store *base, const char *target, int64_t now_ms, size_t max,
			struct dc_message *out, size_t *n)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	*n = 0;
	int rc = store__begin(s);
	if (rc == 0)
		rc = claim_select(s, target, now_ms, max, out, n);
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		sqlite3_stmt *st = keyed(s, ST_OB_ATTEMPT, out[i].key, target);
		if (st)
			sqlite3_bind_int64(st, 3, now_ms);
		rc = step_done(s, st, "outbox claim");
	}
	rc = end(s, rc);
	if (rc) {
		for (size_t i = 0; i < *n; i++)
			dc_message_finish(&out[i]);
		*n = 0;
	}
	return rc;
}

static int settle_one(struct store_sqlite *s, const char *target, const struct dc_settlement *x)
{
	enum st_id id = x->kind == DC_SETTLE_DELIVERED ? ST_OB_DELIVERED
			: x->kind == DC_SETTLE_RETRY   ? ST_OB_RETRY
						       : ST_OB_DEAD;
	if (x->body && x->body_len > INT_MAX)
		return err_set(ERR_LIMIT, "store: the answer to %s is too large", x->key);
	sqlite3_stmt *st = keyed(s, id, x->key, target);
	if (!st)
		return ERR_IO;
	if (id == ST_OB_DELIVERED) {
		sqlite3_bind_int64(st, 3, x->status);
		sqlite3_bind_int(st, 4, x->already ? 1 : 0);
	} else if (id == ST_OB_RETRY) {
		sqlite3_bind_int64(st, 3, x->next_at_ms);
		sqlite3_bind_int64(st, 4, x->status);
		bind_text(st, 5, x->error);
	} else {
		sqlite3_bind_int64(st, 3, x->status);
		bind_text(st, 4, x->error);
		if (x->body)
			sqlite3_bind_blob(st, 5, x->body, (int)x->body_len, SQLITE_STATIC);
	}
	int rc = step_done(s, st, "outbox settle");
	if (rc == 0 && id == ST_OB_DEAD)
		rc = step_done(s, keyed(s, ST_OB_CASCADE, x->key, target), "outbox settle");
	return rc;
}

int store__outbox_settle(struct store *base, const char *target, const struct dc_settlement *x,
			 size_t n)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	int rc = store__begin(s);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = settle_one(s, target, &x[i]);
	return end(s, rc);
}

int store__outbox_next_due(struct store *base, const char *target, int64_t *out_ms)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_OB_NEXT_DUE);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, target);
	int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : store__fail(s, "outbox next due");
	if (rc == 0 && sqlite3_column_type(st, 0) == SQLITE_NULL)
		rc = ERR_NOTFOUND;
	else if (rc == 0)
		*out_ms = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc;
}

int store__outbox_first_attempt(struct store *base, const char *target, const char *key,
				int64_t *out_ms)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = keyed(s, ST_OB_FIRST, key, target);
	*out_ms = 0;
	if (!st)
		return ERR_IO;
	int step = sqlite3_step(st);
	int rc = step == SQLITE_ROW    ? 0
		 : step == SQLITE_DONE ? err_set(ERR_NOTFOUND, "outbox: no message %s", key)
				       : store__fail(s, "outbox first attempt");
	if (rc == 0)
		*out_ms = sqlite3_column_int64(st, 0); /* NULL reads as 0 */
	sqlite3_reset(st);
	return rc;
}

int store__outbox_counts(struct store *base, const char *target, struct dc_outbox_counts *out)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = store__stmt(s, ST_OB_COUNTS);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, target);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(st, 0);
		uint64_t c = (uint64_t)sqlite3_column_int64(st, 1);
		if (strcmp(state, "pending") == 0)
			out->pending = c;
		else if (strcmp(state, "delivered") == 0)
			out->delivered = c;
		else
			out->dead = c;
	}
	sqlite3_reset(st);
	return step == SQLITE_DONE ? 0 : store__fail(s, "outbox counts");
}

int store__outbox_each_dead(struct store *base, const char *target,
			    void (*fn)(const struct dc_dead_letter *d, void *ctx), void *ctx)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = store__stmt(s, ST_OB_DEAD_LIST);
	if (!st)
		return ERR_IO;
	bind_text(st, 1, target);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct dc_dead_letter d = {
			.key = (const char *)sqlite3_column_text(st, 0),
			.seq = sqlite3_column_int(st, 1),
			.attempts = sqlite3_column_int(st, 2),
			.status = (long)sqlite3_column_int64(st, 3),
			.error = (const char *)sqlite3_column_text(st, 4),
			.body = (const char *)sqlite3_column_text(st, 5),
		};
		fn(&d, ctx);
	}
	sqlite3_reset(st);
	return step == SQLITE_DONE ? 0 : store__fail(s, "outbox dead letters");
}

int store__outbox_requeue(struct store *base, const char *target, uint64_t *n)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	*n = 0;
	int rc = store__begin(s);
	sqlite3_stmt *st = rc == 0 ? store__stmt(s, ST_OB_REQUEUE) : NULL;
	if (st) {
		bind_text(st, 1, target);
		rc = step_done(s, st, "outbox requeue");
	} else if (rc == 0) {
		rc = ERR_IO;
	}
	uint64_t changed = rc == 0 ? (uint64_t)sqlite3_changes(s->db) : 0;
	rc = end(s, rc);
	if (rc == 0)
		*n = changed;
	return rc;
}
