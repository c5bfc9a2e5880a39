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

static const struct outbox_impl store_impl = { "store", "spyre-ci.db", open_store,
					       dc_outbox_destroy };

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
