/* outbox.h's contract as a table of test cases, run against the SQLite outbox in each of the
 * ways it is used: on a file of its own (outbox.c, crash.c here) and attached to the daemon's
 * store connection (tests/unit/relay/store_outbox.c). The crash cases (crash_cases.c) also
 * need the recorder, drain_check.c and helpers.c. */
#ifndef TESTS_UNIT_DASHBOARD_CLIENT_OUTBOX_CASES_H
#define TESTS_UNIT_DASHBOARD_CLIENT_OUTBOX_CASES_H

#include <stdbool.h>

#include "dashboard-client/outbox.h"

struct outbox_impl {
	const char *name;
	const char *file; /* the database file it keeps in its directory (removed after a case) */
	/* Opens (creating when needed) the outbox kept in directory `dir`; opening it again
	 * after a close finds what was there. */
	int (*open)(struct dc_outbox **out, const char *dir);
	/* Lets go of what open made: the outbox, and the connection's owner when it is not the
	 * outbox itself. */
	void (*close)(struct dc_outbox *ob);
};

/* dashboard-client's SQLite outbox, file outbox.sqlite (outbox.c). */
extern const struct outbox_impl outbox_sqlite_impl;

void outbox_case_order(const struct outbox_impl *impl, const char *dir);
void outbox_case_dead(const struct outbox_impl *impl, const char *dir);
void outbox_case_reopen(const struct outbox_impl *impl, const char *dir);
void outbox_case_late(const struct outbox_impl *impl, const char *dir);

/* The table: one Criterion test per case, in `suite`, on `impl` and the directory `dir` that
 * the suite's init made. */
#define OUTBOX_CONTRACT_TESTS(suite, impl, dir)                                                    \
	Test(suite, enqueue_is_idempotent_and_order_holds)                                         \
	{                                                                                          \
		outbox_case_order(impl, dir);                                                      \
	}                                                                                          \
	Test(suite, dead_letter_takes_the_job_and_requeue)                                         \
	{                                                                                          \
		outbox_case_dead(impl, dir);                                                       \
	}                                                                                          \
	Test(suite, survives_reopen_and_other_targets_are_apart)                                   \
	{                                                                                          \
		outbox_case_reopen(impl, dir);                                                     \
	}                                                                                          \
	Test(suite, attempt_survives_a_crash_and_late_messages_of_a_dead_job_die)                  \
	{                                                                                          \
		outbox_case_late(impl, dir);                                                       \
	}

/* Process death between two durable steps: a forked child enqueues three jobs and drains them
 * to a recorder, and dies (_exit, or SIGKILL with `kill9`) right after the nth enqueue, claim,
 * post or settle; a second life enqueues everything again and drains, and the recorder must
 * hold every message exactly once by key, in_progress before completed for every job. */
enum outbox_crash_point { AT_ENQUEUE, AT_CLAIM, AT_POST, AT_SETTLE };
void outbox_case_crash(const struct outbox_impl *impl, enum outbox_crash_point point, int nth,
		       bool kill9);
void outbox_case_crash_enqueue(const struct outbox_impl *impl);
void outbox_case_crash_claim_post_settle(const struct outbox_impl *impl);

#define OUTBOX_CRASH_TESTS(suite, impl)                                                            \
	Test(suite, between_enqueues)                                                              \
	{                                                                                          \
		outbox_case_crash_enqueue(impl);                                                   \
	}                                                                                          \
	Test(suite, between_claim_post_settle, .timeout = 120)                                     \
	{                                                                                          \
		outbox_case_crash_claim_post_settle(impl);                                         \
	}

#endif
