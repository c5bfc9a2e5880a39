/* The sender: drains an outbox to one target. Claim a batch (the attempt recorded first),
 * post each message, classify the answer (retry.h), settle the batch in one durable step; when
 * nothing is due, sleep until the earliest retry. Ends when nothing is pending, or when `stop`
 * is set. Every transient failure is retried within the policy's horizon; a permanent one is
 * dead-lettered with the receiver's answer. */
#ifndef DASHBOARD_CLIENT_DRAIN_H
#define DASHBOARD_CLIENT_DRAIN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dashboard-client/outbox.h"
#include "dashboard-client/retry.h"
#include "dashboard-client/transport.h"

/* The points between the durable steps, for tests that kill the process there. */
enum dc_step { DC_STEP_CLAIMED, DC_STEP_POSTED, DC_STEP_SETTLED };

struct dc_drain_opts {
	struct dc_retry_policy policy;
	struct dc_clock clock;
	size_t batch;                            /* messages claimed at once (0: 64) */
	volatile sig_atomic_t *stop;             /* NULL, or set to end the drain early */
	void (*step)(enum dc_step s, void *ctx); /* NULL, or called after each step */
	void *step_ctx;
};

struct dc_drain_stats {
	uint64_t posts;     /* sends, first or again */
	uint64_t delivered; /* accepted now */
	uint64_t already;   /* answered "already recorded" after an earlier send */
	uint64_t retries;   /* transient failures scheduled again */
	uint64_t dead;      /* dead-lettered in this drain */
};

/* 0 when nothing is pending any more (delivered or dead-lettered: see the counts), or a
 * negative code when the outbox failed (ERR_IO...) or the drain was stopped (ERR_BADSTATE). */
int dc_drain(struct dc_outbox *ob, struct dc_transport *t, const char *target,
	     const struct dc_drain_opts *o, struct dc_drain_stats *st);

#endif
