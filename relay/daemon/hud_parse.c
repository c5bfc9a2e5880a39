/* The HUD envelope's checks (hud_parse.h). Strings are taken from the parsed JSON as they are;
 * the pages escape them when they show them. */
#include "hud_parse.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/jsonx.h"

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

int hud_msg_parse(struct hud_msg *m, const char *body, size_t len, const char *idem_key, char *why,
		  size_t size)
{
	memset(m, 0, sizeof(*m));
	json_error_t je;
	json_t *env = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(env)) {
		snprintf(why, size, "malformed JSON: %s at line %d column %d",
			 env ? "the body is not an object" : je.text, je.line, je.column);
		json_decref(env);
		return ERR_INVAL;
	}
	const json_t *wf = jx_get(env, "untrusted.callback_payload.workflow");
	int rc = envelope(&m->rec, env, why, size, m->record_key, sizeof(m->record_key));
	if (rc == 0)
		rc = counts(&m->rec, wf, why, size);
	if (rc == 0)
		rc = failed_tests(&m->rec, wf, why, size);
	if (rc < 0) {
		json_decref(env);
		memset(m, 0, sizeof(*m));
		return ERR_INVAL;
	}
	m->env = env;
	snprintf(m->key, sizeof(m->key), "%s#%s", m->record_key, m->rec.status);
	m->rec.record_key = m->record_key;
	m->rec.idem_key = idem_key ? idem_key : m->key;
	return 0;
}

void hud_msg_finish(struct hud_msg *m)
{
	json_decref(m->env);
	m->env = NULL;
}
