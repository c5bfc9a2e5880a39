/* The SQLite outbox (outbox_sqlite.h), the one implementation of outbox.h's promises: on a file
 * of its own for `spyre-ci report` and `spyre-ci run --post`, or attached to the daemon's
 * store connection. One table; each call one transaction (BEGIN IMMEDIATE, so two processes on
 * one file take turns); every statement prepared once with bound parameters. The SQL is what
 * PostgreSQL accepts too: INSERT ... ON CONFLICT DO NOTHING, correlated subqueries instead of
 * UPDATE ... FROM, no SQLite-only functions; the time a message was queued is bound, not taken
 * from the database's clock. */
#include "dashboard-client/outbox_sqlite.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"

/* An own file's layout, one step a version (PRAGMA user_version). Step 1 is the table as the
 * first outbox files have it; each later step changes it as a migration does, so that a new
 * file and an old one brought up to date have the same layout. All the steps a file lacks run
 * in one transaction when it is opened. The daemon's store makes the same table through its
 * own migrations (store_migrate.c, step 3): a step here needs its twin there. */
#define OUTBOX_LAYOUT 2
static const char *const layout[OUTBOX_LAYOUT] = {
	/* 1: the messages, unique by target and key; a job's messages ordered by seq */
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
	"PRAGMA user_version = 1;",
	/* 2: when a message was queued (the wall clock, in ms), which the daemon's retention
	 * reads; 0 for the messages of a file written before */
	"ALTER TABLE outbox ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0;"
	"PRAGMA user_version = 2;",
};

/* A pending message is its job's head when no earlier message of its job is pending. */
#define HEAD                                                                                       \
	" NOT EXISTS (SELECT 1 FROM outbox p WHERE p.target = o.target AND p.job_key = o.job_key"  \
	" AND p.seq < o.seq AND p.state = 'pending')"
#define ORPHANED "'an earlier message of its job was dead-lettered'"
/* The job and place of the message (?1 key, ?2 target). */
#define ITS(col) "(SELECT d." col " FROM outbox d WHERE d.target = ?2 AND d.key = ?1)"

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

/* The statements keyed by one message take ?1 its key and ?2 its target. */
static const char *const sql[S_COUNT_] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_INSERT] = "INSERT INTO outbox (key, target, job_key, seq, format, body, created_ms)"
		     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (target, key) DO NOTHING",
	/* A message whose job already lost an earlier one could only be rejected. */
	[S_ORPHAN] =
	    "UPDATE outbox SET state = 'dead', last_error = " ORPHANED
	    " WHERE key = ?1 AND target = ?2 AND state = 'pending' AND EXISTS (SELECT 1 FROM outbox"
	    " p WHERE p.target = ?2 AND p.job_key = " ITS("job_key") " AND p.seq < " ITS(
		"seq") " AND p.state = 'dead')",
	[S_CLAIM] = "SELECT o.key, o.job_key, o.seq, o.format, o.body, o.attempts FROM outbox o"
		    " WHERE o.target = ?1 AND o.state = 'pending' AND o.next_at_ms <= ?2 AND" HEAD
		    " ORDER BY o.next_at_ms, o.id LIMIT ?3",
	[S_ATTEMPT] =
	    "UPDATE outbox SET attempts = attempts + 1,"
	    " first_attempt_ms = COALESCE(first_attempt_ms, ?3) WHERE key = ?1 AND target = ?2",
	[S_DELIVERED] = "UPDATE outbox SET state = 'delivered', last_status = ?3, already = ?4"
			" WHERE key = ?1 AND target = ?2 AND state = 'pending'",
	[S_RETRY] = "UPDATE outbox SET next_at_ms = ?3, last_status = ?4, last_error = ?5"
		    " WHERE key = ?1 AND target = ?2 AND state = 'pending'",
	[S_DEAD] =
	    "UPDATE outbox SET state = 'dead', last_status = ?3, last_error = ?4, dead_body = ?5"
	    " WHERE key = ?1 AND target = ?2 AND state = 'pending'",
	[S_CASCADE] = "UPDATE outbox SET state = 'dead', last_error = " ORPHANED
		      " WHERE target = ?2 AND state = 'pending' AND job_key = " ITS(
			  "job_key") " AND seq > " ITS("seq"),
	[S_NEXT_DUE] = "SELECT MIN(o.next_at_ms) FROM outbox o"
		       " WHERE o.target = ?1 AND o.state = 'pending' AND" HEAD,
	[S_FIRST] = "SELECT first_attempt_ms FROM outbox WHERE key = ?1 AND target = ?2",
	[S_COUNTS] = "SELECT state, COUNT(*) FROM outbox WHERE target = ?1 GROUP BY state",
	[S_DEAD_LIST] = "SELECT key, seq, attempts, last_status, last_error, dead_body FROM outbox"
			" WHERE target = ?1 AND state = 'dead' ORDER BY id",
	[S_REQUEUE] = "UPDATE outbox SET state = 'pending', next_at_ms = 0, first_attempt_ms = NULL"
		      " WHERE target = ?1 AND state IN ('delivered', 'dead')",
};

