/* The local pool: cases run in N worker processes (forks, or forks that exec a worker program:
 * worker_exe), one case at a time each, streamed over pipes in proto.h's frames. The parent never
 * runs a case itself, so whatever a case does to its process becomes that case's outcome and the
 * run goes on:
 *   a result that does not come within the timeout   timed_out (the worker is killed)
 *   the worker dies of a signal                       crashed, "SIGSEGV (Segmentation fault)"
 *   the worker exits mid-case                         crashed, "worker exited with status N"
 *   bytes on the pipe that are no valid result        error, "garbage on the pipe: ..."
 * and the worker is replaced. Each worker has RLIMIT_AS (an allocation past it fails in the
 * worker: the emulator reports out of memory, which is an `error`). Cases that fail, crash or
 * time out are run once more: a pass then is `flaky`. Results land at their case's index, so the
 * order is the input order whatever the scheduling. A stop request (the caller's flag, set from
 * a SIGINT/SIGTERM handler) ends the workers and returns what finished; the rest is
 * EXEC_NOT_RUN. */
#ifndef EXECUTORS_POOL_H
#define EXECUTORS_POOL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "executors/case.h"

#define EXEC_JOBS_MAX          256
#define EXEC_TIMEOUT_DEFAULT_S 120.0
#define EXEC_MEM_DEFAULT       ((uint64_t)8 << 30) /* RLIMIT_AS of one worker */
#define EXEC_STOP_GRACE_MS     1000                /* SIGTERM to SIGKILL when stopping */

/* What runs a case inside a worker. The default (NULL) is exec_case_run() with the pool's
 * adapters. Tests inject faults through their own runner; `reply_fd` is the pipe the worker
 * answers on (a runner that wants to write garbage writes there). */
typedef void (*exec_runner_fn)(const struct exec_case *c, struct exec_result *r, int reply_fd,
			       void *ctx);

struct exec_progress {
	size_t done, total; /* cases with a final result */
	size_t ok, bad;     /* exec_outcome_ok() or not */
	double elapsed_s;
};

struct exec_pool_opts {
	int jobs;           /* workers; <= 0: the number of online cores */
	double timeout_s;   /* per case; <= 0: EXEC_TIMEOUT_DEFAULT_S */
	uint64_t mem_bytes; /* RLIMIT_AS per worker; 0: EXEC_MEM_DEFAULT */
	int retries;        /* reruns of a failed case: 0 or 1 */
	const struct exec_adapters *adapters;
	exec_runner_fn runner;
	void *runner_ctx;
	/* NULL: each worker is a fork of this process that runs cases as it is. Else (and with
	 * no runner) each worker execs this program as `worker_exe __case-worker`, whose main
	 * calls exec_pool_worker_main: a fresh process image, so no lock that another thread of
	 * a threaded parent (the daemon) held at the fork can hang it. "/proc/self/exe" is the
	 * running program. */
	const char *worker_exe;
	void (*progress)(void *ctx, const struct exec_progress *p); /* after each result */
	void *progress_ctx;
	volatile sig_atomic_t *stop; /* NULL: never asked */
};

struct exec_pool_stats {
	size_t spawned;  /* worker processes started, replacements included */
	size_t replaced; /* after a crash, a timeout or garbage */
	size_t retried;
	int stopped; /* the stop flag ended the run */
};

/* Runs cases[0..n) into results[0..n). 0 when every case has a result, 1 when a stop request
 * ended the run first, or an error from the operating system (fork, pipe) before any case ran.
 * `stats` may be NULL. */
int exec_pool_run(const struct exec_case *cases, size_t n, const struct exec_pool_opts *opts,
		  struct exec_result *results, struct exec_pool_stats *stats);

/* The argument after worker_exe that makes a program a pool worker, and the descriptor of its
 * case pipe (its result pipe is the next one). */
#define EXEC_WORKER_ARG "__case-worker"
#define EXEC_WORKER_FD  3

/* The main of an exec'd worker (see worker_exe): reads the setup, then runs cases from fd
 * `in`, answering on `out`, until QUIT or the parent's end of file. Never returns. */
_Noreturn void exec_pool_worker_main(int in, int out);

#endif
