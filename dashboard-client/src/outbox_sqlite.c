/* The SQLite outbox behind `spyre-ci report` (and `spyre-ci run`): one table, WAL journal with
 * synchronous=FULL (a commit is on disk before the call returns), every statement prepared once
 * with bound parameters. The promises it keeps are outbox.h's; each call is one transaction. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "dashboard-client/outbox.h"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS outbox ("
    " id INTEGER PRIMARY KEY,"
    " key TEXT NOT NULL,"
    " target TEXT NOT NULL,"
    " job_key TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " format TEXT NOT NULL,"
    " body BLOB NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','delivered','dead')),"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " first_attempt_ms INTEGER,"
    " next_at_ms INTEGER NOT NULL DEFAULT 0,"
    " last_status INTEGER NOT NULL DEFAULT 0,"
    " last_error TEXT,"
    " dead_body BLOB,"
    " already INTEGER NOT NULL DEFAULT 0,"
    " UNIQUE (target, key));"
    "CREATE INDEX IF NOT EXISTS outbox_due ON outbox (target, state, next_at_ms);"
    "CREATE INDEX IF NOT EXISTS outbox_job ON outbox (target, job_key, seq);"
    "PRAGMA user_version = 1;";

/* A pending message is a job's head when no earlier message of its job is pending. */
#define HEAD                                                                                       \
	" NOT EXISTS (SELECT 1 FROM outbox p WHERE p.target = o.target AND p.job_key = o.job_key"  \
	" AND p.seq < o.seq AND p.state = 'pending')"

enum {
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
	S_INSERT,
	S_ORPHAN,
	S_CLAIM,
	S_ATTEMPT,
	S_DELIVERED,
	S_RETRY,
	S_DEAD,
	S_CASCADE,
	S_NEXT_DUE,
	S_FIRST,
	S_COUNTS,
	S_DEAD_LIST,
	S_REQUEUE,
	S_COUNT_
};

static const char *const sql[S_COUNT_] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_INSERT] = "INSERT OR IGNORE INTO outbox (key, target, job_key, seq, format, body)"
		     " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	/* A message whose job already lost an earlier one could only be rejected. */
	[S_ORPHAN] = "UPDATE outbox AS o SET state = 'dead',"
		     " last_error = 'an earlier message of its job was dead-lettered'"
		     " WHERE o.key = ?1 AND o.target = ?2 AND o.state = 'pending' AND EXISTS "
		     "(SELECT 1 FROM outbox p"
		     " WHERE p.target = o.target AND p.job_key = o.job_key AND p.seq < o.seq"
		     " AND p.state = 'dead')",
	[S_CLAIM] = "SELECT key, job_key, seq, format, body, attempts FROM outbox o"
		    " WHERE o.target = ?1 AND o.state = 'pending' AND o.next_at_ms <= ?2"
		    " AND" HEAD " ORDER BY o.next_at_ms, o.id LIMIT ?3",
	[S_ATTEMPT] = "UPDATE outbox SET attempts = attempts + 1,"
		      " first_attempt_ms = COALESCE(first_attempt_ms, ?2) WHERE key = ?1"
		      " AND target = ?3",
	[S_DELIVERED] = "UPDATE outbox SET state = 'delivered', last_status = ?2, already = ?3"
			" WHERE key = ?1 AND target = ?4 AND state = 'pending'",
	[S_RETRY] = "UPDATE outbox SET next_at_ms = ?2, last_status = ?3, last_error = ?4"
		    " WHERE key = ?1 AND target = ?5 AND state = 'pending'",
	[S_DEAD] = "UPDATE outbox SET state = 'dead', last_status = ?2, last_error = ?3,"
		   " dead_body = ?4 WHERE key = ?1 AND target = ?5 AND state = 'pending'",
	[S_CASCADE] =
	    "UPDATE outbox AS o SET state = 'dead',"
	    " last_error = 'an earlier message of its job was dead-lettered'"
	    " FROM (SELECT target, job_key, seq FROM outbox WHERE key = ?1 AND target = ?2)"
	    " AS d"
	    " WHERE o.state = 'pending' AND o.target = d.target AND o.job_key = d.job_key"
	    " AND o.seq > d.seq",
	[S_NEXT_DUE] = "SELECT MIN(o.next_at_ms) FROM outbox o"
		       " WHERE o.target = ?1 AND o.state = 'pending' AND" HEAD,
	[S_FIRST] = "SELECT first_attempt_ms FROM outbox WHERE key = ?1 AND target = ?2",
	[S_COUNTS] = "SELECT state, COUNT(*) FROM outbox WHERE target = ?1 GROUP BY state",
	[S_DEAD_LIST] = "SELECT key, seq, attempts, last_status, last_error, dead_body FROM outbox"
			" WHERE target = ?1 AND state = 'dead' ORDER BY id",
	[S_REQUEUE] = "UPDATE outbox SET state = 'pending', next_at_ms = 0, first_attempt_ms = NULL"
		      " WHERE target = ?1 AND state IN ('delivered', 'dead')",
};

