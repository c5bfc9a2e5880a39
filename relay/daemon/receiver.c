/* POST /api/crcr/results: the built-in dashboard's receiver of HUD envelopes (CONTRACTS.md
 * section 4), so that the daemon's outbox can report to the daemon itself, another instance, or
 * a real HUD alike. Before the token only header checks run: the method (405), the content type
 * (415), the declared length (413 past HUD_BODY_MAX) and the token of x-hud-internal-bot, read
 * from dashboard.receiver_token_file at each request and compared in constant time (missing or
 * wrong 401; no file configured 404). Then the body is read into a buffer capped at
 * HUD_BODY_MAX (413), parsed and checked field by field (400 naming the field). A message is
 * stored once: by its Idempotency-Key, else by HUD's record key and its status; a repeat is
 * answered 200 "already recorded" with nothing written. Stored text is escaped where it is
 * shown (html.c), never here: the store keeps what was sent. */
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

/* A required string field of at most RECEIVER_FIELD_MAX bytes; NULL with `why` filled. */
static const char *field(const json_t *o, const char *path, char *why, size_t size)
{
	const char *v = jx_get_str(o, path);
	if (!v || !*v || strlen(v) > RECEIVER_FIELD_MAX) {
		snprintf(why, size, "%s must be a non-empty string of at most %d bytes", path,
			 RECEIVER_FIELD_MAX);
		return NULL;
	}
	return v;
}

static bool is_sha(const char *s)
{
	if (!s || strlen(s) != 40)
		return false;
	for (; *s; s++)
		if (!strchr("0123456789abcdef", *s))
			return false;
	return true;
}

/* The upstream commit a message is about, when the payload names one. */
static const char *head_sha(const json_t *payload)
{
	static const char *const paths[] = { "pull_request.head.sha", "after", "head_sha",
					     "client_payload.head_sha" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const char *v = jx_get_str(payload, paths[i]);
		if (is_sha(v))
			return v;
	}
	return NULL;
}

static int counts(struct hud_record *h, const json_t *wf, char *why, size_t size)
{
	static const char *const names[] = { "passed", "failed", "skipped" };
	int64_t *dst[] = { &h->passed, &h->failed, &h->skipped };
	const json_t *tr = jx_get(wf, "test_results");
	for (int i = 0; i < 3; i++) {
		const json_t *v = tr ? json_object_get(tr, names[i]) : NULL;
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			snprintf(why, size, "workflow.test_results.%s must be an integer >= 0",
				 names[i]);
			return ERR_INVAL;
		}
		*dst[i] = json_integer_value(v);
	}
	return 0;
}

static int failed_tests(struct hud_record *h, const json_t *wf, char *why, size_t size)
{
	const json_t *v = jx_get(wf, "failed_tests_json");
	if (!v || json_is_null(v))
		return 0;
	const char *s = json_string_value(v);
	json_t *a = s ? jx_loadb(s, strlen(s), HUD_BODY_MAX) : NULL;
	int ok = json_is_array(a) && json_array_size(a) <= HUD_FAILED_TESTS_MAX;
	for (size_t i = 0; ok && i < json_array_size(a); i++)
		ok = json_is_object(json_array_get(a, i)) &&
		     jx_get_str(json_array_get(a, i), "name") != NULL;
	json_decref(a);
	if (!ok) {
		snprintf(why, size,
			 "workflow.failed_tests_json must be a JSON array (as a string) of at most "
			 "%d objects with a name",
			 HUD_FAILED_TESTS_MAX);
		return ERR_INVAL;
	}
	h->failed_tests = s;
	return 0;
}

static void metrics_of(struct hud_record *h, const json_t *env)
{
	const json_t *q = jx_get(env, "trusted.ci_metrics.queue_time"),
		     *e = jx_get(env, "trusted.ci_metrics.execution_time");
	h->has_queue_time = json_is_number(q) && json_number_value(q) >= 0;
	h->queue_time = h->has_queue_time ? json_number_value(q) : 0;
	h->has_execution_time = json_is_number(e) && json_number_value(e) >= 0;
	h->execution_time = h->has_execution_time ? json_number_value(e) : 0;
}

/* Checks the envelope and fills `h` (pointing into `env`) and HUD's record key `rec`; 0, or
 * ERR_INVAL with `why`. */
static int envelope(struct hud_record *h, const json_t *env, char *why, size_t size, char *rec,
		    size_t rec_size)
{
	const char *repo = field(env, "trusted.verified_repo", why, size);
	const json_t *cb = jx_get(env, "untrusted.callback_payload");
	if (!repo)
		return ERR_INVAL;
	if (!json_is_object(cb) || !json_is_object(jx_get(cb, "workflow"))) {
		snprintf(why, size, "untrusted.callback_payload.workflow must be an object");
		return ERR_INVAL;
	}
	const json_t *wf = jx_get(cb, "workflow");
	const char *ver = jx_get_str(wf, "schema_version");
	if (!ver || strcmp(ver, "1") != 0) {
		snprintf(why, size, "workflow.schema_version must be \"1\"");
		return ERR_INVAL;
	}
	h->status = jx_get_str(wf, "status");
	if (!h->status || (strcmp(h->status, "in_progress") && strcmp(h->status, "completed"))) {
		snprintf(why, size, "workflow.status must be in_progress or completed");
		return ERR_INVAL;
	}
	h->delivery_id = field(cb, "delivery_id", why, size);
	h->workflow = h->delivery_id ? field(wf, "name", why, size) : NULL;
	h->job_name = h->workflow ? field(wf, "job_name", why, size) : NULL;
	const char *check = h->job_name ? field(wf, "check_run_id", why, size) : NULL;
	h->run_id = check ? field(wf, "run_id", why, size) : NULL;
	if (!h->run_id)
		return ERR_INVAL;
	h->conclusion = jx_get_str(wf, "conclusion");
	if (!strcmp(h->status, "completed") && !field(wf, "conclusion", why, size))
		return ERR_INVAL;
	h->head_sha = head_sha(jx_get(cb, "payload"));
	metrics_of(h, env);
	snprintf(rec, rec_size, "%s/%s/%s/%s/%s", repo, h->delivery_id, h->workflow, h->job_name,
		 check);
	return 0;
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
	json_error_t je;
	json_t *env = json_loadb(buf_str(&r->body), r->body.len, JSON_REJECT_DUPLICATES, &je);
	char why[RECEIVER_FIELD_MAX * 2], rec[RECEIVER_FIELD_MAX * 6], key[RECEIVER_FIELD_MAX * 7];
	if (!json_is_object(env)) {
		snprintf(why, sizeof(why), "malformed JSON: %s at line %d column %d",
			 env ? "the body is not an object" : je.text, je.line, je.column);
		json_decref(env);
		return http__error(c, 400, why);
	}
	struct hud_record h = { 0 };
	const json_t *wf = jx_get(env, "untrusted.callback_payload.workflow");
	int rc = envelope(&h, env, why, sizeof(why), rec, sizeof(rec));
	if (rc == 0)
		rc = counts(&h, wf, why, sizeof(why));
	if (rc == 0)
		rc = failed_tests(&h, wf, why, sizeof(why));
	enum MHD_Result ans;
	if (rc < 0) {
		ans = http__error(c, 400, why);
	} else {
		h.record_key = rec;
		snprintf(key, sizeof(key), "%s#%s", rec, h.status);
		h.idem_key = r->key[0] ? r->key : key;
		ans = store_answer(d, c, &h);
	}
	json_decref(env);
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
