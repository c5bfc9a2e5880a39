/* The outbox: where dashboard messages wait until a receiver has them. An interface (a struct
 * of function pointers), so that dc_drain() sends from any backend unchanged; its one
 * implementation is SQLite (outbox_sqlite.h), on a file of its own for `spyre-ci report` and
 * `spyre-ci run`, or on the daemon's store connection. A PostgreSQL store would add a second.
 *
 * What an implementation must keep, across the death of the process between any two calls:
 *  - enqueue is idempotent by (target, key): the same message enqueued twice is one message;
 *  - claim hands out only the first undelivered message of each job (in_progress before
 *    completed), only when due, and records the attempt BEFORE the caller sends, so that after a
 *    crash between send and settle the message is known to have possibly arrived;
 *  - settle records the outcomes of claimed messages in one durable step; a dead-lettered message
 *    takes the later messages of its job with it (they could only be rejected).
 * A crash between claim and settle leaves the message pending: it is sent again (at least once)
 * with the same key, and the receiver's dedup makes it exactly once. */
#ifndef DASHBOARD_CLIENT_OUTBOX_H
#define DASHBOARD_CLIENT_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dashboard-client/encode.h"

enum dc_settle_kind { DC_SETTLE_DELIVERED, DC_SETTLE_RETRY, DC_SETTLE_DEAD };

struct dc_settlement {
	const char *key;
	enum dc_settle_kind kind;
	int64_t next_at_ms; /* retry: when it is due again */
	long status;        /* the last HTTP status (0: none) */
	const char *error;  /* retry and dead: what went wrong, for people */
	const char *body;   /* dead: the receiver's answer (may be NULL) */
	size_t body_len;
	bool already; /* delivered: the receiver said it had it already */
};

struct dc_outbox_counts {
	uint64_t pending, delivered, dead;
};

/* A dead letter as reported to the user. Strings borrowed for the callback's duration. */
struct dc_dead_letter {
	const char *key;
	int seq;
	int attempts;
	long status;
	const char *error;
	const char *body;
};

struct dc_outbox;

struct dc_outbox_ops {
	/* Adds `m` for `target` unless its key is there already (*added says which). */
	int (*enqueue)(struct dc_outbox *ob, const char *target, const struct dc_message *m,
		       bool *added);
	/* The same for `n` messages in one durable step (a job's messages, a run's jobs): all
	 * or none; *added counts the new ones. */
	int (*enqueue_many)(struct dc_outbox *ob, const char *target, const struct dc_message *m,
			    size_t n, size_t *added);
	/* Up to `max` due messages (next attempt <= now_ms), the first undelivered of their job,
	 * oldest first; each one's attempt counted and its first attempt time set, durably,
	 * before return. out[i].attempts is the count BEFORE this claim. */
	int (*claim)(struct dc_outbox *ob, const char *target, int64_t now_ms, size_t max,
		     struct dc_message *out, size_t *n);
	int (*settle)(struct dc_outbox *ob, const char *target, const struct dc_settlement *s,
		      size_t n);
	/* The earliest next attempt of a pending message; ERR_NOTFOUND when none is pending. */
	int (*next_due)(struct dc_outbox *ob, const char *target, int64_t *out_ms);
	/* When the first attempt of a pending message was made (0: not yet). */
	int (*first_attempt)(struct dc_outbox *ob, const char *target, const char *key,
			     int64_t *out_ms);
	int (*counts)(struct dc_outbox *ob, const char *target, struct dc_outbox_counts *out);
	int (*each_dead)(struct dc_outbox *ob, const char *target,
			 void (*fn)(const struct dc_dead_letter *d, void *ctx), void *ctx);
	/* Makes delivered and dead messages of `target` pending again (a re-post): the same keys,
	 * a fresh horizon; the attempts so far are kept, so an "already recorded" counts. */
	int (*requeue)(struct dc_outbox *ob, const char *target, uint64_t *n);
	void (*destroy)(struct dc_outbox *ob);
};

struct dc_outbox {
	const struct dc_outbox_ops *ops;
};

static inline void dc_outbox_destroy(struct dc_outbox *ob)
{
	if (ob)
		ob->ops->destroy(ob);
}

#endif
