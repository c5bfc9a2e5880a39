/* outbox.h's contract as a table of test cases, run against every outbox implementation: the
 * SQLite one here (outbox.c) and the daemon's store-backed one (tests/unit/relay/). */
#ifndef TESTS_UNIT_DASHBOARD_CLIENT_OUTBOX_CASES_H
#define TESTS_UNIT_DASHBOARD_CLIENT_OUTBOX_CASES_H

#include "dashboard-client/outbox.h"

struct outbox_impl {
	const char *name;
	/* Opens (creating when needed) the outbox kept in directory `dir`; opening it again
	 * after a destroy finds what was there. */
	int (*open)(struct dc_outbox **out, const char *dir);
};

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

#endif
