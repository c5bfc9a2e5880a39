/* The daemon's store-backed outbox (outbox_store.c over store_sqlite_outbox.c) against the
 * same contract and crash cases as dashboard-client's SQLite outbox. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "common/err.h"
#include "outbox_cases.h"
#include "outbox_store.h"
#include "store.h"
#include "tmpstate.h"

static char dir[256];

static int open_store(struct dc_outbox **out, const char *d)
{
	struct store *s;
	int rc = store_sqlite_open(&s, d);
	return rc ? rc : outbox_store_open(out, s, true);
}

static const struct outbox_impl store_impl = { "store", "spyre-ci.db", open_store };

static void setup(void)
{
	tmpstate_make(dir, sizeof(dir), "outbox-store");
}

static void teardown(void)
{
	tmpstate_remove(dir);
}

TestSuite(outbox_store, .init = setup, .fini = teardown);

OUTBOX_CONTRACT_TESTS(outbox_store, &store_impl, dir)
OUTBOX_CRASH_TESTS(outbox_store_crash, &store_impl)

/* The store's own view of the same table: the depth it reports is the outbox's pending. */
Test(outbox_store, depth_counts_what_the_outbox_holds)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct dc_message m = { .key = "sci1-a", .job_key = "sci1-j", .body = "{}", .body_len = 2 };
	size_t added = 0;
	cr_assert_eq(s->ops->outbox_enqueue(s, "crcr", &m, 1, &added, 5), 0, "%s", err_last());
	cr_assert_eq(added, 1);
	cr_assert_eq(s->ops->outbox_enqueue(s, "crcr", &m, 1, &added, 6), 0, "%s", err_last());
	cr_assert_eq(added, 0);
	int64_t depth = 0;
	cr_assert_eq(s->ops->outbox_depth(s, &depth), 0);
	cr_assert_eq(depth, 1);
	store_close(s);
}

/* A state directory of an older daemon, which ran dashboard-client's SQLite outbox on the
 * store's own file: its messages (created_ms from the column's default, user_version set by
 * that outbox) are claimed, in order, and settled through the store, and retention sees them. */
Test(outbox_store, reads_what_the_older_daemon_wrote)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	store_close(s);
	char path[300];
	snprintf(path, sizeof(path), "%s/spyre-ci.db", dir);
	struct dc_outbox *old;
	cr_assert_eq(dc_outbox_sqlite_open(&old, path), 0, "%s", err_last());
	struct dc_message m[2] = {
		{ .key = "sci1-ip",
		  .job_key = "sci1-j",
		  .seq = 0,
		  .body = "{\"a\":1}",
		  .body_len = 7 },
		{ .key = "sci1-done", .job_key = "sci1-j", .seq = 1, .body = "{}", .body_len = 2 },
	};
	size_t added = 0;
	cr_assert_eq(old->ops->enqueue_many(old, "crcr", m, 2, &added), 0, "%s", err_last());
	cr_assert_eq(added, 2);
	dc_outbox_destroy(old);

	struct dc_outbox *ob;
	cr_assert_eq(open_store(&ob, dir), 0, "%s", err_last());
	struct dc_message got[2];
	size_t n = 0;
	cr_assert_eq(ob->ops->claim(ob, "crcr", 10, 2, got, &n), 0, "%s", err_last());
	cr_assert_eq(n, 1, "the in_progress first");
	cr_assert_str_eq(got[0].key, "sci1-ip");
	cr_assert_str_eq(got[0].body, "{\"a\":1}");
	struct dc_settlement x = { .key = "sci1-ip", .kind = DC_SETTLE_DELIVERED, .status = 200 };
	cr_assert_eq(ob->ops->settle(ob, "crcr", &x, 1), 0, "%s", err_last());
	dc_message_finish(&got[0]);
	cr_assert_eq(ob->ops->claim(ob, "crcr", 10, 2, got, &n), 0, "%s", err_last());
	cr_assert_eq(n, 1);
	cr_assert_str_eq(got[0].key, "sci1-done");
	dc_message_finish(&got[0]);
	dc_outbox_destroy(ob);

	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct retention_stats st;
	cr_assert_eq(s->ops->retention(s, INT64_MAX, &st), 0, "%s", err_last());
	cr_assert_eq(st.outbox, 1, "the delivered one, made at its default time, is old");
	store_close(s);
}