#undef ITS
#undef ORPHANED
#undef HEAD

/* The outbox on a connection it borrows: from the caller of dc_outbox_sqlite_attach(), or
 * from the file outbox around it. */
struct sq_outbox {
	struct dc_outbox base;
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT_];
};

/* An outbox with a file of its own: `conn` is its connection, closed by its destroy. */
struct file_outbox {
	struct sq_outbox ob; /* runs on conn, borrowed from here */
	sqlite3 *conn;
};

static int db_err(struct sq_outbox *o, const char *what)
{
	return err_set(ERR_IO, "outbox: %s: %s", what, sqlite3_errmsg(o->db));
}

/* The statement reset and cleared for its next use. */
static sqlite3_stmt *stmt(struct sq_outbox *o, int which)
{
	sqlite3_stmt *s = o->st[which];
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

/* Bound values are SQLITE_STATIC: every statement is reset before its call returns. */
static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/* A statement keyed by one message (?1 key, ?2 target). */
static sqlite3_stmt *keyed(struct sq_outbox *o, int which, const char *key, const char *target)
{
	sqlite3_stmt *s = stmt(o, which);
	bind_text(s, 1, key);
	bind_text(s, 2, target);
	return s;
}

static int run(struct sq_outbox *o, int which, const char *what)
{
	int rc = sqlite3_step(o->st[which]);
	sqlite3_reset(o->st[which]);
	return rc == SQLITE_DONE ? 0 : db_err(o, what);
}

static int begin(struct sq_outbox *o)
{
	stmt(o, S_BEGIN);
	return run(o, S_BEGIN, "begin");
}

/* Ends the call's transaction: commits when rc is 0, else (or when the commit fails) rolls
 * back, keeping the first error. */
static int end(struct sq_outbox *o, int rc)
{
	if (rc == 0) {
		stmt(o, S_COMMIT);
		rc = run(o, S_COMMIT, "commit");
	}
	if (rc && !sqlite3_get_autocommit(o->db)) {
		stmt(o, S_ROLLBACK);
		sqlite3_step(o->st[S_ROLLBACK]);
		sqlite3_reset(o->st[S_ROLLBACK]);
	}
	return rc;
}

/* Inserts one message inside the caller's transaction; *added when it was new. */
static int insert(struct sq_outbox *o, const char *target, const struct dc_message *m, bool *added,
		  int64_t now)
{
	*added = false;
	if (m->body_len > INT_MAX)
		return err_set(ERR_LIMIT, "outbox: message %s is too large", m->key);
	sqlite3_stmt *s = keyed(o, S_INSERT, m->key, target);
	bind_text(s, 3, m->job_key);
	sqlite3_bind_int(s, 4, m->seq);
	bind_text(s, 5, dc_format_name(m->format));
	sqlite3_bind_blob(s, 6, m->body ? m->body : "", (int)m->body_len, SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, now);
	int rc = run(o, S_INSERT, "enqueue");
	if (rc || sqlite3_changes(o->db) == 0)
		return rc;
	*added = true;
	keyed(o, S_ORPHAN, m->key, target);
	return run(o, S_ORPHAN, "enqueue");
}

static int sq_enqueue_many(struct dc_outbox *ob, const char *target, const struct dc_message *m,
			   size_t n, size_t *added)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	/* The time a message was queued, for retention: the wall clock, like the jobs' times. */
	int64_t now = clock_wall_ms();
	size_t count = 0;
	*added = 0;
	int rc = begin(o);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		bool one = false;
		rc = insert(o, target, &m[i], &one, now);
		count += one;
	}
	rc = end(o, rc);
	if (rc == 0)
		*added = count;
	return rc;
}

static int sq_enqueue(struct dc_outbox *ob, const char *target, const struct dc_message *m,
		      bool *added)
{
	size_t n = 0;
	int rc = sq_enqueue_many(ob, target, m, 1, &n);
	*added = n > 0;
	return rc;
}

