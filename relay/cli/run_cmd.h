/* `spyre-ci run`, shared between its files: the command line (cmd_run.c), where the cases come
 * from (run_cases.c: a selection or every entry of the specs), and the execution (cmd_run.c). */
#ifndef RELAY_RUN_CMD_H
#define RELAY_RUN_CMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/jsonx.h"
#include "dashboard-client/encode.h"
#include "executors/adapters.h"
#include "executors/shard.h"
#include "selector/select.h"
#include "testspecs/cases.h"

struct run_args {
	const char *repo, *base, *head, *diff, *out, *tier, *history, *adapters, *cache;
	const char *post, *token_file, *job; /* --post: where, the token, a job.json template */
	enum dc_format format;               /* --format crcr|hud */
	int64_t post_horizon_s;              /* --post-horizon: retry a message this long */
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

/* --post: the cases ran, but a callback was dead-lettered or is still pending. */
#define RUN_POST_UNDELIVERED 3

/* The dashboard side of a run (run_post.c). */
struct run_post;
/* Before execution: checks the token and URL, writes --out/job.json, queues `in_progress` and
 * tries it once. 0 or a negative code (ERR_INVAL: bad --job, token or URL). */
int run__post_begin(struct run_post **out, const struct run_args *a, volatile sig_atomic_t *stop);
/* After the reports are written: queues `completed` with the counts of results.jsonl and
 * drains until every message is delivered or dead-lettered. 0, RUN_POST_UNDELIVERED, or a
 * negative code. */
int run__post_end(struct run_post *p);
void run__post_destroy(struct run_post *p);

#endif
