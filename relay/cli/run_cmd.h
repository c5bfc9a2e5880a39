/* `spyre-ci run`, shared between its files: the command line and the run through the funnel
 * (cmd_run.c), and the dashboard side of --post (run_post.c). */
#ifndef RELAY_RUN_CMD_H
#define RELAY_RUN_CMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dashboard-client/encode.h"
#include "selector/select.h"

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
