/* The retry policy: what an answer means (delivered, retry later, give up), when to try again
 * (exponential backoff with jitter, or the server's Retry-After, whichever is later) and for how
 * long (a horizon from the first attempt). Time, sleeping and randomness come through a
 * struct dc_clock so tests run a day of backoff in microseconds. */
#ifndef DASHBOARD_CLIENT_RETRY_H
#define DASHBOARD_CLIENT_RETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/limits.h"

struct dc_clock {
	int64_t (*now_ms)(void *ctx);            /* wall clock, ms since the epoch */
	void (*sleep_ms)(void *ctx, int64_t ms); /* may return early; the caller asks again */
	uint64_t (*random)(void *ctx);           /* for jitter */
	void *ctx;
};

/* The real clock (clock_wall_ms, clock_sleep_ms, a per-process random). */
struct dc_clock dc_clock_system(void);

struct dc_retry_policy {
	int64_t base_ms; /* the first delay */
	int64_t max_ms;  /* no single delay is longer (Retry-After included, up to the horizon) */
	int64_t horizon_ms; /* no retry is scheduled later than this after the first attempt */
};

/* 1 s, doubling up to 5 min, for up to 6 hours. */
struct dc_retry_policy dc_retry_policy_default(void);

/* What one post came to; transport.c fills it. */
struct dc_response {
	long status;          /* HTTP status; 0 when no complete answer arrived */
	int transport_error;  /* 0, or the libcurl code (CURLcode) of a failed transfer */
	bool transport_fatal; /* the failure cannot heal by waiting (bad URL, TLS verification) */
	char error[256];      /* libcurl's message, or "" */
	char *body;           /* the start of the answer's body (DC_RESPONSE_KEEP_MAX), or NULL */
	size_t body_len;
	char retry_after[DC_RETRY_AFTER_TEXT_MAX + 1]; /* the raw header, "" if none */
};

void dc_response_finish(struct dc_response *r);
void dc_response_reset(struct dc_response *r);

enum dc_verdict {
	DC_VERDICT_DELIVERED, /* 2xx */
	DC_VERDICT_ALREADY,   /* a 400 "already recorded" after a send that may have arrived */
	DC_VERDICT_RETRY,     /* 5xx, 408, 429, timeouts, connection errors */
	DC_VERDICT_PERMANENT, /* other 4xx (and 3xx, 1xx): dead-letter with the body */
};

const char *dc_verdict_name(enum dc_verdict v);

/* `sent_before`: an earlier send of this message was started (by this process or one that
 * died), so the receiver may hold it already. */
enum dc_verdict dc_classify(const struct dc_response *r, bool sent_before);

/* True when a 400's body says the transition was recorded already: the relay's "invalid
 * state transition", or "already recorded" (case-insensitive, within `len` bytes). */
bool dc_body_says_recorded(const char *body, size_t len);

/* Parses a Retry-After value (RFC 9110 10.2.3): delta-seconds, or an HTTP-date in any of its
 * three forms (IMF-fixdate, RFC 850, asctime), as a delay in ms from `now_ms` (wall clock). A
 * date in the past is 0; more than DC_RETRY_AFTER_MAX_S is cut to it. ERR_INVAL otherwise. */
int dc_retry_after_parse(int64_t *out_ms, const char *text, size_t len, int64_t now_ms);

/* The backoff before the next try, after `attempts` sends (>= 1): min(max, base * 2^(a-1)),
 * with half of it jittered by `rnd` ("equal jitter"). */
int64_t dc_backoff_ms(const struct dc_retry_policy *p, int attempts, uint64_t rnd);

#endif
