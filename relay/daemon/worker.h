/* Workers: claim a job with a lease, make sure both ends of its range are in the mirror, take it
 * through the funnel (funnel.h: stages 1-4, the kernel cases, their run; the selector's cache and
 * the specs kept in the worker between jobs), record the selection and the results, and queue
 * the dashboard's messages (job.h). A lease keeper thread renews the lease while the job runs;
 * every write of the job checks the lease in its own transaction. */
#ifndef RELAY_DAEMON_WORKER_H
#define RELAY_DAEMON_WORKER_H

#include "executors/pool.h"
#include "store.h"

/* What tests may put in the executors' place: a runner of one case inside a pool worker
 * (slow, crashing, ...). NULL: the executors' own. */
struct worker_seams {
	exec_runner_fn runner;
	void *runner_ctx;
};

struct daemon;

/* The thread body; `arg` is the daemon. */
void *worker_main(void *arg);

#endif