struct sq_outbox {
	struct dc_outbox base;
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT_];
};

static int db_err(struct sq_outbox *o, const char *what)
{
	return err_set(ERR_IO, "outbox: %s: %s", what, sqlite3_errmsg(o->db));
}

/* Resets and clears a statement for its next use. */
static sqlite3_stmt *stmt(struct sq_outbox *o, int which)
{
	sqlite3_stmt *s = o->st[which];
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

static int run(struct sq_outbox *o, int which, const char *what)
{
	int rc = sqlite3_step(o->st[which]);
	sqlite3_reset(o->st[which]);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : db_err(o, what);
}

static int begin(struct sq_outbox *o)
{
	stmt(o, S_BEGIN);
	return run(o, S_BEGIN, "begin");
}

/* Commits, or rolls back when `rc` says the transaction failed; returns rc or the commit's. */
static int end(struct sq_outbox *o, int rc)
{
	if (rc == 0) {
		stmt(o, S_COMMIT);
		rc = run(o, S_COMMIT, "commit");
		if (rc == 0)
			return 0;
	}
	stmt(o, S_ROLLBACK);
	sqlite3_step(o->st[S_ROLLBACK]);
	sqlite3_reset(o->st[S_ROLLBACK]);
	return rc;
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

/* Inserts one message inside the caller's transaction. */
static int insert(struct sq_outbox *o, const char *target, const struct dc_message *m, bool *added)
{
	sqlite3_stmt *s = stmt(o, S_INSERT);
	bind_text(s, 1, m->key);
	bind_text(s, 2, target);
	bind_text(s, 3, m->job_key);
	sqlite3_bind_int(s, 4, m->seq);
	bind_text(s, 5, dc_format_name(m->format));
	sqlite3_bind_blob(s, 6, m->body, (int)m->body_len, SQLITE_TRANSIENT);
	int rc = run(o, S_INSERT, "enqueue");
	*added = rc == 0 && sqlite3_changes(o->db) > 0;
	if (rc == 0 && *added) {
		sqlite3_stmt *x = stmt(o, S_ORPHAN);
		bind_text(x, 1, m->key);
		bind_text(x, 2, target);
		rc = run(o, S_ORPHAN, "enqueue");
	}
	return rc;
}

static int sq_enqueue(struct dc_outbox *ob, const char *target, const struct dc_message *m,
		      bool *added)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	int rc = begin(o);
	if (rc)
		return rc;
	return end(o, insert(o, target, m, added));
}

static int sq_enqueue_many(struct dc_outbox *ob, const char *target, const struct dc_message *m,
			   size_t n, size_t *added)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	*added = 0;
	int rc = begin(o);
	if (rc)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		bool one = false;
		rc = insert(o, target, &m[i], &one);
		*added += one;
	}
	rc = end(o, rc);
	if (rc)
		*added = 0;
	return rc;
}

static int row_message(struct dc_message *m, sqlite3_stmt *s)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->key, sizeof(m->key), "%s", (const char *)sqlite3_column_text(s, 0));
	snprintf(m->job_key, sizeof(m->job_key), "%s", (const char *)sqlite3_column_text(s, 1));
	m->seq = sqlite3_column_int(s, 2);
	m->status = m->seq > 0 ? DC_STATUS_COMPLETED : DC_STATUS_IN_PROGRESS;
	dc_format_parse(&m->format, (const char *)sqlite3_column_text(s, 3));
	int len = sqlite3_column_bytes(s, 4);
	m->body = malloc((size_t)len + 1);
	if (!m->body)
		return err_set(ERR_NOMEM, "out of memory");
	if (len)
		memcpy(m->body, sqlite3_column_blob(s, 4), (size_t)len);
	m->body[len] = '\0';
	m->body_len = (size_t)len;
	m->attempts = sqlite3_column_int(s, 5);
	return 0;
}

