/* The SQLite outbox attached to the daemon's store connection (store_ops.outbox_open) against
 * the same contract and crash cases as on a file of its own; the store's view of the same
 * table (depth, the layout its migrations made); and a state directory an older daemon left,
 * drained. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "dashboard-client/outbox_sqlite.h"
#include "old_outbox.h"
#include "outbox_cases.h"
#include "store.h"
#include "tmpstate.h"

static char dir[256];

/* The store whose connection the open outbox rides on: the cases hold one at a time. */
static struct store *held;

static int open_attached(struct dc_outbox **out, const char *d)
{
	struct store *s = NULL;
	int rc = store_sqlite_open(&s, d);
	if (rc == 0)
		rc = s->ops->outbox_open(s, out);
	if (rc) {
		store_close(s);
		return rc;
	}
	held = s;
	return 0;
}

/* The outbox first: its statements are on the store's connection. */
static void close_attached(struct dc_outbox *ob)
{
	dc_outbox_destroy(ob);
	store_close(held);
	held = NULL;
}

static const struct outbox_impl store_impl = { "store", "spyre-ci.db", open_attached,
					       close_attached };

static void setup(void)
{
	tmpstate_make(dir, sizeof(dir), "store-outbox");
}

static void teardown(void)
{
	tmpstate_remove(dir);
}

TestSuite(store_outbox, .init = setup, .fini = teardown);

OUTBOX_CONTRACT_TESTS(store_outbox, &store_impl, dir)
OUTBOX_CRASH_TESTS(store_outbox_crash, &store_impl)

/* The store's own reads of the table see what the outbox wrote, and its handle outlives the
 * outbox it handed out. */
Test(store_outbox, depth_counts_what_the_outbox_holds)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct dc_outbox *ob;
	cr_assert_eq(s->ops->outbox_open(s, &ob), 0, "%s", err_last());
	struct dc_message m = { .key = "sci1-a", .job_key = "sci1-j", .body = "{}", .body_len = 2 };
	bool added = false;
	cr_assert_eq(ob->ops->enqueue(ob, "crcr", &m, &added), 0, "%s", err_last());
	cr_assert(added);
	cr_assert_eq(ob->ops->enqueue(ob, "crcr", &m, &added), 0, "%s", err_last());
	cr_assert_not(added);
	dc_outbox_destroy(ob);
	int64_t depth = 0;
	cr_assert_eq(s->ops->outbox_depth(s, &depth), 0, "%s", err_last());
	cr_assert_eq(depth, 1);
	cr_assert_eq(s->ops->ping(s), 0, "%s", err_last());
	store_close(s);
}

struct column {
	char name[32], type[16];
	int notnull, pk;
};

/* The table's columns as PRAGMA table_info gives them (defaults aside: the code binds every
 * value it writes). */
static size_t columns(struct column *out, size_t max, const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	size_t n = 0;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA table_info(outbox)", -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW && n < max) {
		snprintf(out[n].name, sizeof(out[n].name), "%s", sqlite3_column_text(s, 1));
		snprintf(out[n].type, sizeof(out[n].type), "%s", sqlite3_column_text(s, 2));
		out[n].notnull = sqlite3_column_int(s, 3);
		out[n].pk = sqlite3_column_int(s, 5);
		n++;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	return n;
}

/* The store's migrations and the outbox's own file make one table: a layout step on one side
 * without its twin on the other fails here. */
Test(store_outbox, the_store_and_an_own_file_have_one_layout)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	store_close(s);
	char path[300];
	snprintf(path, sizeof(path), "%s/own.sqlite", dir);
	struct dc_outbox *ob;
	cr_assert_eq(dc_outbox_sqlite_open(&ob, path), 0, "%s", err_last());
	dc_outbox_destroy(ob);
	struct column own[32], store[32];
	size_t n = columns(own, 32, path);
	snprintf(path, sizeof(path), "%s/spyre-ci.db", dir);
	cr_assert_eq(columns(store, 32, path), n);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		cr_assert_str_eq(store[i].name, own[i].name);
		cr_assert_str_eq(store[i].type, own[i].type, "%s", own[i].name);
		cr_assert_eq(store[i].notnull, own[i].notnull, "%s", own[i].name);
		cr_assert_eq(store[i].pk, own[i].pk, "%s", own[i].name);
	}
}

static int64_t schema_version(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT value FROM schema_meta WHERE name = 'version'",
					-1, &s, NULL),
		     SQLITE_OK);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* A state directory of the daemon before there was one outbox (schema version 5; a second
 * target's rows written by dashboard-client's outbox on the store's file, as an older daemon
 * did): each target drains, every pending message once, and retention still sees the rows. */
Test(store_outbox, an_older_daemons_outbox_drains)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/spyre-ci.db", dir);
	old_outbox_load(path, "store-v5.sql");
	struct old_rows crcr, hud;
	old_outbox_read(&crcr, path, "crcr");
	old_outbox_read(&hud, path, "hud");

	struct dc_outbox *ob;
	cr_assert_eq(open_attached(&ob, dir), 0, "%s", err_last());
	old_outbox_drain_check(ob, "crcr", DC_FORMAT_CRCR, &crcr, 5, 3);
	old_outbox_drain_check(ob, "hud", DC_FORMAT_HUD, &hud, 2, 0);
	close_attached(ob);
	cr_assert_eq(schema_version(path), 5, "the store's schema is as it was");

	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct retention_stats st;
	cr_assert_eq(s->ops->retention(s, 1, &st), 0, "%s", err_last());
	cr_assert_eq(st.outbox, 0, "every row has its time");
	cr_assert_eq(s->ops->retention(s, INT64_MAX, &st), 0, "%s", err_last());
	cr_assert_eq(st.outbox, 10, "all delivered or dead now");
	store_close(s);
	old_rows_finish(&crcr);
	old_rows_finish(&hud);
}
