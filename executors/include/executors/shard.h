/* Shards: --shard I/N keeps the cases of shard I of N. The cases of one upstream test stay
 * together; tests are placed longest first onto the least-loaded shard (ties: the lower shard;
 * equal costs: by test id), so that shards finish together. A test's cost is its recorded mean
 * duration (the selector's --history file: {"ID": {"mean_seconds": N, ...}}), else
 * EXEC_CASE_SECONDS per kernel case. Every host computes the same plan from the same inputs. */
#ifndef EXECUTORS_SHARD_H
#define EXECUTORS_SHARD_H

#include <stdbool.h>
#include <stddef.h>

#include "executors/case.h"

#define EXEC_CASE_SECONDS 0.05 /* = SELECT_CASE_SECONDS */
#define EXEC_SHARDS_MAX   1024

struct exec_duration {
	const char *id; /* upstream test id */
	double seconds;
};

/* "I/N" with 1 <= I <= N <= EXEC_SHARDS_MAX. 0 or ERR_INVAL. */
int exec_shard_parse(const char *text, int *index, int *count);

/* keep[i] says whether cases[i] belongs to shard `index` (1-based) of `count`. `durations` (n_d
 * of them, any order; may be NULL) are the recorded costs. 0 or ERR_NOMEM. Fills
 * `shard_seconds` (count entries, may be NULL) with each shard's planned cost. */
int exec_shard_plan(const struct exec_case *cases, size_t n, const struct exec_duration *durations,
		    size_t n_d, int index, int count, bool *keep, double *shard_seconds);

#endif
