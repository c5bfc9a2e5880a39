/* What the built-in dashboard reads and its receiver writes, beside the queue's own store
 * calls: HUD messages the receiver accepted, and read-only views of a job's results and outbox
 * rows as JSON (the pages render that JSON, so the HTML and the /api/ twins never disagree).
 * Implemented for the SQLite store (store_dash.c); a second backend adds the same functions.
 * Like every store call, one handle is used by one thread at a time. */
#ifndef RELAY_DAEMON_STORE_DASH_H
#define RELAY_DAEMON_STORE_DASH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* One accepted HUD envelope (CONTRACTS.md section 4), its fields already validated. */
struct hud_record {
	const char *idem_key;   /* the message's key: its Idempotency-Key, else record/status */
	const char *record_key; /* verified_repo/delivery_id/workflow.name/job_name/check_run_id */
	const char *status;     /* in_progress | completed */
	const char *conclusion; /* NULL on in_progress */
	const char *delivery_id, *run_id, *job_name, *workflow,
	    *head_sha; /* head_sha may be NULL */
	int64_t passed, failed, skipped;
	bool has_queue_time, has_execution_time;
	double queue_time, execution_time;
	const char *failed_tests; /* workflow.failed_tests_json as sent, or NULL */
};

/* Stores `r` unless its key, or its (record, status), is there already: *duplicate then. */
int store_hud_put(struct store *s, bool *duplicate, const struct hud_record *r, int64_t now_ms);

/* The newest `max` HUD messages (head_sha NULL), or those about one upstream commit, newest
 * first, as a JSON array of objects; failed_tests parsed back into an array. NEW reference. */
int store_hud_json(struct store *s, json_t **out, const char *head_sha, size_t max);

/* A job's kernel-case results ({case, outcome, detail}; detail parsed when it is JSON) and its
 * outbox messages ({id, target, state, attempts, key}), as JSON arrays. NEW references. */
int store_results_json(struct store *s, json_t **out, int64_t job_id, size_t max);
int store_outbox_json(struct store *s, json_t **out, const char *const job_keys[2], size_t max);

#endif
