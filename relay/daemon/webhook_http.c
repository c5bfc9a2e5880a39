/* POST /github/webhook. Before authentication only cheap, bounded checks run: the content type,
 * the declared length (413 past WEBHOOK_BODY_MAX), the presence and size of the GitHub headers
 * (400). The body is read into a buffer capped at WEBHOOK_BODY_MAX, then the signature is
 * verified in constant time (malformed or missing 400, wrong 401), and only then is the JSON
 * parsed (webhook.c). An accepted delivery is committed through the group commit before the
 * 202 is sent. */
#include <microhttpd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/hmac.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/num.h"
#include "daemon.h"
#include "http_priv.h"
#include "webhook.h"

struct wh_ctx {
	struct http_upload up; /* first: how http.c frees it */
	struct buf body;
	bool too_big;
	uint64_t start_ns;
	char event[WEBHOOK_PREAUTH_HEADER_MAX + 1];
	char delivery[WEBHOOK_PREAUTH_HEADER_MAX + 1];
	char sig[WEBHOOK_SIGNATURE_HEADER_MAX + 1];
};

void http__webhook_free(void *p)
{
	struct wh_ctx *w = p;
	if (!w)
		return;
	buf_finish(&w->body);
	free(w);
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static bool is_json_content_type(const char *t)
{
	if (!t || strncasecmp(t, "application/json", 16) != 0)
		return false;
	return t[16] == 0 || t[16] == ';' || t[16] == ' ';
}

static enum MHD_Result reject(struct daemon *d, struct MHD_Connection *c, const char *event,
			      unsigned status, const char *msg)
{
	metrics_delivery(&d->metrics, metrics_event(event ? event : ""), M_OUT_REJECTED);
	return http__error(c, status, msg);
}

/* The checks that run on the headers alone; 0 with `w` filled, or an answer was queued. */
static enum MHD_Result first_call(struct daemon *d, struct MHD_Connection *c, void **con_cls)
{
	const char *event = header(c, "X-GitHub-Event");
	if (!is_json_content_type(header(c, MHD_HTTP_HEADER_CONTENT_TYPE)))
		return reject(d, c, event, 415, "Content-Type must be application/json");
	const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
	int64_t declared;
	if (cl && (num_parse_i64(&declared, cl, 0, INT64_MAX) < 0 ||
		   (uint64_t)declared > WEBHOOK_BODY_MAX))
		return reject(d, c, event, 413, "body larger than 25 MB");
	const char *delivery = header(c, "X-GitHub-Delivery"),
		   *sig = header(c, "X-Hub-Signature-256");
	if (!event || !*event || strlen(event) > WEBHOOK_PREAUTH_HEADER_MAX)
		return reject(d, c, event, 400, "X-GitHub-Event missing or too long");
	if (!delivery || !*delivery || strlen(delivery) > WEBHOOK_PREAUTH_HEADER_MAX)
		return reject(d, c, event, 400, "X-GitHub-Delivery missing or too long");
	if (!sig)
		return reject(d, c, event, 400, "X-Hub-Signature-256 missing");
	if (strlen(sig) > WEBHOOK_SIGNATURE_HEADER_MAX)
		return reject(d, c, event, 400, "X-Hub-Signature-256 malformed");
	struct wh_ctx *w = calloc(1, sizeof(*w));
	if (!w)
		return http__error(c, 503, "out of memory");
	w->start_ns = clock_mono_ns();
	w->up.destroy = http__webhook_free;
	buf_init(&w->body, WEBHOOK_BODY_MAX);
	strcpy(w->event, event);
	strcpy(w->delivery, delivery);
	strcpy(w->sig, sig);
	*con_cls = w;
	return MHD_YES;
}

/* What the dashboard messages of a dispatched job echo: the client_payload's event_type,
 * delivery_id and payload (webhook_decide() has checked their types), compact JSON. */
static char *dispatch_json(const char *body, size_t len)
{
	json_t *root = jx_loadb(body, len, WEBHOOK_BODY_MAX);
	const json_t *cp = root ? jx_get(root, "client_payload") : NULL;
	json_t *out = cp ? json_pack("{s:O?, s:O?, s:O?}", "event_type", jx_get(cp, "event_type"),
				     "delivery_id", jx_get(cp, "delivery_id"), "payload",
				     jx_get(cp, "payload"))
			 : NULL;
	char *text = out ? jx_dumps(out) : NULL;
	json_decref(out);
	json_decref(root);
	return text;
}

static enum MHD_Result answer_decision(struct daemon *d, struct MHD_Connection *c, struct wh_ctx *w,
				       struct wh_decision *dec)
{
	enum m_event ev = metrics_event(w->event);
	if (dec->outcome == WH_BAD) {
		metrics_delivery(&d->metrics, ev, M_OUT_REJECTED);
		return http__error(c, 400, dec->reason);
	}
	if (dec->outcome == WH_PING) {
		metrics_delivery(&d->metrics, ev, M_OUT_ACCEPTED);
		return http__reply_json(c, 200, json_pack("{s:b,s:s}", "ok", 1, "event", "ping"));
	}
	if (dec->outcome == WH_IGNORED) {
		metrics_delivery(&d->metrics, ev, M_OUT_IGNORED);
		return http__reply_json(
		    c, 200, json_pack("{s:b,s:s}", "ignored", 1, "reason", dec->reason));
	}
	struct intake_item it;
	webhook_item(&it, dec);
	struct job_spec js;
	char *dispatch = NULL;
	if (it.job && strcmp(w->event, "repository_dispatch") == 0 &&
	    (dispatch = dispatch_json(buf_str(&w->body), w->body.len))) {
		js = *it.job;
		js.dispatch = dispatch;
		it.job = &js;
	}
	int src = intake_submit(d->intake, &it);
	free(dispatch);
	if (src < 0) {
		metrics_delivery(&d->metrics, ev, M_OUT_ERROR);
		log_error("webhook %s: %s", w->delivery, err_last());
		return http__error(c, 503, "the delivery could not be stored; retry");
	}
	metrics_delivery(&d->metrics, ev, it.duplicate ? M_OUT_DUPLICATE : M_OUT_ACCEPTED);
	log_debug("webhook %s (%s): job %lld%s", w->delivery, dec->event, (long long)it.job_id,
		  it.duplicate ? " (duplicate)" : "");
	if (it.duplicate)
		return http__reply_json(
		    c, 200,
		    json_pack("{s:I,s:b}", "job_id", (json_int_t)it.job_id, "duplicate", 1));
	return http__reply_json(c, 202, json_pack("{s:I}", "job_id", (json_int_t)it.job_id));
}

static enum MHD_Result last_call(struct daemon *d, struct MHD_Connection *c, struct wh_ctx *w)
{
	if (w->too_big)
		return reject(d, c, w->event, 413, "body larger than 25 MB");
	struct cfg_ref *cfg = daemon_cfg_get(d);
	int rc = hmac_sig_verify(cfg->c.secret, cfg->c.secret_len, buf_str(&w->body), w->body.len,
				 w->sig, strlen(w->sig));
	enum MHD_Result r;
	if (rc == ERR_INVAL) {
		r = reject(d, c, w->event, 400, "X-Hub-Signature-256 malformed");
	} else if (rc < 0) {
		r = reject(d, c, w->event, 401, "signature does not match");
	} else {
		struct wh_rules rules = {
			.repo = cfg->c.upstream_repo,
			.dispatch_repo = cfg->c.webhook_dispatch_repo,
			.branches = cfg->c.branches.v,
			.n_branches = cfg->c.branches.n,
			.tags = cfg->c.accept_tags,
			.ciflow = cfg->c.accept_ciflow,
		};
		struct wh_decision *dec = malloc(sizeof(*dec));
		if (!dec) {
			r = http__error(c, 503, "out of memory");
		} else {
			webhook_decide(dec, &rules, w->event, w->delivery, buf_str(&w->body),
				       w->body.len);
			r = answer_decision(d, c, w, dec);
			free(dec);
		}
	}
	daemon_cfg_put(cfg);
	metrics_observe_us(&d->metrics.webhook_latency, (clock_mono_ns() - w->start_ns) / 1000);
	return r;
}

enum MHD_Result http__webhook(struct daemon *d, struct MHD_Connection *c, const char *method,
			      const char *upload, size_t *upload_size, void **con_cls)
{
	struct wh_ctx *w = *con_cls;
	if (!w) {
		if (strcmp(method, "POST") != 0)
			return http__error(c, 405, "POST only");
		return first_call(d, c, con_cls);
	}
	if (*upload_size > 0) {
		if (!w->too_big && buf_append(&w->body, upload, *upload_size) < 0) {
			w->too_big = true; /* keep reading, answer 413 at the end */
			buf_finish(&w->body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return last_call(d, c, w);
}
