/* See old_outbox.h. */
#include "old_outbox.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "dashboard-client/drain.h"
#include "dashboard-client/transport.h"
#include "helpers.h"
#include "recorder.h"

void old_outbox_load(const char *path, const char *name)
{
	char fixture[1024];
	snprintf(fixture, sizeof(fixture), "%s/%s", OUTBOX_FIXTURES, name);
	size_t len = 0;
	char *text = slurp(fixture, &len);
	cr_assert_neq(access(path, F_OK), 0, "%s exists already", path);
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
		     SQLITE_OK);
	/* The fixture's own text, trusted: a dump is statements with their values in them. */
	char *msg = NULL;
	int rc = sqlite3_exec(db, text, NULL, NULL, &msg);
	cr_assert_eq(rc, SQLITE_OK, "%s: %s", name, msg ? msg : "?");
	sqlite3_close(db);
	free(text);
}

void old_outbox_read(struct old_rows *out, const char *path, const char *target)
{
	memset(out, 0, sizeof(*out));
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db,
					"SELECT key, job_key, seq, state, body FROM outbox"
					" WHERE target = ?1 ORDER BY id",
					-1, &s, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, target, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW) {
		out->v = realloc(out->v, (out->n + 1) * sizeof(*out->v));
		cr_assert_not_null(out->v);
		struct old_row *r = &out->v[out->n++];
		snprintf(r->key, sizeof(r->key), "%s", (const char *)sqlite3_column_text(s, 0));
		snprintf(r->job_key, sizeof(r->job_key), "%s",
			 (const char *)sqlite3_column_text(s, 1));
		r->seq = sqlite3_column_int(s, 2);
		snprintf(r->state, sizeof(r->state), "%s", (const char *)sqlite3_column_text(s, 3));
		r->body_len = (size_t)sqlite3_column_bytes(s, 4);
		r->body = malloc(r->body_len + 1);
		cr_assert_not_null(r->body);
		memcpy(r->body, sqlite3_column_blob(s, 4), r->body_len);
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
}

void old_rows_finish(struct old_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].body);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* The index of the request that delivered `key`; -1 when none did. */
static int delivered_at(struct recorder *rec, const char *key)
{
	for (size_t i = 0; i < recorder_count(rec); i++) {
		struct rec_request q = recorder_get(rec, i);
		if (q.accepted && strcmp(q.idem, key) == 0)
			return (int)i;
	}
	return -1;
}

static void check_row(struct recorder *rec, const struct old_row *r, int *at)
{
	*at = delivered_at(rec, r->key);
	if (strcmp(r->state, "pending") != 0) {
		for (size_t i = 0; i < recorder_count(rec); i++)
			cr_assert_str_neq(recorder_get(rec, i).idem, r->key,
					  "%s was %s: sent again", r->key, r->state);
		return;
	}
	cr_assert_eq(recorder_accepted(rec, r->key), 1, "%s: accepted %d times", r->key,
		     recorder_accepted(rec, r->key));
	struct rec_request q = recorder_get(rec, (size_t)*at);
	cr_assert(q.body_len == r->body_len && memcmp(q.body, r->body, r->body_len) == 0,
		  "%s: the body sent is not the one queued", r->key);
}

void old_outbox_drain_check(struct dc_outbox *ob, const char *target, enum dc_format f,
			    const struct old_rows *rows, size_t pending, size_t done)
{
	size_t have_pending = 0;
	for (size_t i = 0; i < rows->n; i++)
		have_pending += strcmp(rows->v[i].state, "pending") == 0;
	cr_assert_eq(have_pending, pending, "the fixture's pending rows");
	cr_assert_eq(rows->n - have_pending, done, "the fixture's delivered and dead rows");

	struct recorder *rec = recorder_start();
	cr_assert_not_null(rec);
	char url[256];
	recorder_url(rec, f == DC_FORMAT_HUD ? "/api/crcr/results" : "/github/callback", url,
		     sizeof(url));
	struct dc_target_opts to = { .url = url,
				     .format = f,
				     .token = "tok-old",
				     .user_agent = "spyre-ci/test",
				     .connect_timeout_ms = 2000,
				     .timeout_ms = 5000 };
	struct dc_transport *t = NULL;
	cr_assert_eq(dc_transport_create(&t, &to), 0, "%s", err_last());
	struct fake_clock fc = { 0 };
	struct dc_drain_opts o = {
		.policy = { .base_ms = 10, .max_ms = 100, .horizon_ms = 60000 },
		.clock = fake_clock(&fc),
		.batch = 2,
	};
	struct dc_drain_stats st = { 0 };
	cr_assert_eq(dc_drain(ob, t, target, &o, &st), 0, "%s", err_last());

	int *at = calloc(rows->n + 1, sizeof(*at));
	cr_assert_not_null(at);
	for (size_t i = 0; i < rows->n; i++)
		check_row(rec, &rows->v[i], &at[i]);
	for (size_t i = 0; i < rows->n; i++)
		for (size_t j = 0; j < rows->n; j++)
			if (at[i] >= 0 && at[j] >= 0 &&
			    strcmp(rows->v[i].job_key, rows->v[j].job_key) == 0 &&
			    rows->v[i].seq < rows->v[j].seq)
				cr_assert_lt(at[i], at[j], "%s sent before %s of its job",
					     rows->v[j].key, rows->v[i].key);
	cr_assert_eq(recorder_count(rec), pending, "requests: %zu, pending rows: %zu",
		     recorder_count(rec), pending);
	struct dc_outbox_counts c;
	cr_assert_eq(ob->ops->counts(ob, target, &c), 0, "%s", err_last());
	cr_assert_eq(c.pending, 0);
	cr_assert_eq(c.delivered + c.dead, rows->n);
	free(at);
	dc_transport_destroy(t);
	recorder_stop(rec);
}
