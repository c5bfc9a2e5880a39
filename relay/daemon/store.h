/* The daemon's durable state behind an interface (a struct of function pointers), so that a
 * PostgreSQL backend can follow the embedded SQLite one (store_sqlite.c) for several hosts
 * sharing one queue. Every call is one transaction; a call that returns 0 has committed.
 *
 * Tables: deliveries (unique delivery id -> job), jobs (queued -> running -> awaiting ->
 * reported, or failed; lease owner, expiry, attempts; a unique tip key so that the webhook and
 * the poller never make two jobs for one tip), selections, results, outbox, poller cursors.
 * The outbox is dashboard-client's (outbox.h) on the store's own database, handed out by
 * outbox_open; beside it the store only reads the table (its depth, a job's messages for the
 * dashboard) and deletes old rows (retention).
 * The built-in dashboard's reads and its receiver's HUD messages are a second table of the
 * backend's (store_dash.h), reached through store_ops.dash. One store handle is used by one
 * thread at a time: each thread opens its own. */
#ifndef RELAY_DAEMON_STORE_H
#define RELAY_DAEMON_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION 5

struct dc_outbox;
struct store_dash_ops;

enum job_state {
	JOB_QUEUED = 0,
	JOB_RUNNING,
	JOB_AWAITING, /* an older daemon's "selected, waiting for the executors": claimed again */
	JOB_REPORTED,
	JOB_FAILED,
	JOB_STATES,
};

const char *job_state_name(enum job_state s);

/* A job to create: the event that asked for it and the range. */
struct job_spec {
	const char *event;   /* "push", "pull_request", "poll" */
	const char *ref;     /* refs/heads/main, refs/pull/N/head */
	const char *base;    /* 40 hex or NULL (the worker resolves it) */
	const char *head;    /* 40 hex */
	const char *tip_key; /* unique: a second job with the same key is not made */
	int64_t pr_number;   /* 0 if none */
	/* NULL, or a CRCR dispatch's {"event_type", "delivery_id", "payload"} as JSON: the
	 * dashboard messages echo it */
	const char *dispatch;
};

/* One webhook delivery to commit. `ids` are the dedup keys (the X-GitHub-Delivery GUID, and for
 * a CRCR dispatch the upstream delivery_id too); `job` is NULL for a delivery that makes no job. */
struct intake_item {
	const char *ids[2];
	size_t n_ids;
	const char *event;
	const struct job_spec *job;
	/* filled by the store */
	int64_t job_id; /* the new or the original job; 0 when none */
	bool duplicate; /* a delivery id was seen before: nothing was enqueued */
};

struct job_row {
	int64_t id;
	enum job_state state;
	char event[24];
	char ref[256];
	char base[41], head[41];
	int64_t pr_number;
	int64_t attempts;
	int64_t created_ms, updated_ms;
	int64_t started_ms; /* the last claim by a worker; 0 when never claimed */
	int64_t lease_expires_ms;
	char lease_owner[64];
	char detail[512];
};

/* One kernel case's outcome, as recorded for a job. */
struct result_row {
	const char *case_id; /* the testcase name: method[op-shapes-dtype] */
	const char *outcome; /* docs/contracts.md, outcomes (flaky too) */
	const char *detail;  /* NULL or the case's message */
};

/* What retention removed in one sweep. */
struct retention_stats {
	int64_t jobs, deliveries, results, outbox;
};

struct store;

