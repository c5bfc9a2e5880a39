/* The transport: one libcurl easy handle per target, reused for every post so the connection
 * is kept alive. Connect and total timeouts, TLS verification always on (an extra CA file may be
 * given), proxies from the environment (libcurl's default), http and https only, no redirects.
 * Each post carries Content-Type: application/json, the Idempotency-Key, a User-Agent with the
 * version, and the target's credential: `Authorization: Bearer <token>` for the CRCR relay,
 * `x-hud-internal-bot: <token>` for HUD. The token lives only in the handle's header list and
 * is wiped when the handle is destroyed; it never reaches a log line or err_last(). */
#ifndef DASHBOARD_CLIENT_TRANSPORT_H
#define DASHBOARD_CLIENT_TRANSPORT_H

#include <stddef.h>

#include "dashboard-client/encode.h"
#include "dashboard-client/retry.h"

struct dc_target_opts {
	const char *url; /* the whole endpoint: .../github/callback or .../api/crcr/results */
	enum dc_format format;
	const char *token;      /* borrowed; copied into the header list */
	const char *ca_file;    /* NULL: the system's store */
	const char *user_agent; /* NULL: "spyre-ci/<version>" must be given by the program */
	long connect_timeout_ms;
	long timeout_ms;
};

struct dc_transport;

/* Calls curl_global_init once per process (thread-safe); the program may call it earlier. */
int dc_transport_global_init(void);

int dc_transport_create(struct dc_transport **out, const struct dc_target_opts *o);
void dc_transport_destroy(struct dc_transport *t);

/* Posts `body` with `key` as its Idempotency-Key. Returns 0 when the transfer was attempted
 * (whatever its outcome, which is in *resp: status, transport error, kept body, Retry-After),
 * or a negative code when the post could not even be set up. */
int dc_transport_post(struct dc_transport *t, const char *key, const char *body, size_t len,
		      struct dc_response *resp);

/* Connections opened so far by this handle (1 when keep-alive held). */
long dc_transport_connects(const struct dc_transport *t);

/* Reads a token: the first line of a file (surrounding whitespace dropped), refusing an empty
 * one or one longer than DC_TOKEN_MAX. Errors name the file, never the content. malloc()ed;
 * free it with dc_token_free(), which wipes it. */
int dc_token_read_file(char **out, const char *path);
int dc_token_read_env(char **out, const char *name);
void dc_token_free(char *token);

#endif
