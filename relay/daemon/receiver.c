/* POST /api/crcr/results: the built-in dashboard's receiver of HUD envelopes (docs/contracts.md),
 * so that the daemon's outbox can report to the daemon itself, another instance, or
 * a real HUD alike. Before the token only header checks run: the method (405), the content type
 * (415), the declared length (413 past HUD_BODY_MAX) and the token of x-hud-internal-bot, read
 * from dashboard.receiver_token_file at each request and compared in constant time (missing or
 * wrong 401; no file configured 404). Then the body is read into a buffer capped at
 * HUD_BODY_MAX (413), parsed and checked field by field by hud_parse.c (400 naming the field).
 * A message is stored once: by its Idempotency-Key, else by HUD's record key and its status; a
 * repeat is answered 200 "already recorded" with nothing written. Stored text is escaped where
 * it is shown (html.c), never here: the store keeps what was sent. */
#include <microhttpd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/num.h"
#include "daemon.h"
#include "http_priv.h"
#include "hud_parse.h"
#include "store_dash.h"

struct rcv_ctx {
	struct http_upload up; /* first: how http.c frees it */
	struct buf body;
	bool too_big;
	char key[RECEIVER_KEY_MAX + 1];
};

static void rcv_free(void *p)
{
	struct rcv_ctx *r = p;
	buf_finish(&r->body);
	free(r);
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* 0 when `got` equals the configured token; the comparison takes the same time wherever the
 * first difference is. ERR_NOTFOUND when no token file is configured. */
static int token_check(struct daemon *d, const char *got)
{
	struct cfg_ref *cfg = daemon_cfg_get(d);
	char *tok = NULL;
	size_t n = 0;
	int rc = ERR_NOTFOUND;
	if (cfg->c.receiver_token_file && cfg->c.receiver_token_file[0])
		rc = fs_read_file(&tok, &n, cfg->c.receiver_token_file, DC_TOKEN_MAX);
	daemon_cfg_put(cfg);
	if (rc < 0)
		return rc == ERR_NOTFOUND ? rc : ERR_IO;
	while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' '))
		n--;
	size_t g = got ? strlen(got) : 0;
	unsigned diff = (unsigned)(g != n) | (unsigned)(n == 0);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)tok[i] ^ (unsigned char)(i < g ? got[i] : 0);
	memset(tok, 0, n);
	free(tok);
	return diff ? ERR_INVAL : 0;
}

static enum MHD_Result first_call(struct daemon *d, struct MHD_Connection *c, const char *method,
				  void **con_cls)
{
	if (strcmp(method, "POST") != 0)
		return http__error(c, 405, "POST only");
	const char *t = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!t || strncasecmp(t, "application/json", 16) != 0 || (t[16] && t[16] != ';'))
		return http__error(c, 415, "Content-Type must be application/json");
	const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
	int64_t declared;
	if (cl &&
	    (num_parse_i64(&declared, cl, 0, INT64_MAX) < 0 || (uint64_t)declared > HUD_BODY_MAX))
		return http__error(c, 413, "body larger than 2 MB");
	const char *key = header(c, "Idempotency-Key");
	if (key && (!*key || strlen(key) > RECEIVER_KEY_MAX))
		return http__error(c, 400, "Idempotency-Key empty or longer than 128 bytes");
	int rc = token_check(d, header(c, "x-hud-internal-bot"));
	if (rc == ERR_NOTFOUND)
		return http__error(c, 404, "the receiver is off (dashboard.receiver_token_file)");
	if (rc == ERR_IO)
		return http__error(c, 503, "the receiver's token file cannot be read");
	if (rc < 0)
		return http__error(c, 401, "x-hud-internal-bot missing or wrong");
	struct rcv_ctx *r = calloc(1, sizeof(*r));
	if (!r)
		return http__error(c, 503, "out of memory");
	r->up.destroy = rcv_free;
	buf_init(&r->body, HUD_BODY_MAX);
	if (key)
		strcpy(r->key, key);
	*con_cls = r;
	return MHD_YES;
}

static enum MHD_Result store_answer(struct daemon *d, struct MHD_Connection *c,
				    struct hud_record *h)
{
	bool dup = false;
	/* The receiver writes through the read handle under its mutex: messages are few and the
	 * handle is idle between page views. */
	pthread_mutex_lock(&d->read_mu);
	int rc = store_hud_put(d->read_store, &dup, h, clock_wall_ms());
	pthread_mutex_unlock(&d->read_mu);
	if (rc < 0) {
		log_error("receiver: %s", err_last());
		return http__error(c, 503, "the message could not be stored; retry");
	}
	log_info("receiver: %s %s%s", h->record_key, h->status, dup ? " (already recorded)" : "");
	if (dup)
		return http__reply_json(
		    c, 200, json_pack("{s:b,s:s}", "ok", 1, "result", "already recorded"));
	return http__reply_json(c, 202, json_pack("{s:b}", "ok", 1));
}

static enum MHD_Result last_call(struct daemon *d, struct MHD_Connection *c, struct rcv_ctx *r)
{
	if (r->too_big)
		return http__error(c, 413, "body larger than 2 MB");
	struct hud_msg *m = malloc(sizeof(*m));
	char why[RECEIVER_FIELD_MAX * 2];
	if (!m)
		return http__error(c, 503, "out of memory");
	enum MHD_Result ans;
	if (hud_msg_parse(m, buf_str(&r->body), r->body.len, r->key[0] ? r->key : NULL, why,
			  sizeof(why)) < 0)
		ans = http__error(c, 400, why);
	else
		ans = store_answer(d, c, &m->rec);
	hud_msg_finish(m);
	free(m);
	return ans;
}

enum MHD_Result http__receiver(struct daemon *d, struct MHD_Connection *c, const char *method,
			       const char *upload, size_t *upload_size, void **con_cls)
{
	struct rcv_ctx *r = *con_cls;
	if (!r)
		return first_call(d, c, method, con_cls);
	if (*upload_size > 0) {
		if (!r->too_big && buf_append(&r->body, upload, *upload_size) < 0) {
			r->too_big = true; /* keep reading, answer 413 at the end */
			buf_finish(&r->body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return last_call(d, c, r);
}
