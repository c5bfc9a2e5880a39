/* The dashboard's store calls (store_dash.h) on SQLite. These statements run a few times a page
 * view, so they are prepared per call rather than kept on the handle; every value is bound. */
#include "store_dash.h"

#include <string.h>

#include "common/err.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "store_sqlite.h"

static struct store_sqlite *sq(struct store *s)
{
	return (struct store_sqlite *)s;
}

static sqlite3_stmt *prep(struct store_sqlite *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		store__fail(s, "prepare");
		return NULL;
	}
	return st;
}

static void bind_opt(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static int seen(struct store_sqlite *s, bool *out, const struct hud_record *r)
{
	sqlite3_stmt *st = prep(s, "SELECT COUNT(*) FROM hud_messages WHERE idem_key = ?1 OR "
				   "(record_key = ?2 AND status = ?3)");
	if (!st)
		return ERR_IO;
	bind_opt(st, 1, r->idem_key);
	bind_opt(st, 2, r->record_key);
	bind_opt(st, 3, r->status);
	int rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store__fail(s, "hud lookup");
}

static int insert(struct store_sqlite *s, const struct hud_record *r, int64_t now)
{
	sqlite3_stmt *st = prep(
	    s, "INSERT INTO hud_messages (idem_key, record_key, status, conclusion, delivery_id, "
	       "run_id, job_name, workflow, head_sha, passed, failed, skipped, queue_time, "
	       "execution_time, failed_tests, received_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
	       "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
	if (!st)
		return ERR_IO;
	const char *text[] = { r->idem_key,   r->record_key,  r->status,
			       r->conclusion, r->delivery_id, r->run_id,
			       r->job_name,   r->workflow,    r->head_sha };
	for (int i = 0; i < 9; i++)
		bind_opt(st, i + 1, text[i]);
	sqlite3_bind_int64(st, 10, r->passed);
	sqlite3_bind_int64(st, 11, r->failed);
	sqlite3_bind_int64(st, 12, r->skipped);
	if (r->has_queue_time)
		sqlite3_bind_double(st, 13, r->queue_time);
	if (r->has_execution_time)
		sqlite3_bind_double(st, 14, r->execution_time);
	bind_opt(st, 15, r->failed_tests);
	sqlite3_bind_int64(st, 16, now);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store__fail(s, "hud insert");
}

static int sq_hud_put(struct store *base, bool *duplicate, const struct hud_record *r, int64_t now)
{
	struct store_sqlite *s = sq(base);
	*duplicate = false;
	int rc = store__begin(s);
	if (rc == 0)
		rc = seen(s, duplicate, r);
	if (rc == 0 && !*duplicate)
		rc = insert(s, r, now);
	if (rc == 0)
		rc = store__commit(s);
	return store__rollback(s, rc);
}

/* A column as JSON: NULL, integer, real or text (text that holds JSON is parsed when asked). */
static json_t *col(sqlite3_stmt *st, int i, bool parse)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_TEXT: {
		const char *t = (const char *)sqlite3_column_text(st, i);
		size_t n = (size_t)sqlite3_column_bytes(st, i);
		json_t *v =
		    parse && n && (t[0] == '[' || t[0] == '{') ? jx_loadb(t, n, n + 1) : NULL;
		return v ? v : json_stringn(t, n);
	}
	default:
		return json_null();
	}
}

/* Runs `st` (bound) and appends one object a row, keyed by `names`; `parse` marks the columns
 * whose text is JSON. */
static int rows_json(struct store_sqlite *s, json_t **out, sqlite3_stmt *st,
		     const char *const *names, int n, unsigned parse)
{
	json_t *a = json_array();
	int rc;
	while (a && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();
		for (int i = 0; i < n; i++)
			jx_set_new(o, names[i], col(st, i, parse & (1u << i)));
		jx_append_new(a, o);
	}
	sqlite3_finalize(st);
	if (!a)
		return err_set(ERR_NOMEM, "out of memory");
	if (rc != SQLITE_DONE) {
		json_decref(a);
		return store__fail(s, "dashboard read");
	}
	*out = a;
	return 0;
}

static int sq_hud_json(struct store *base, json_t **out, const char *head_sha, size_t max)
{
	static const char *const names[] = { "id",           "key",        "record",
					     "status",       "conclusion", "delivery_id",
					     "run_id",       "job_name",   "workflow",
					     "head_sha",     "passed",     "failed",
					     "skipped",      "queue_time", "execution_time",
					     "failed_tests", "received_ms" };
	struct store_sqlite *s = sq(base);
	*out = NULL;
	sqlite3_stmt *st =
	    prep(s, "SELECT id, idem_key, record_key, status, conclusion, "
		    "delivery_id, run_id, job_name, workflow, head_sha, passed, "
		    "failed, skipped, queue_time, execution_time, failed_tests, "
		    "received_ms FROM hud_messages WHERE ?1 IS NULL OR head_sha = ?1 "
		    "ORDER BY id DESC LIMIT ?2");
	if (!st)
		return ERR_IO;
	bind_opt(st, 1, head_sha);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	return rows_json(s, out, st, names, 17, 1u << 15);
}

static int sq_results_json(struct store *base, json_t **out, int64_t job_id, size_t max)
{
	static const char *const names[] = { "case", "outcome", "detail" };
	struct store_sqlite *s = sq(base);
	*out = NULL;
	sqlite3_stmt *st = prep(s, "SELECT case_id, outcome, detail FROM results WHERE job_id = ?1 "
				   "ORDER BY case_id LIMIT ?2");
	if (!st)
		return ERR_IO;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	return rows_json(s, out, st, names, 3, 1u << 2);
}

static int sq_outbox_json(struct store *base, json_t **out, const char *const job_keys[2],
			  size_t max)
{
	static const char *const names[] = { "id",  "target",      "state",     "attempts",
					     "key", "last_status", "last_error" };
	struct store_sqlite *s = sq(base);
	*out = NULL;
	sqlite3_stmt *st =
	    prep(s, "SELECT id, target, state, attempts, key, last_status, last_error"
		    " FROM outbox WHERE job_key IN (?1, ?2) ORDER BY id LIMIT ?3");
	if (!st)
		return ERR_IO;
	bind_opt(st, 1, job_keys[0]);
	bind_opt(st, 2, job_keys[1]);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	return rows_json(s, out, st, names, 7, 0);
}

const struct store_dash_ops store__sqlite_dash_ops = {
	.hud_put = sq_hud_put,
	.hud_json = sq_hud_json,
	.results_json = sq_results_json,
	.outbox_json = sq_outbox_json,
};
