/* The CRCR callback v1 and the HUD envelope, field by field as docs/contracts.md
 * names them, and the messages of a job with their idempotency keys. */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "dashboard-client/encode.h"

/* Room kept below HUD_BODY_MAX for the envelope around a callback body. */
#define ENVELOPE_ROOM (8 * KIB)

const char *dc_format_name(enum dc_format f)
{
	return f == DC_FORMAT_HUD ? "hud" : "crcr";
}

int dc_format_parse(enum dc_format *out, const char *name)
{
	if (strcmp(name, "crcr") == 0)
		*out = DC_FORMAT_CRCR;
	else if (strcmp(name, "hud") == 0)
		*out = DC_FORMAT_HUD;
	else
		return err_set(ERR_INVAL, "format '%.32s' is neither crcr nor hud", name);
	return 0;
}

const char *dc_status_name(enum dc_status s)
{
	return s == DC_STATUS_COMPLETED ? "completed" : "in_progress";
}

char *dc_utf8_cut(const char *in, size_t len, size_t max)
{
	if (len > max) {
		len = max;
		/* Back off over continuation bytes (10xxxxxx) to the start of the cut character,
		 * then drop that character unless it fits whole. */
		size_t start = len;
		while (start > 0 && ((unsigned char)in[start] & 0xC0) == 0x80)
			start--;
		len = start;
	}
	char *out = malloc(len + 1);
	if (out) {
		memcpy(out, in, len);
		out[len] = '\0';
	}
	return out;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* One failed_tests_json entry; message and stacktrace cut again here so that a caller that
 * filled struct dc_results itself is held to the caps too. */
static json_t *failed_entry(const struct dc_failed_test *t)
{
	json_t *e = json_object();
	char *msg =
	    t->message ? dc_utf8_cut(t->message, strlen(t->message), HUD_FAILED_MESSAGE_MAX) : NULL;
	char *trace = t->stacktrace
			  ? dc_utf8_cut(t->stacktrace, strlen(t->stacktrace), HUD_FAILED_TRACE_MAX)
			  : NULL;
	int rc = e ? 0 : ERR_NOMEM;
	rc = rc ? rc : jx_set_new(e, "name", str_or_null(t->name));
	rc = rc ? rc : jx_set_new(e, "classname", str_or_null(t->classname));
	rc = rc ? rc : jx_set_new(e, "file", str_or_null(t->file));
	rc = rc ? rc : jx_set_new(e, "outcome", str_or_null(t->outcome));
	rc = rc ? rc : jx_set_new(e, "message", str_or_null(msg));
	rc = rc ? rc : jx_set_new(e, "stacktrace", str_or_null(trace));
	free(msg);
	free(trace);
	if (rc) {
		json_decref(e);
		return NULL;
	}
	return e;
}

/* The JSON text of the first `n` failed tests (n within HUD_FAILED_TESTS_MAX). */
static char *failed_tests_text(const struct dc_results *r, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++) {
		if (jx_append_new(arr, failed_entry(&r->failed_tests[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	char *text = arr ? jx_dumps(arr) : NULL;
	json_decref(arr);
	return text;
}

static json_t *test_results(const struct dc_results *r)
{
	return json_pack("{s:I, s:I, s:I}", "passed", (json_int_t)(r ? r->passed : 0), "failed",
			 (json_int_t)(r ? r->failed : 0), "skipped",
			 (json_int_t)(r ? r->skipped : 0));
}

static json_t *workflow_object(const struct dc_job *job, enum dc_status status,
			       const struct dc_results *r)
{
	bool done = status == DC_STATUS_COMPLETED;
	json_t *w = json_object();
	int rc = w ? 0 : ERR_NOMEM;
	rc = rc ? rc : jx_set_str(w, "schema_version", "1");
	rc = rc ? rc : jx_set_str(w, "status", dc_status_name(status));
	rc = rc ? rc : jx_set_str(w, "conclusion", done ? dc_job_conclusion(job, r) : NULL);
	rc = rc ? rc : jx_set_str(w, "name", job->workflow_name);
	rc = rc ? rc : jx_set_str(w, "url", job->url);
	rc = rc ? rc : jx_set_str(w, "run_id", job->run_id);
	rc = rc ? rc : jx_set_str(w, "run_attempt", job->run_attempt);
	rc = rc ? rc : jx_set_str(w, "job_name", job->job_name);
	rc = rc ? rc : jx_set_str(w, "check_run_id", job->check_run_id);
	rc = rc ? rc : jx_set_str(w, "started_at", job->started_at);
	rc = rc ? rc : jx_set_str(w, "completed_at", done ? job->completed_at : NULL);
	rc = rc ? rc : jx_set_new(w, "test_results", test_results(done ? r : NULL));
	rc = rc ? rc : jx_set_str(w, "artifact_url", job->artifact_url);
	if (rc) {
		json_decref(w);
		return NULL;
	}
	return w;
}

/* Sets workflow.failed_tests_json with as many entries as fit HUD_BODY_MAX (less the envelope's
 * room): all of them (up to the cap) when they fit, else halving until they do. */
static int add_failed_tests(json_t *callback, json_t *w, const struct dc_results *r)
{
	size_t n =
	    r->n_failed_tests < HUD_FAILED_TESTS_MAX ? r->n_failed_tests : HUD_FAILED_TESTS_MAX;
	for (;;) {
		char *text = failed_tests_text(r, n);
		if (!text || jx_set_new(w, "failed_tests_json", json_string(text)) != 0) {
			free(text);
			return err_set(ERR_NOMEM, "out of memory encoding failed_tests_json");
		}
		free(text);
		char *whole = jx_dumps(callback);
		if (!whole)
			return ERR_NOMEM;
		size_t len = strlen(whole);
		free(whole);
		if (len <= HUD_BODY_MAX - ENVELOPE_ROOM)
			return 0;
		if (n == 0)
			return err_set(ERR_LIMIT,
				       "the callback is %zu bytes without any failed test, "
				       "more than HUD's %zu",
				       len, (size_t)(HUD_BODY_MAX - ENVELOPE_ROOM));
		n /= 2;
	}
}

int dc_callback_build(json_t **out, const struct dc_job *job, enum dc_status status,
		      const struct dc_results *r)
{
	*out = NULL;
	if (status == DC_STATUS_IN_PROGRESS && dc_event_is_periodic(job->event))
		return err_set(ERR_INVAL, "a %s run sends only completed",
			       dc_event_name(job->event));
	if (status == DC_STATUS_COMPLETED && !r)
		return err_set(ERR_INVAL, "completed needs the job's results");
	json_t *cb = json_object();
	json_t *w = workflow_object(job, status, r);
	int rc = cb && w ? 0 : err_set(ERR_NOMEM, "out of memory");
	rc = rc ? rc : jx_set_str(cb, "event_type", dc_event_name(job->event));
	rc = rc ? rc : jx_set_str(cb, "delivery_id", job->delivery_id);
	rc = rc ? rc : jx_set_new(cb, "payload", json_incref(job->payload));
	if (rc == 0) {
		rc = jx_set_new(cb, "workflow", w); /* cb owns w now; w stays borrowed below */
		if (rc == 0 && status == DC_STATUS_COMPLETED)
			rc = add_failed_tests(cb, w, r);
	} else {
		json_decref(w);
	}
	if (rc) {
		json_decref(cb);
		return rc;
	}
	*out = cb;
	return 0;
}

int dc_hud_build(json_t **out, const struct dc_job *job, json_t *callback)
{
	*out = NULL;
	if (!job->verified_repo || !job->repo_level)
		return err_set(ERR_INVAL, "the HUD format needs hud.verified_repo and "
					  "hud.downstream_repo_level in job.json");
	json_t *metrics = json_object();
	int rc = metrics ? 0 : ERR_NOMEM;
	rc = rc ? rc
		: jx_set_new(metrics, "queue_time",
			     job->has_queue_time ? json_real(job->queue_time) : json_null());
	rc =
	    rc ? rc
	       : jx_set_new(metrics, "execution_time",
			    job->has_execution_time ? json_real(job->execution_time) : json_null());
	json_t *env = rc ? NULL
			 : json_pack("{s:{s:s, s:s, s:o}, s:{s:O}}", "trusted", "verified_repo",
				     job->verified_repo, "downstream_repo_level", job->repo_level,
				     "ci_metrics", metrics, "untrusted", "callback_payload",
				     callback); /* "o" stole metrics, "O" took its own reference */
	if (!env) {
		if (rc)
			json_decref(metrics);
		return err_set(ERR_NOMEM, "out of memory building the HUD envelope");
	}
	*out = env;
	return 0;
}

static void hash_field(EVP_MD_CTX *c, const char *s)
{
	uint32_t n = (uint32_t)(s ? strlen(s) : 0);
	EVP_DigestUpdate(c, &n, sizeof(n));
	if (n)
		EVP_DigestUpdate(c, s, n);
}

/* "sci1-" + 32 hex of SHA-256 over the length-prefixed identity fields (and the status). */
static int identity_key(char out[48], const struct dc_job *job, enum dc_format f,
			const char *status)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		return err_set(ERR_NOMEM, "cannot start SHA-256");
	}
	const char *fields[] = { "sci1",
				 dc_format_name(f),
				 dc_event_name(job->event),
				 job->delivery_id,
				 job->workflow_name,
				 job->run_id,
				 job->run_attempt,
				 job->job_name,
				 job->check_run_id,
				 status };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		hash_field(c, fields[i]);
	int ok = EVP_DigestFinal_ex(c, d, &dlen) == 1 && dlen >= 16;
	EVP_MD_CTX_free(c);
	if (!ok)
		return err_set(ERR_GENERIC, "SHA-256 failed");
	memcpy(out, "sci1-", 5);
	for (int i = 0; i < 16; i++)
		snprintf(out + 5 + 2 * i, 3, "%02x", d[i]);
	return 0;
}

void dc_message_finish(struct dc_message *m)
{
	if (m) {
		free(m->body);
		m->body = NULL;
	}
}

static int one_message(struct dc_message *m, const struct dc_job *job, const struct dc_results *r,
		       enum dc_format f, enum dc_status s)
{
	memset(m, 0, sizeof(*m));
	json_t *cb = NULL, *env = NULL;
	int rc = dc_callback_build(&cb, job, s, s == DC_STATUS_COMPLETED ? r : NULL);
	if (rc == 0 && f == DC_FORMAT_HUD)
		rc = dc_hud_build(&env, job, cb);
	if (rc == 0) {
		m->body = jx_dumps(env ? env : cb);
		rc = m->body ? 0 : ERR_NOMEM;
	}
	json_decref(cb);
	json_decref(env);
	if (rc)
		return rc;
	m->body_len = strlen(m->body);
	if (m->body_len > HUD_BODY_MAX) {
		dc_message_finish(m);
		return err_set(ERR_LIMIT, "a %s message of %zu bytes, more than %zu",
			       dc_format_name(f), m->body_len, (size_t)HUD_BODY_MAX);
	}
	m->format = f;
	m->status = s;
	m->seq = s == DC_STATUS_COMPLETED ? 1 : 0;
	rc = identity_key(m->key, job, f, dc_status_name(s));
	if (rc == 0)
		rc = identity_key(m->job_key, job, f, NULL);
	if (rc)
		dc_message_finish(m);
	return rc;
}

int dc_job_key(char out[48], const struct dc_job *job, enum dc_format format)
{
	return identity_key(out, job, format, NULL);
}

int dc_job_messages(struct dc_message **out, size_t *n, const struct dc_job *job,
		    const struct dc_results *r, enum dc_format format)
{
	*out = NULL;
	*n = 0;
	bool periodic = dc_event_is_periodic(job->event);
	struct dc_message *ms = calloc(2, sizeof(*ms));
	if (!ms)
		return err_set(ERR_NOMEM, "out of memory");
	size_t k = 0;
	int rc = 0;
	if (!periodic)
		rc = one_message(&ms[k++], job, r, format, DC_STATUS_IN_PROGRESS);
	if (rc == 0)
		rc = one_message(&ms[k++], job, r, format, DC_STATUS_COMPLETED);
	if (rc) {
		for (size_t i = 0; i < k; i++)
			dc_message_finish(&ms[i]);
		free(ms);
		return rc;
	}
	*out = ms;
	*n = k;
	return 0;
}