static int sq_claim(struct dc_outbox *ob, const char *target, int64_t now_ms, size_t max,
		    struct dc_message *out, size_t *n)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	*n = 0;
	int rc = begin(o);
	if (rc)
		return rc;
	sqlite3_stmt *s = stmt(o, S_CLAIM);
	bind_text(s, 1, target);
	sqlite3_bind_int64(s, 2, now_ms);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)max);
	int step;
	while (rc == 0 && *n < max && (step = sqlite3_step(s)) == SQLITE_ROW)
		rc = row_message(&out[(*n)++], s);
	if (rc == 0 && *n < max && step != SQLITE_DONE)
		rc = db_err(o, "claim");
	sqlite3_reset(s);
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		sqlite3_stmt *u = stmt(o, S_ATTEMPT);
		bind_text(u, 1, out[i].key);
		sqlite3_bind_int64(u, 2, now_ms);
		bind_text(u, 3, target);
		rc = run(o, S_ATTEMPT, "claim");
	}
	rc = end(o, rc);
	if (rc) {
		for (size_t i = 0; i < *n; i++)
			dc_message_finish(&out[i]);
		*n = 0;
	}
	return rc;
}

static int settle_one(struct sq_outbox *o, const char *target, const struct dc_settlement *x)
{
	int which = x->kind == DC_SETTLE_DELIVERED ? S_DELIVERED
		    : x->kind == DC_SETTLE_RETRY   ? S_RETRY
						   : S_DEAD;
	sqlite3_stmt *s = stmt(o, which);
	bind_text(s, 1, x->key);
	if (which == S_DELIVERED) {
		sqlite3_bind_int64(s, 2, x->status);
		sqlite3_bind_int(s, 3, x->already ? 1 : 0);
		bind_text(s, 4, target);
	} else if (which == S_RETRY) {
		sqlite3_bind_int64(s, 2, x->next_at_ms);
		sqlite3_bind_int64(s, 3, x->status);
		bind_text(s, 4, x->error);
		bind_text(s, 5, target);
	} else {
		sqlite3_bind_int64(s, 2, x->status);
		bind_text(s, 3, x->error);
		if (x->body)
			sqlite3_bind_blob(s, 4, x->body, (int)x->body_len, SQLITE_TRANSIENT);
		bind_text(s, 5, target);
	}
	int rc = run(o, which, "settle");
	if (rc == 0 && which == S_DEAD) {
		sqlite3_stmt *c = stmt(o, S_CASCADE);
		bind_text(c, 1, x->key);
		bind_text(c, 2, target);
		rc = run(o, S_CASCADE, "settle");
	}
	return rc;
}

static int sq_settle(struct dc_outbox *ob, const char *target, const struct dc_settlement *s,
		     size_t n)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	int rc = begin(o);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = settle_one(o, target, &s[i]);
	return end(o, rc);
}

static int sq_next_due(struct dc_outbox *ob, const char *target, int64_t *out_ms)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	sqlite3_stmt *s = stmt(o, S_NEXT_DUE);
	bind_text(s, 1, target);
	int step = sqlite3_step(s);
	int rc = step == SQLITE_ROW ? 0 : db_err(o, "next due");
	if (rc == 0 && sqlite3_column_type(s, 0) == SQLITE_NULL)
		rc = ERR_NOTFOUND;
	else if (rc == 0)
		*out_ms = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return rc;
}

static int sq_first_attempt(struct dc_outbox *ob, const char *target, const char *key,
			    int64_t *out_ms)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	sqlite3_stmt *s = stmt(o, S_FIRST);
	bind_text(s, 1, key);
	bind_text(s, 2, target);
	int step = sqlite3_step(s);
	int rc = step == SQLITE_ROW    ? 0
		 : step == SQLITE_DONE ? err_set(ERR_NOTFOUND, "outbox: no message %s", key)
				       : db_err(o, "first attempt");
	*out_ms = rc == 0 ? sqlite3_column_int64(s, 0) : 0; /* NULL reads as 0 */
	sqlite3_reset(s);
	return rc;
}

