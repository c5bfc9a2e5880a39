/* The pool's state, shared by its process handling (pool.c) and its bookkeeping of cases,
 * retries and progress (pool_state.c). */
#ifndef EXECUTORS_POOL_PRIV_H
#define EXECUTORS_POOL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "executors/pool.h"
#include "executors/proto.h"

struct worker {
	pid_t pid;    /* -1: none */
	int to, from; /* the parent's ends of the case and result pipes */
	long ci;      /* the case in flight; -1 idle */
	uint64_t started, deadline;
	unsigned char buf[EXEC_FRAME_HEADER + EXEC_FRAME_MAX];
	size_t n;
};

struct pool {
	const struct exec_case *cases;
	size_t n;
	const struct exec_pool_opts *o;
	struct exec_result *res;
	struct worker *w;
	int nw;
	double timeout_s;
	uint64_t mem;
	size_t *queue; /* case indices to run: every case once, then the retries */
	size_t qhead, qtail, qcap;
	uint8_t *attempts;
	size_t done;
	uint64_t t0;
	struct exec_progress prog;
	struct exec_pool_stats st;
};

int pool__init(struct pool *p, const struct exec_case *cases, size_t n,
	       const struct exec_pool_opts *o, struct exec_result *results);
void pool__finish(struct pool *p);
/* The next case to run; false when none is queued. */
bool pool__next(struct pool *p, size_t *ci);
bool pool__pending(const struct pool *p);
/* Records an attempt's result: queues a retry, or makes it final (flaky when a retry passed)
 * and reports progress. */
void pool__finish_case(struct pool *p, size_t ci, const struct exec_result *r);
/* "worker killed by SIGSEGV (Segmentation fault)" from a wait status. */
void exec__status_text(char *buf, size_t size, int status);

#endif