static int row_message(struct dc_message *m, sqlite3_stmt *s)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->key, sizeof(m->key), "%s", (const char *)sqlite3_column_text(s, 0));
	snprintf(m->job_key, sizeof(m->job_key), "%s", (const char *)sqlite3_column_text(s, 1));
	m->seq = sqlite3_column_int(s, 2);
	m->status = m->seq > 0 ? DC_STATUS_COMPLETED : DC_STATUS_IN_PROGRESS;
	if (dc_format_parse(&m->format, (const char *)sqlite3_column_text(s, 3)) != 0)
		return err_set(ERR_BADSTATE, "outbox: message %s has an unknown format", m->key);
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

/* Reads the due heads into out[]; the statement is reset before return. */
static int claim_select(struct sq_outbox *o, const char *target, int64_t now, size_t max,
			struct dc_message *out, size_t *n)
{
	sqlite3_stmt *s = stmt(o, S_CLAIM);
	bind_text(s, 1, target);
	sqlite3_bind_int64(s, 2, now);
	sqlite3_bind_int64(s, 3, max > INT64_MAX ? INT64_MAX : (int64_t)max);
	int rc = 0, step = SQLITE_DONE;
	while (rc == 0 && *n < max && (step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = row_message(&out[*n], s);
		(*n)++;
	}
	if (rc == 0 && step != SQLITE_ROW && step != SQLITE_DONE)
		rc = db_err(o, "claim");
	sqlite3_reset(s);
	return rc;
}

static int sq_claim(struct dc_outbox *ob, const char *target, int64_t now_ms, size_t max,
		    struct dc_message *out, size_t *n)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	*n = 0;
	int rc = begin(o);
	if (rc == 0)
		rc = claim_select(o, target, now_ms, max, out, n);
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		sqlite3_bind_int64(keyed(o, S_ATTEMPT, out[i].key, target), 3, now_ms);
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
	if (x->body && x->body_len > INT_MAX)
		return err_set(ERR_LIMIT, "outbox: the answer to %s is too large", x->key);
	sqlite3_stmt *s = keyed(o, which, x->key, target);
	if (which == S_DELIVERED) {
		sqlite3_bind_int64(s, 3, x->status);
		sqlite3_bind_int(s, 4, x->already ? 1 : 0);
	} else if (which == S_RETRY) {
		sqlite3_bind_int64(s, 3, x->next_at_ms);
		sqlite3_bind_int64(s, 4, x->status);
		bind_text(s, 5, x->error);
	} else {
		sqlite3_bind_int64(s, 3, x->status);
		bind_text(s, 4, x->error);
		if (x->body)
			sqlite3_bind_blob(s, 5, x->body, (int)x->body_len, SQLITE_STATIC);
	}
	int rc = run(o, which, "settle");
	if (rc == 0 && which == S_DEAD) {
		keyed(o, S_CASCADE, x->key, target);
		rc = run(o, S_CASCADE, "settle");
	}
	return rc;
}

static int sq_settle(struct dc_outbox *ob, const char *target, const struct dc_settlement *x,
		     size_t n)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	int rc = begin(o);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = settle_one(o, target, &x[i]);
	return end(o, rc);
}

static int sq_next_due(struct dc_outbox *ob, const char *target, int64_t *out_ms)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	sqlite3_stmt *s = stmt(o, S_NEXT_DUE);
	bind_text(s, 1, target);
	int rc = sqlite3_step(s) == SQLITE_ROW ? 0 : db_err(o, "next due");
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
	sqlite3_stmt *s = keyed(o, S_FIRST, key, target);
	*out_ms = 0;
	int step = sqlite3_step(s);
	int rc = step == SQLITE_ROW    ? 0
		 : step == SQLITE_DONE ? err_set(ERR_NOTFOUND, "outbox: no message %s", key)
				       : db_err(o, "first attempt");
	if (rc == 0)
		*out_ms = sqlite3_column_int64(s, 0); /* NULL reads as 0 */
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
	*n = 0;
	int rc = begin(o);
	if (rc == 0) {
		bind_text(stmt(o, S_REQUEUE), 1, target);
		rc = run(o, S_REQUEUE, "requeue");
	}
	uint64_t changed = rc == 0 ? (uint64_t)sqlite3_changes(o->db) : 0;
	rc = end(o, rc);
	if (rc == 0)
		*n = changed;
	return rc;
}

static void finalize_all(struct sq_outbox *o)
{
	for (int i = 0; i < S_COUNT_; i++) {
		sqlite3_finalize(o->st[i]);
		o->st[i] = NULL;
	}
}

/* The borrowed connection stays open: it is its owner's. */
static void attached_destroy(struct dc_outbox *ob)
{
	struct sq_outbox *o = (struct sq_outbox *)ob;
	finalize_all(o);
	free(o);
}

