/* What the built-in dashboard reads and its receiver writes, beside the queue's own store
 * calls: HUD messages the receiver accepted, and read-only views of a job's results and outbox
 * rows as JSON (the pages render that JSON, so the HTML and the /api/ twins never disagree).
 * A backend's table of these hangs off its store_ops (.dash), so they reach its data through
 * the same interface; the SQLite one is store_dash.c. Like every store call, one handle is
 * used by one thread at a time. */
#ifndef RELAY_DAEMON_STORE_DASH_H
#define RELAY_DAEMON_STORE_DASH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* One accepted HUD envelope (docs/contracts.md), its fields already validated. */
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

/* The dashboard's part of a backend, reached through store_ops.dash. */
struct store_dash_ops {
	/* Stores `r` unless its key, or its (record, status), is there already: *duplicate
	 * then. */
	int (*hud_put)(struct store *s, bool *duplicate, const struct hud_record *r,
		       int64_t now_ms);
	/* The newest `max` HUD messages (head_sha NULL), or those about one upstream commit,
	 * newest first, as a JSON array of objects; failed_tests parsed back into an array. NEW
	 * reference. */
	int (*hud_json)(struct store *s, json_t **out, const char *head_sha, size_t max);
	/* A job's kernel-case results ({case, outcome, detail}; detail parsed when it is JSON)
	 * and its outbox messages ({id, target, state, attempts, key, last_status, last_error}),
	 * as JSON arrays. NEW references. */
	int (*results_json)(struct store *s, json_t **out, int64_t job_id, size_t max);
	int (*outbox_json)(struct store *s, json_t **out, const char *const job_keys[2],
			   size_t max);
};

/* The SQLite store's (store_dash.c). */
extern const struct store_dash_ops store__sqlite_dash_ops;

static inline int store_hud_put(struct store *s, bool *duplicate, const struct hud_record *r,
				int64_t now_ms)
{
	return s->ops->dash->hud_put(s, duplicate, r, now_ms);
}

static inline int store_hud_json(struct store *s, json_t **out, const char *head_sha, size_t max)
{
	return s->ops->dash->hud_json(s, out, head_sha, max);
}

static inline int store_results_json(struct store *s, json_t **out, int64_t job_id, size_t max)
{
	return s->ops->dash->results_json(s, out, job_id, max);
}

static inline int store_outbox_json(struct store *s, json_t **out, const char *const job_keys[2],
				    size_t max)
{
	return s->ops->dash->outbox_json(s, out, job_keys, max);
}

#endif
