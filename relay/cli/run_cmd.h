/* `spyre-ci run`, shared between its files: the command line (cmd_run.c), where the cases come
 * from (run_cases.c: a selection or every entry of the specs), and the execution (cmd_run.c). */
#ifndef RELAY_RUN_CMD_H
#define RELAY_RUN_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "common/jsonx.h"
#include "executors/adapters.h"
#include "executors/shard.h"
#include "selector/select.h"
#include "testspecs/cases.h"

struct run_args {
	const char *repo, *base, *head, *diff, *out, *tier, *history, *adapters, *cache;
	const char *post, *token_file; /* refused: dashboard-client is not in this build */
	const char *specs[64];
	size_t n_specs;
	int all, no_progress;
	int jobs, retries;
	double timeout_s;
	uint64_t mem_bytes;
	int shard_index, shard_count; /* 0: no --shard */
	struct select_budget budget;
};

/* Every case of the specs (--all). 0, 1 (a case failed), or a negative code. */
int run__all(const struct run_args *a);
/* The cases of the tests a selection schedules. The same codes. */
int run__selection(const struct run_args *a);
/* Shards, runs and reports `list`'s cases. The same codes. */
int run__execute(const struct run_args *a, const struct spec_case_list *list);
/* The --history file as recorded durations (ids point into *json, which the caller keeps).
 * NULL path: none. */
int run__history(const char *path, json_t **json, struct exec_duration **out, size_t *n);
/* --adapters FILE, else adapters/adapters.yaml beside the first --specs that has one, else
 * none (*out NULL). */
int run__adapters(const struct run_args *a, struct exec_adapters **out);

#endif
