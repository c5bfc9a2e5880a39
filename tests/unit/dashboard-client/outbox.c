/* The SQLite outbox on a file of its own against outbox.h's contract (outbox_cases.c), and what
 * belongs to that file alone: its layout's version (an older file migrated in place and then
 * drained, a newer one refused untouched) and attaching to a connection someone else owns. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "dashboard-client/outbox_sqlite.h"
#include "old_outbox.h"
#include "outbox_cases.h"

static char dir[] = "/tmp/dc-outbox-XXXXXX";

static int open_sqlite(struct dc_outbox **out, const char *d)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/outbox.sqlite", d);
	return dc_outbox_sqlite_open(out, path);
}

const struct outbox_impl outbox_sqlite_impl = { "sqlite", "outbox.sqlite", open_sqlite,
						dc_outbox_destroy };

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char p[300];
	const char *sfx[] = { "", "-wal", "-shm", "-journal" };
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/outbox.sqlite%s", dir, sfx[i]);
		unlink(p);
	}
	rmdir(dir);
}

TestSuite(outbox, .init = setup, .fini = teardown);

OUTBOX_CONTRACT_TESTS(outbox, &outbox_sqlite_impl, dir)

/* One integer a query returns, read with plain SQL. */
static int64_t sql_int(const char *path, const char *query)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, query, -1, &s, NULL), SQLITE_OK, "%s: %s", query,
		     sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW, "%s", query);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* What `spyre-ci report` wrote before the outbox kept created_ms (layout 1): migrated when
 * opened, then every pending message sent once, the delivered and dead ones never. */
Test(outbox, an_older_file_is_migrated_and_drains)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/outbox.sqlite", dir);
	old_outbox_load(path, "client-v1.sql");
	cr_assert_eq(sql_int(path, "PRAGMA user_version"), 1);
	const char *target = "https://crcr.example.invalid/github/callback";
	struct old_rows rows;
	old_outbox_read(&rows, path, target);

	struct dc_outbox *ob;
	cr_assert_eq(dc_outbox_sqlite_open(&ob, path), 0, "%s", err_last());
	cr_assert_eq(sql_int(path, "PRAGMA user_version"), 2);
	cr_assert_eq(sql_int(path, "SELECT COUNT(*) FROM outbox WHERE created_ms = 0"), 8,
		     "the messages from before have no time");
	old_outbox_drain_check(ob, target, DC_FORMAT_CRCR, &rows, 5, 3);
	dc_outbox_destroy(ob);
	old_rows_finish(&rows);
}

/* A file from a later spyre-ci: the error says so, and the file is as it was. */
Test(outbox, a_newer_file_is_refused_untouched)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/outbox.sqlite", dir);
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 3", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	struct dc_outbox *ob = (struct dc_outbox *)1;
	cr_assert_eq(dc_outbox_sqlite_open(&ob, path), ERR_BADSTATE);
	cr_assert_null(ob);
	cr_assert_not_null(strstr(err_last(), "newer"), "%s", err_last());
	cr_assert_eq(sql_int(path, "PRAGMA user_version"), 3);
	cr_assert_eq(sql_int(path, "SELECT COUNT(*) FROM sqlite_master"), 0);
}

/* Attached to a connection the caller owns: the same messages, and the connection is still the
 * caller's after the outbox is destroyed. */
Test(outbox, attached_it_borrows_the_connection)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/outbox.sqlite", dir);
	struct dc_outbox *ob;
	cr_assert_eq(dc_outbox_sqlite_open(&ob, path), 0, "%s", err_last());
	struct dc_message m = { .key = "sci1-a", .job_key = "sci1-j", .body = "{}", .body_len = 2 };
	bool added = false;
	cr_assert_eq(ob->ops->enqueue(ob, "t", &m, &added), 0, "%s", err_last());
	dc_outbox_destroy(ob);

	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(dc_outbox_sqlite_attach(&ob, db), 0, "%s", err_last());
	struct dc_outbox_counts c;
	cr_assert_eq(ob->ops->counts(ob, "t", &c), 0, "%s", err_last());
	cr_assert_eq(c.pending, 1);
	dc_outbox_destroy(ob);
	cr_assert_eq(sqlite3_exec(db, "SELECT 1", NULL, NULL, NULL), SQLITE_OK,
		     "the connection is open");
	cr_assert_eq(sqlite3_close(db), SQLITE_OK, "no statement of the outbox is left on it");
}

/* A database without the table: attaching never makes one (the schema is the owner's). */
Test(outbox, attached_it_needs_the_owners_table)
{
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	struct dc_outbox *ob = (struct dc_outbox *)1;
	cr_assert_eq(dc_outbox_sqlite_attach(&ob, db), ERR_BADSTATE);
	cr_assert_null(ob);
	cr_assert_not_null(strstr(err_last(), "no outbox table"), "%s", err_last());
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}
