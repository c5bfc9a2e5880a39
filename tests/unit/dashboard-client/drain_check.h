/* Checks shared by the sender's tests (drain.c, crash.c): jobs enqueued, the recorder holding
 * each message exactly once and in order per job, the dead letters saying why. */
#ifndef TESTS_UNIT_DASHBOARD_CLIENT_DRAIN_CHECK_H
#define TESTS_UNIT_DASHBOARD_CLIENT_DRAIN_CHECK_H

#include <stddef.h>

#include "dashboard-client/encode.h"
#include "dashboard-client/outbox.h"
#include "recorder.h"

/* Enqueues jobs 0..n-1 (job_text) for `target`; returns 0 or aborts the test. */
void check_enqueue_jobs(struct dc_outbox *ob, const char *target, int n, enum dc_format f);
/* The same without Criterion (for a forked child): 0 or -1. */
int check_enqueue_jobs_quiet(struct dc_outbox *ob, const char *target, int n, enum dc_format f,
			     void (*after_each)(void *ctx), void *ctx);

/* Every accepted request's key accepted once, each (job, status) once, in_progress before
 * completed for every job, and `expected` messages in all. */
void check_exactly_once_in_order(struct recorder *rec, struct dc_outbox *ob, const char *target,
				 size_t expected);
/* Every dead letter has this status and `needle` in its error or body. */
void check_dead_letters(struct dc_outbox *ob, const char *target, long status, const char *needle);
/* Removes DIR/outbox.sqlite (with -wal and -shm) and DIR. */
void check_remove_outbox(const char *dir);

#endif
