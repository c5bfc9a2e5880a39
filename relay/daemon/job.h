/* A job as one worker holds it (worker.c): its row as claimed, the configuration it runs under,
 * the worker's store handle and outbox it writes through, and its reports directory,
 * state_dir/reports/ID, named once from its id. The directory holds job.json (the job's identity
 * for the dashboard; `spyre-ci report` reads the same directory), junit.xml, results.jsonl and
 * summary.json.
 *
 * The dashboard hears of a job twice: `in_progress` when it starts running (job_announce) and
 * `completed` when it ends, with its counts (job_complete) or, when it failed after it was
 * announced, with the conclusion "failure" and no results (job_fail). A job is announced exactly
 * when its job.json exists, so a later attempt, or the worker that gives a crashed job up,
 * knows it without asking anyone. Every message's idempotency key comes from the job's identity
 * alone, so an attempt after a crash queues the same keys: the outbox keeps the first, and a
 * receiver sees each message once.
 *
 * How an attempt that did not finish ends is decided by job_end_of() (a pure function, unit
 * tested) and carried out by job_settle(). Every write of the job checks the lease in the same
 * transaction (ERR_BADSTATE when another worker holds the job now). */
#ifndef RELAY_DAEMON_JOB_H
#define RELAY_DAEMON_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "common/limits.h"
#include "config.h"
#include "dashboard-client/outbox.h"
#include "funnel/funnel.h"
#include "store.h"

/* The outbox targets: the names under which messages are queued. */
#define OUTBOX_TARGET_CRCR "crcr"
#define OUTBOX_TARGET_HUD  "hud"

struct job {
	struct job_row row;
	const struct config *c; /* borrowed: the snapshot the worker holds for the job */
	struct store *s;        /* borrowed: the worker's handle */
	struct dc_outbox *ob;   /* borrowed: the worker's outbox, on `s` */
	const char *owner;      /* borrowed: the lease owner's name */
	struct metrics *m;      /* borrowed: counts outcomes and ends; NULL: none */
	char dir[PATH_TEXT_MAX - 64];
};

struct metrics;

/* Fills `j`; the pointers are borrowed for the job's life (`m` may be NULL). ERR_LIMIT when
 * state_dir is too long for the reports directory's path. Makes nothing on disk. */
int job_init(struct job *j, const struct job_row *row, const struct config *c, struct store *s,
	     struct dc_outbox *ob, const char *owner, struct metrics *m);

/* Makes the reports directory, writes job.json and queues `in_progress` for every configured
 * target. A job that came from a CRCR repository_dispatch echoes the dispatch's event_type,
 * delivery_id and payload; any other job sends the CRCR shape with what it has (docs/serve.md). */
int job_announce(struct job *j);

/* Whether job.json exists: `in_progress` was queued, by this attempt or an earlier one. */
bool job_announced(const struct job *j);

/* The run's report files in the job's directory and its results in the store, each case under
 * its JUnit name (cases a stop left unrun are not recorded). */
int job_record(struct job *j, const struct funnel_results *r);

/* Queues `completed` from the job's results.jsonl and marks the job reported with `detail`. */
int job_complete(struct job *j, const char *detail);

/* How an attempt that returned `rc` (not 0) ends. */
enum job_end {
	JOB_END_RELEASE = 1, /* back in the queue, the attempt not counted: the daemon stops */
	JOB_END_RETRY,       /* back in the queue after a wait: a failure that may pass */
	JOB_END_FAIL,        /* failed for good: the dashboard told when it had heard of it */
	JOB_END_LOST,        /* the lease is someone else's: nothing to write */
};

/* JOB_ATTEMPT_STOPPED: the run was stopped before its end (not a failure). */
#define JOB_ATTEMPT_STOPPED 1

/* `rc`: JOB_ATTEMPT_STOPPED or a negative code; `stopping`: the daemon is stopping;
 * `attempts`: this one's number (1 first); failures that may pass (ERR_IO, ERR_NOMEM: a fetch,
 * the disk, the database, memory) are retried while attempts < max_attempts; ERR_BADSTATE is a
 * lost lease. */
enum job_end job_end_of(int rc, bool stopping, int64_t attempts, int max_attempts);

/* JOB_RETRY_FIRST_MS after the first failed attempt, doubling, at most JOB_RETRY_MAX_MS. */
int64_t job_retry_wait_ms(int64_t attempts);

/* Carries out job_end_of(rc, ...) with `why` (err_last() of the failure) in the job's detail.
 * Returns the end it chose; a write that fails on the way is logged. */
enum job_end job_settle(struct job *j, int rc, bool stopping, const char *why);

/* A job claimed past workers.max_attempts (its last lease expired: its daemon was killed, or
 * it outlived its lease): failed, the dashboard told when it had heard of the job. */
void job_give_up(struct job *j);

#endif