static int sq_counts(struct dc_outbox *ob, const char *target, struct dc_outbox_counts *out)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *s = stmt(o, S_COUNTS);
	bind_text(s, 1, target);
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(s, 0);
		uint64_t c = (uint64_t)sqlite3_column_int64(s, 1);
		if (strcmp(state, "pending") == 0)
			out->pending = c;
		else if (strcmp(state, "delivered") == 0)
			out->delivered = c;
		else
			out->dead = c;
	}
	sqlite3_reset(s);
	return step == SQLITE_DONE ? 0 : db_err(o, "counts");
}

static int sq_each_dead(struct dc_outbox *ob, const char *target,
			void (*fn)(const struct dc_dead_letter *d, void *ctx), void *ctx)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	sqlite3_stmt *s = stmt(o, S_DEAD_LIST);
	bind_text(s, 1, target);
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct dc_dead_letter d = {
			.key = (const char *)sqlite3_column_text(s, 0),
			.seq = sqlite3_column_int(s, 1),
			.attempts = sqlite3_column_int(s, 2),
			.status = (long)sqlite3_column_int64(s, 3),
			.error = (const char *)sqlite3_column_text(s, 4),
			.body = (const char *)sqlite3_column_text(s, 5),
		};
		fn(&d, ctx);
	}
	sqlite3_reset(s);
	return step == SQLITE_DONE ? 0 : db_err(o, "dead letters");
}

static int sq_requeue(struct dc_outbox *ob, const char *target, uint64_t *n)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	int rc = begin(o);
	if (rc)
		return rc;
	bind_text(stmt(o, S_REQUEUE), 1, target);
	rc = run(o, S_REQUEUE, "requeue");
	*n = rc == 0 ? (uint64_t)sqlite3_changes(o->db) : 0;
	return end(o, rc);
}

static void sq_destroy(struct dc_outbox *ob)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	for (int i = 0; i < S_COUNT_; i++)
		sqlite3_finalize(o->st[i]);
	sqlite3_close(o->db);
	free(o);
}

static const struct dc_outbox_ops sq_ops = {
	.enqueue = sq_enqueue,
	.enqueue_many = sq_enqueue_many,
	.claim = sq_claim,
	.settle = sq_settle,
	.next_due = sq_next_due,
	.first_attempt = sq_first_attempt,
	.counts = sq_counts,
	.each_dead = sq_each_dead,
	.requeue = sq_requeue,
	.destroy = sq_destroy,
};

int dc_outbox_sqlite_open(struct dc_outbox **out, const char *path)
{
	*out = NULL;
	struct sq_outbox *o = calloc(1, sizeof(*o));
	if (!o)
		return err_set(ERR_NOMEM, "out of memory");
	o->base.ops = &sq_ops;
	int rc = 0;
	if (sqlite3_open_v2(path, &o->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK)
		rc = err_set(ERR_IO, "outbox %s: %s", path,
			     o->db ? sqlite3_errmsg(o->db) : "cannot open");
	if (rc == 0)
		sqlite3_busy_timeout(o->db, 5000);
	/* Constant text, no parameters: the pragmas and the schema. */
	static const char *const setup[] = { "PRAGMA journal_mode = WAL",
					     "PRAGMA synchronous = FULL", schema };
	for (size_t i = 0; rc == 0 && i < sizeof(setup) / sizeof(setup[0]); i++)
		if (sqlite3_exec(o->db, setup[i], NULL, NULL, NULL) != SQLITE_OK)
			rc = err_set(ERR_IO, "outbox %s: %s", path, sqlite3_errmsg(o->db));
	for (int i = 0; rc == 0 && i < S_COUNT_; i++)
		if (sqlite3_prepare_v3(o->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &o->st[i],
				       NULL) != SQLITE_OK)
			rc = err_set(ERR_IO, "outbox %s: preparing statement %d: %s", path, i,
				     sqlite3_errmsg(o->db));
	if (rc) {
		sq_destroy(&o->base);
		return rc;
	}
	*out = &o->base;
	return 0;
}
