/* Workers: claim a job with a lease, make sure both ends of its range are in the mirror, run
 * the selector (stages 1-4, its caches kept in the worker between jobs) and record the
 * selection. What follows the selection plugs in through the seams below: the kernel-case
 * executors and the dashboard outbox. Until they are given, a selected job is left in state
 * `awaiting` with a detail saying what it waits for: nothing is faked. */
#ifndef RELAY_DAEMON_WORKER_H
#define RELAY_DAEMON_WORKER_H

#include "store.h"

struct worker_seams {
	/* Runs the selected kernel cases and stores their results; 0 when every case has a
	 * result. Called with the lease held (a lease keeper thread renews it meanwhile). NULL: no
	 * executors yet. */
	int (*run_cases)(void *ctx, struct store *s, const struct job_row *job,
			 const char *selection_json);
	/* Queues a dashboard message ("in_progress" or "completed") for the job in the outbox.
	 * NULL: no dashboard client yet. */
	int (*queue_message)(void *ctx, struct store *s, const struct job_row *job,
			     const char *phase);
	void *ctx;
};

struct daemon;

/* The thread body; `arg` is the daemon. */
void *worker_main(void *arg);

#endif