static void file_destroy(struct dc_outbox *ob)
{
	struct file_outbox *f = (struct file_outbox *)ob;
	finalize_all(&f->ob);
	sqlite3_close(f->conn);
	free(f);
}

/* The two kinds differ only in what destroy lets go of. */
#define SQ_OPS(destroy_fn)                                                                         \
	{                                                                                          \
		.enqueue = sq_enqueue, .enqueue_many = sq_enqueue_many, .claim = sq_claim,         \
		.settle = sq_settle, .next_due = sq_next_due, .first_attempt = sq_first_attempt,   \
		.counts = sq_counts, .each_dead = sq_each_dead, .requeue = sq_requeue,             \
		.destroy = destroy_fn,                                                             \
	}
static const struct dc_outbox_ops attached_ops = SQ_OPS(attached_destroy);
static const struct dc_outbox_ops file_ops = SQ_OPS(file_destroy);
#undef SQ_OPS

/* Prepares every statement on o->db; a table that lacks what they name is ERR_BADSTATE. */
static int prepare_all(struct sq_outbox *o)
{
	for (int i = 0; i < S_COUNT_; i++)
		if (sqlite3_prepare_v3(o->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &o->st[i],
				       NULL) != SQLITE_OK)
			return err_set(ERR_BADSTATE,
				       "the database has no outbox table of this layout "
				       "(statement %d): %s",
				       i, sqlite3_errmsg(o->db));
	return 0;
}

int dc_outbox_sqlite_attach(struct dc_outbox **out, sqlite3 *db)
{
	*out = NULL;
	struct sq_outbox *o = calloc(1, sizeof(*o));
	if (!o)
		return err_set(ERR_NOMEM, "out of memory");
	*o = (struct sq_outbox){ .base = { .ops = &attached_ops }, .db = db };
	int rc = prepare_all(o);
	if (rc) {
		err_prefix("outbox: ");
		attached_destroy(&o->base);
		return rc;
	}
	*out = &o->base;
	return 0;
}

/* Constant text, no parameters. */
static int exec(sqlite3 *db, const char *path, const char *text)
{
	if (sqlite3_exec(db, text, NULL, NULL, NULL) != SQLITE_OK)
		return err_set(ERR_IO, "outbox %s: %s", path, sqlite3_errmsg(db));
	return 0;
}

static int layout_version(sqlite3 *db, const char *path, int *version)
{
	sqlite3_stmt *s = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW) {
		rc =
		    err_set(ERR_IO, "outbox %s: reading its version: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	*version = sqlite3_column_int(s, 0);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Brings the file's layout up to date in one transaction; a newer one is left untouched. */
static int layout_migrate(sqlite3 *db, const char *path)
{
	int have = 0;
	int rc = exec(db, path, "BEGIN IMMEDIATE");
	if (rc)
		return rc;
	rc = layout_version(db, path, &have);
	if (rc)
		goto out;
	if (have > OUTBOX_LAYOUT) {
		rc = err_set(ERR_BADSTATE,
			     "outbox %s: layout version %d is newer than this program's %d: "
			     "refusing to touch it",
			     path, have, OUTBOX_LAYOUT);
		goto out;
	}
	for (int v = have + 1; rc == 0 && v <= OUTBOX_LAYOUT; v++)
		rc = exec(db, path, layout[v - 1]);
	if (rc == 0)
		rc = exec(db, path, "COMMIT");
out:
	if (rc && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int dc_outbox_sqlite_open(struct dc_outbox **out, const char *path)
{
	*out = NULL;
	struct file_outbox *f = calloc(1, sizeof(*f));
	if (!f)
		return err_set(ERR_NOMEM, "out of memory");
	f->ob.base.ops = &file_ops;
	int rc = 0;
	if (sqlite3_open_v2(path, &f->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		rc = err_set(ERR_IO, "outbox %s: %s", path,
			     f->conn ? sqlite3_errmsg(f->conn) : "cannot open");
		goto out;
	}
	f->ob.db = f->conn;
	sqlite3_busy_timeout(f->conn, 5000);
	/* synchronous first: the migration's commit is durable too; WAL once the layout is
	 * known, so that a newer file is not changed at all */
	if ((rc = exec(f->conn, path, "PRAGMA synchronous = FULL")) ||
	    (rc = layout_migrate(f->conn, path)) ||
	    (rc = exec(f->conn, path, "PRAGMA journal_mode = WAL")))
		goto out;
	if ((rc = prepare_all(&f->ob)))
		err_prefix("outbox %s: ", path);
out:
	if (rc) {
		file_destroy(&f->ob.base);
		return rc;
	}
	*out = &f->ob.base;
	return 0;
}
