/* Outbox files written by an older spyre-ci (tests/fixtures/outbox/, SQL text made with that
 * version's code): loading one into a new database file, reading what it holds with plain SQL
 * (not through an outbox, so the expectation does not come from the code under test), and
 * draining it to the recorder. Used here for dashboard-client's own files and in
 * tests/unit/relay/ for the daemon's store. */
#ifndef TESTS_UNIT_DASHBOARD_CLIENT_OLD_OUTBOX_H
#define TESTS_UNIT_DASHBOARD_CLIENT_OLD_OUTBOX_H

#include <stddef.h>

#include "dashboard-client/encode.h"
#include "dashboard-client/outbox.h"

struct old_row {
	char key[48], job_key[48], state[16];
	int seq;
	char *body;
	size_t body_len;
};

struct old_rows {
	struct old_row *v;
	size_t n;
};

/* Runs the SQL text tests/fixtures/outbox/<name> on a new database file at `path`. */
void old_outbox_load(const char *path, const char *name);

/* The rows of `target` in the database at `path`, in id order. */
void old_outbox_read(struct old_rows *out, const char *path, const char *target);
void old_rows_finish(struct old_rows *r);

/* Drains `target` of `ob` to a recorder of its own and checks that every row pending in
 * `rows` arrived exactly once, with its key and body, a job's messages in order; that no
 * delivered or dead row was sent again; and that nothing is pending after. `pending` and
 * `done` are how many rows of each kind the fixture is known to hold. */
void old_outbox_drain_check(struct dc_outbox *ob, const char *target, enum dc_format f,
			    const struct old_rows *rows, size_t pending, size_t done);

#endif
