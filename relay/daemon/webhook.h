/* The webhook body's meaning: from the event name, the delivery id and the (already
 * authenticated) JSON body to a decision: accept with a job, answer a ping, ignore with a
 * reason, or refuse as malformed. Pure: no I/O, no store, so that it has a fuzz target of its
 * own (tests/fuzz/webhook.c). A CRCR repository_dispatch is unwrapped here: its client_payload
 * carries the upstream event, the upstream delivery id (a second dedup key) and the body. */
#ifndef RELAY_DAEMON_WEBHOOK_H
#define RELAY_DAEMON_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "common/limits.h"
#include "store.h"

enum wh_outcome {
	WH_ACCEPT = 0, /* a delivery that makes a job */
	WH_PING,       /* GitHub's hello: 200, nothing stored */
	WH_IGNORED,    /* 200 {"ignored": true, "reason": ...} */
	WH_BAD,        /* 400: malformed */
};

struct wh_rules {
	const char *repo;          /* upstream owner/name */
	const char *dispatch_repo; /* NULL or "": any */
	char *const *branches;
	size_t n_branches;
	bool tags, ciflow;
};

/* The job spec points into the fields below: never copy a decision by value. */
struct wh_decision {
	enum wh_outcome outcome;
	char reason[256];
	char event[24]; /* the upstream event (the inner one for a dispatch) */
	char ids[2][WEBHOOK_PREAUTH_HEADER_MAX + 1];
	size_t n_ids;
	struct job_spec job; /* points into the fields below */
	char ref[256], base[41], head[41], tip_key[96];
};

/* Decides what to do with one delivery. Never fails: a malformed body is WH_BAD with a
 * reason. `body` need not be NUL-terminated. */
void webhook_decide(struct wh_decision *d, const struct wh_rules *r, const char *event,
		    const char *delivery, const char *body, size_t len);

/* The intake item for an accepted decision (borrows from `d`). */
void webhook_item(struct intake_item *it, const struct wh_decision *d);

#endif