struct store_ops {
	void (*close)(struct store *s);
	/* Commits every item in ONE transaction (group commit): duplicates found, jobs made or
	 * found by tip key. Either all are durable on return 0, or none is. */
	int (*intake)(struct store *s, struct intake_item *items, size_t n, int64_t now_ms);
	/* Makes a job for a tip unless its tip key exists, and sets the poller cursor of
	 * `cursor_ref` to the tip in the same transaction. *job_id: new job, or 0. */
	int (*poll_tip)(struct store *s, int64_t *job_id, const struct job_spec *job,
			const char *cursor_ref, int64_t now_ms);
	int (*cursor_get)(struct store *s, char tip[41], const char *ref); /* ERR_NOTFOUND */
	/* Claims the oldest queued job whose wait is over, or a running one whose lease has
	 * expired; attempts + 1. A job past the caller's limit of attempts is claimed all the
	 * same: the claimer holds it while it reports the job failed (worker.c). ERR_NOTFOUND
	 * when none. */
	int (*claim)(struct store *s, struct job_row *out, const char *owner, int64_t lease_ms,
		     int64_t now_ms);
	/* Extends the lease; ERR_BADSTATE when `owner` no longer holds it. */
	int (*renew)(struct store *s, int64_t job_id, const char *owner, int64_t lease_ms,
		     int64_t now_ms);
	/* Puts a held job back to queued (drain); the attempt does not count. */
	int (*release)(struct store *s, int64_t job_id, const char *owner, int64_t now_ms);
	/* Puts a held job back to queued after a failure that may pass (a fetch, the disk): it
	 * is claimed again from `not_before_ms` on, the attempt counts, `detail` says why. */
	int (*retry)(struct store *s, int64_t job_id, const char *owner, int64_t not_before_ms,
		     const char *detail, int64_t now_ms);
	/* Moves a held job to `state` with a detail line, ending the lease. */
	int (*finish)(struct store *s, int64_t job_id, const char *owner, enum job_state state,
		      const char *detail, int64_t now_ms);
	int (*selection_put)(struct store *s, int64_t job_id, const char *owner, const char *json,
			     int64_t scheduled, int64_t now_ms);
	int (*selection_get)(struct store *s, char **json, int64_t job_id); /* ERR_NOTFOUND */
	int (*job_get)(struct store *s, struct job_row *out, int64_t id);   /* ERR_NOTFOUND */
	/* The job's dispatch JSON (malloc()ed); ERR_NOTFOUND when it came from no dispatch. */
	int (*job_dispatch)(struct store *s, char **json, int64_t id);
	/* Jobs with id < before (0: from the newest), newest first, at most `max`. */
	int (*job_list)(struct store *s, struct job_row *out, size_t *n, size_t max,
			int64_t before);
	/* Replaces the job's results with `rows` in one transaction, while `owner` holds it. */
	int (*results_put)(struct store *s, int64_t job_id, const char *owner,
			   const struct result_row *rows, size_t n, int64_t now_ms);
	/* Counts of the job's results per outcome name, through `fn`. */
	int (*results_count)(struct store *s, int64_t job_id,
			     void (*fn)(const char *outcome, int64_t n, void *ctx), void *ctx);
	/* Deletes reported and failed jobs last changed before `before_ms`, with their
	 * deliveries, selections and results, and delivered or dead outbox messages made before
	 * it. Work in progress (queued, running, awaiting, pending messages) is never touched. */
	int (*retention)(struct store *s, int64_t before_ms, struct retention_stats *st);
	int (*job_counts)(struct store *s, int64_t counts[JOB_STATES]);
	int (*delivery_count)(struct store *s, int64_t *n);
	int (*outbox_depth)(struct store *s, int64_t *n);
	/* The outbox (dashboard-client/outbox.h) this backend keeps, in its own database: on
	 * SQLite, dashboard-client's SQLite outbox attached to this handle's connection
	 * (outbox_sqlite.h), so the messages share the store's file and backups. The outbox shares
	 * the handle and thus its thread: use both from one thread, never inside another call,
	 * and destroy the outbox before closing the store. */
	int (*outbox_open)(struct store *s, struct dc_outbox **out);
	int (*ping)(struct store *s);
	/* What the built-in dashboard reads and its receiver writes (store_dash.h). */
	const struct store_dash_ops *dash;
};

struct store {
	const struct store_ops *ops;
};

/* Opens (creating or migrating) the SQLite store in `dir`/spyre-ci.db. A store written by a
 * newer version is refused (ERR_BADSTATE) and left untouched. */
int store_sqlite_open(struct store **out, const char *dir);

/* For tests: creates or migrates the database only up to `version`. */
int store_sqlite_open_at(struct store **out, const char *dir, int version);

static inline void store_close(struct store *s)
{
	if (s)
		s->ops->close(s);
}

#endif
