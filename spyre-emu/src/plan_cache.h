/* Private to the planner and run.c: the cache of plan choices (plan_cache.c). */
#ifndef SPYRE_EMU_PLAN_CACHE_H
#define SPYRE_EMU_PLAN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/hw.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"
#include "spyre-emu/timing.h"

/* What decides a plan choice: op, dtype, shapes, parameters, core count and a digest of the
 * hardware description's numbers. Zeroed before filling, so it compares with memcmp. */
struct plan_key {
	char op[48];
	int dtype, nin, cores;
	int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
	int ndims[SPYRE_OP_INPUTS_MAX];
	double pd[4];               /* scalar, scalar2, eps, and 0 */
	int pi[6 + SPYRE_DIMS_MAX]; /* has_min, has_max, dim, keepdim, approx, causal, perm */
	uint64_t pext; /* digest of what the MOVE ops, casts and attention add (target shape, index
			tuple, output dtype, scale) */
	uint64_t hw;
};

uint64_t plan_cache_hw_digest(const struct spyre_hw *hw);
void plan_cache_key(struct plan_key *k, const char *op, enum spyre_dtype dtype, int nin,
		    const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims,
		    const struct spyre_op_params *p, const struct spyre_hw *hw);

/* 1 with the plan's name and a copy of its timing (finish it) on a hit, in memory or in `dir`
 * (NULL: memory only); 0 on a miss. */
int plan_cache_get(const struct plan_key *k, const char *dir, char *plan, struct spyre_timing *t);
/* Remembers a choice (in `dir` too, when given; a failed write is ignored). */
void plan_cache_put(const struct plan_key *k, const char *dir, const char *plan,
		    const struct spyre_timing *t);
void plan_cache_release(void);

/* Decodes one on-disk record for key `k`: 0, or ERR_INVAL for anything but exactly that.
 * Exposed for the fuzz target. */
int plan_cache__decode(const void *buf, size_t len, const struct plan_key *k, char *plan,
		       struct spyre_timing *t);

#endif
