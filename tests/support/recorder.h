/* A recording HTTP server for tests: libmicrohttpd on 127.0.0.1 with a free port, one thread
 * per connection. It records every request (method, path, the headers that matter, the body),
 * answers like the CRCR relay (200 {"ok":true}, or 400 "invalid state transition" for an
 * Idempotency-Key it has accepted already), checks a token when told to, and can be told to
 * fail the next N requests in one of the ways a real receiver fails. */
#ifndef TESTS_SUPPORT_RECORDER_H
#define TESTS_SUPPORT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>

enum rec_fault {
	REC_OK = 0,
	REC_500,   /* 500 with a body */
	REC_HANG,  /* accept the message, then answer only after `param` ms */
	REC_429,   /* 429 with Retry-After: `text` */
	REC_CLOSE, /* accept the message, then close the connection mid-response */
	REC_400,   /* 400 with `text` as the body (a schema error: permanent) */
	REC_401,   /* 401 */
};

struct rec_request {
	int seq;
	char method[8];
	char path[256];
	char idem[128];  /* Idempotency-Key */
	char auth[512];  /* Authorization or x-hud-internal-bot, whichever came */
	char agent[128]; /* User-Agent */
	char ctype[64];  /* Content-Type */
	char *body;      /* owned by the recorder */
	size_t body_len;
	int status;         /* what the recorder answered (0: the connection was dropped) */
	bool accepted;      /* recorded as delivered */
	unsigned long conn; /* which connection it came on */
};

struct recorder;

struct recorder *recorder_start(void);
void recorder_stop(struct recorder *r);
int recorder_port(const struct recorder *r);
/* "http://127.0.0.1:PORT" + path into out. */
void recorder_url(const struct recorder *r, const char *path, char *out, size_t size);

/* The next `count` requests fail this way. `param`: ms for REC_HANG; `text`: the Retry-After
 * value for REC_429, the body for REC_400. Faults queue up in the order given. */
void recorder_fail(struct recorder *r, enum rec_fault f, int count, int param, const char *text);
/* Requests whose header `name` is not exactly `value` get 401 (name NULL: no check). */
void recorder_require(struct recorder *r, const char *name, const char *value);
/* Off: a repeated Idempotency-Key is accepted again (a receiver without dedup). */
void recorder_dedup(struct recorder *r, bool on);

size_t recorder_count(struct recorder *r);
/* A copy of request i (body shared with the recorder: valid until recorder_stop). */
struct rec_request recorder_get(struct recorder *r, size_t i);
unsigned long recorder_connections(struct recorder *r);
/* Waits until no connection is open (their threads done with them), at most `timeout_ms`:
 * 0, or -1 when one stays open. A test that forks calls it first: a child forked while another
 * thread holds an allocator's lock (ASan's allocator has no fork handler) deadlocks at its
 * first malloc. */
int recorder_wait_idle(struct recorder *r, int timeout_ms);
/* Accepted requests with this Idempotency-Key. */
int recorder_accepted(struct recorder *r, const char *idem);

#endif
