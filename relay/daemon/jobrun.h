/* What a worker does with a job after its selection: run the kernel cases in the executors'
 * fork pool, write the reports into state_dir/reports/JOB/ (junit.xml, results.jsonl,
 * summary.json, and job.json: the job's identity for the dashboard, the directory
 * `spyre-ci report` reads), record the results in the store, and queue the dashboard messages
 * (in_progress when the job starts running, completed from results.jsonl when it ends) in the
 * outbox, one copy per configured target. Every message's idempotency key comes from the job's
 * identity alone, so a job run again after a crash queues the same keys: the outbox keeps the
 * first, and a receiver sees each message once. */
#ifndef RELAY_DAEMON_JOBRUN_H
#define RELAY_DAEMON_JOBRUN_H

#include <signal.h>

#include "common/limits.h"
#include "config.h"
#include "dashboard-client/outbox.h"
#include "executors/pool.h"
#include "store.h"
#include "testspecs/cases.h"

struct metrics;

/* The outbox targets: the names under which messages are queued. */
#define OUTBOX_TARGET_CRCR "crcr"
#define OUTBOX_TARGET_HUD  "hud"

struct jobrun {
	struct dc_outbox *ob;         /* the store's outbox (store_ops.outbox_open) */
	char dir[PATH_TEXT_MAX - 64]; /* this job's reports directory */
	exec_runner_fn runner; /* NULL: the executors' own (tests inject slow or faulty ones) */
	void *runner_ctx;
	volatile sig_atomic_t *stop;
	struct metrics *metrics;
};

/* The outbox on `s` (which stays the caller's to close, after jobrun_close()). */
int jobrun_open(struct jobrun *jr, struct store *s);
void jobrun_close(struct jobrun *jr);

/* Makes the reports directory, writes job.json and queues in_progress. A job that came from a
 * CRCR repository_dispatch echoes the dispatch's event_type, delivery_id and payload; any other
 * job sends the CRCR shape with what it has (jobrun.c, docs/serve.md). */
int jobrun_started(struct jobrun *jr, struct store *s, const struct job_row *j,
		   const struct config *c);

/* Runs the cases and records them (store and report files). 0 when every case ran, 1 when a
 * stop request ended the run first (nothing is recorded then), or a negative code. */
int jobrun_cases(struct jobrun *jr, struct store *s, const char *owner, const struct job_row *j,
		 const struct config *c, const struct spec_case_list *list);

/* Queues completed, built from the job's results.jsonl. */
int jobrun_completed(struct jobrun *jr, const struct job_row *j, const struct config *c);

/* For a job that failed after its in_progress was queued: completed with the conclusion
 * "failure" and no results, so the dashboard does not show it running for ever. 0 (nothing
 * queued) when in_progress never was. */
int jobrun_failed(struct jobrun *jr, const struct job_row *j, const struct config *c);

#endif
