/* The SQLite outbox against outbox.h's contract (outbox_cases.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "dashboard-client/outbox.h"
#include "outbox_cases.h"

static char dir[] = "/tmp/dc-outbox-XXXXXX";

static int open_sqlite(struct dc_outbox **out, const char *d)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/outbox.sqlite", d);
	return dc_outbox_sqlite_open(out, path);
}

const struct outbox_impl outbox_sqlite_impl = { "sqlite", "outbox.sqlite", open_sqlite };

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char p[300];
	const char *sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/outbox.sqlite%s", dir, sfx[i]);
		unlink(p);
	}
	rmdir(dir);
}

TestSuite(outbox, .init = setup, .fini = teardown);

OUTBOX_CONTRACT_TESTS(outbox, &outbox_sqlite_impl, dir)
