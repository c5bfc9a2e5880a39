/* The pool's bookkeeping (pool_priv.h): the queue of cases, retries and the flaky verdict, and
 * progress. No processes here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "pool_priv.h"

int pool__init(struct pool *p, const struct exec_case *cases, size_t n,
	       const struct exec_pool_opts *o, struct exec_result *results)
{
	memset(p, 0, sizeof(*p));
	p->cases = cases;
	p->n = n;
	p->o = o;
	p->res = results;
	p->t0 = clock_mono_ns();
	p->timeout_s = o->timeout_s > 0 ? o->timeout_s : EXEC_TIMEOUT_DEFAULT_S;
	p->mem = o->mem_bytes ? o->mem_bytes : EXEC_MEM_DEFAULT;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = o->jobs > 0 ? o->jobs : (cores > 0 ? (int)cores : 1);
	if (jobs > EXEC_JOBS_MAX)
		jobs = EXEC_JOBS_MAX;
	p->nw = n < (size_t)jobs ? (int)n : jobs;
	memset(results, 0, n * sizeof(*results));
	p->qcap = n * 2 + 1; /* every case once and once more */
	p->queue = malloc(p->qcap * sizeof(*p->queue));
	p->attempts = calloc(n + 1, 1);
	p->w = calloc((size_t)p->nw + 1, sizeof(*p->w));
	if (!p->queue || !p->attempts || !p->w)
		return err_set(ERR_NOMEM, "pool: out of memory for %zu cases", n);
	for (int j = 0; j < p->nw; j++)
		p->w[j] = (struct worker){ .pid = -1, .to = -1, .from = -1, .ci = -1 };
	for (size_t i = 0; i < n; i++)
		p->queue[p->qtail++] = i;
	p->prog.total = n;
	return 0;
}

void pool__finish(struct pool *p)
{
	free(p->queue);
	free(p->attempts);
	free(p->w);
}

bool pool__pending(const struct pool *p)
{
	return p->qhead < p->qtail;
}

bool pool__next(struct pool *p, size_t *ci)
{
	if (p->qhead == p->qtail)
		return false;
	*ci = p->queue[p->qhead++];
	return true;
}

static bool retryable(int outcome)
{
	return outcome == EXEC_FAILED || outcome == EXEC_CRASHED || outcome == EXEC_TIMED_OUT;
}

void pool__finish_case(struct pool *p, size_t ci, const struct exec_result *r)
{
	struct exec_result *slot = &p->res[ci];
	int attempt = ++p->attempts[ci];
	if (retryable(r->outcome) && attempt <= p->o->retries && p->qtail < p->qcap) {
		*slot = *r; /* kept: the first attempt, for the verdict */
		slot->first_outcome = r->outcome;
		p->queue[p->qtail++] = ci;
		p->st.retried++;
		return;
	}
	if (attempt > 1) {
		struct exec_result first = *slot;
		*slot = *r;
		slot->first_outcome = first.outcome;
		if (r->outcome == EXEC_PASSED) {
			slot->outcome = EXEC_FLAKY;
			snprintf(slot->message, sizeof(slot->message),
				 "passed on retry; first %s: %.180s",
				 exec_outcome_name((enum exec_outcome)first.outcome),
				 first.message);
		}
	} else {
		*slot = *r;
		slot->first_outcome = r->outcome;
	}
	slot->attempts = attempt;
	p->done++;
	p->prog.done = p->done;
	if (exec_outcome_ok((enum exec_outcome)slot->outcome))
		p->prog.ok++;
	else
		p->prog.bad++;
	p->prog.elapsed_s = clock_elapsed_s(p->t0, clock_mono_ns());
	if (p->o->progress)
		p->o->progress(p->o->progress_ctx, &p->prog);
}
