/* Reading a job's job.json: identity, the dispatch payload to echo, workflow metadata and the
 * HUD envelope's trusted part. Every string is bounded, every error names the file and the
 * field (Jansson's syntax errors name the line and column). docs/report.md is the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "dashboard-client/job.h"

static const char *const event_names[] = {
	[DC_EVENT_PULL_REQUEST] = "pull_request",
	[DC_EVENT_PUSH] = "push",
	[DC_EVENT_NIGHTLY] = "nightly",
	[DC_EVENT_PERIODIC] = "periodic",
};

const char *dc_event_name(enum dc_event e)
{
	return e <= DC_EVENT_PERIODIC ? event_names[e] : "?";
}

int dc_event_parse(enum dc_event *out, const char *name)
{
	for (size_t i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++) {
		if (strcmp(name, event_names[i]) == 0) {
			*out = (enum dc_event)i;
			return 0;
		}
	}
	return err_set(ERR_INVAL,
		       "event_type '%.64s' is none of pull_request, push, nightly, "
		       "periodic",
		       name);
}

bool dc_event_is_periodic(enum dc_event e)
{
	return e == DC_EVENT_NIGHTLY || e == DC_EVENT_PERIODIC;
}

/* A string field: a JSON string (or, for ids GitHub gives as numbers, an integer), non-empty,
 * at most DC_URL_MAX bytes, without NUL. NULL in *out when absent and not required. */
static int get_text(char **out, const char *file, const json_t *obj, const char *key, bool required,
		    bool numeric_ok)
{
	*out = NULL;
	json_t *v = jx_get(obj, key);
	if (!v || json_is_null(v)) {
		if (required)
			return err_set(ERR_INVAL, "%s: %s is missing", file, key);
		return 0;
	}
	char num[32];
	const char *s;
	size_t len;
	if (json_is_string(v)) {
		s = json_string_value(v);
		len = json_string_length(v);
	} else if (numeric_ok && json_is_integer(v) && json_integer_value(v) >= 0) {
		len = (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
				       json_integer_value(v));
		s = num;
	} else {
		return err_set(ERR_INVAL, "%s: %s must be a string%s", file, key,
			       numeric_ok ? " or a non-negative integer" : "");
	}
	if (len == 0)
		return err_set(ERR_INVAL, "%s: %s is empty", file, key);
	if (len > DC_URL_MAX)
		return err_set(ERR_LIMIT, "%s: %s is %zu bytes, more than the limit of %zu", file,
			       key, len, (size_t)DC_URL_MAX);
	if (strlen(s) != len)
		return err_set(ERR_INVAL, "%s: %s contains a NUL character", file, key);
	*out = strdup(s);
	return *out ? 0 : err_set(ERR_NOMEM, "out of memory");
}

/* "2026-10-01T12:00:00Z", optionally with a fraction of a second: what GitHub and HUD read. */
static bool is_rfc3339_utc(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	size_t i = 0;
	for (; shape[i]; i++) {
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return false;
	}
	if (s[i] == '.') {
		size_t digits = 0;
		for (i++; s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
		if (digits == 0 || digits > 9)
			return false;
	}
	return s[i] == 'Z' && s[i + 1] == '\0';
}

static int get_time(char **out, const char *file, const json_t *obj, const char *key, bool required)
{
	int rc = get_text(out, file, obj, key, required, false);
	if (rc == 0 && *out && !is_rfc3339_utc(*out)) {
		rc =
		    err_set(ERR_INVAL, "%s: %s '%.64s' is not a UTC time like 2026-10-01T12:00:00Z",
			    file, key, *out);
		free(*out);
		*out = NULL;
	}
	return rc;
}

static int get_seconds(bool *has, double *out, const char *file, const json_t *obj, const char *key)
{
	json_t *v = jx_get(obj, key);
	*has = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1e9)
		return err_set(ERR_INVAL, "%s: %s must be a number of seconds (0 to 1e9) or null",
			       file, key);
	*has = true;
	*out = json_number_value(v);
	return 0;
}

/* nightly/periodic: delivery_id is the upstream SHA and the payload is built, not echoed. */
static int periodic_identity(struct dc_job *job, const char *file, const json_t *root)
{
	char *sha = NULL, *repo = NULL;
	int rc = get_text(&sha, file, root, "head_sha", true, false);
	if (rc == 0)
		rc = get_text(&repo, file, root, "upstream_repo", false, false);
	if (rc == 0 && strspn(sha, "0123456789abcdef") != strlen(sha))
		rc = err_set(ERR_INVAL, "%s: head_sha must be lowercase hex", file);
	if (rc == 0 && job->delivery_id && strcmp(job->delivery_id, sha) != 0)
		rc = err_set(ERR_INVAL, "%s: delivery_id of a %s run must be its head_sha", file,
			     dc_event_name(job->event));
	if (rc == 0) {
		json_t *p = json_pack("{s:{s:s}, s:s}", "repository", "full_name",
				      repo ? repo : "pytorch/pytorch", "head_sha", sha);
		if (!p)
			rc = err_set(ERR_NOMEM, "out of memory");
		job->payload = p;
		if (rc == 0 && !job->delivery_id) {
			job->delivery_id = sha; /* the job owns it now */
			sha = NULL;
		}
	}
	free(sha);
	free(repo);
	return rc;
}

static int parse_identity(struct dc_job *job, const char *file, const json_t *root)
{
	char *ev = NULL;
	int rc = get_text(&ev, file, root, "event_type", true, false);
	if (rc == 0 && dc_event_parse(&job->event, ev) != 0)
		rc = err_prefix("%s", file);
	free(ev);
	if (rc)
		return rc;
	bool periodic = dc_event_is_periodic(job->event);
	rc = get_text(&job->delivery_id, file, root, "delivery_id", !periodic, false);
	if (rc)
		return rc;
	if (periodic)
		return periodic_identity(job, file, root);
	json_t *p = jx_get(root, "payload");
	if (!json_is_object(p))
		return err_set(ERR_INVAL, "%s: payload must be the dispatch payload (an object)",
			       file);
	job->payload = json_incref(p);
	return 0;
}

static int parse_workflow(struct dc_job *job, const char *file, const json_t *root)
{
	const json_t *w = jx_get(root, "workflow");
	if (!json_is_object(w))
		return err_set(ERR_INVAL, "%s: workflow must be an object", file);
	int rc = 0;
	struct {
		char **dst;
		const char *key;
		bool required, numeric;
	} f[] = {
		{ &job->workflow_name, "workflow.name", true, false },
		{ &job->url, "workflow.url", true, false },
		{ &job->run_id, "workflow.run_id", true, true },
		{ &job->run_attempt, "workflow.run_attempt", true, true },
		{ &job->job_name, "workflow.job_name", true, false },
		{ &job->check_run_id, "workflow.check_run_id", true, true },
		{ &job->artifact_url, "workflow.artifact_url", true, false },
		{ &job->conclusion, "workflow.conclusion", false, false },
	};
	for (size_t i = 0; rc == 0 && i < sizeof(f) / sizeof(f[0]); i++)
		rc = get_text(f[i].dst, file, root, f[i].key, f[i].required, f[i].numeric);
	if (rc == 0)
		rc = get_time(&job->started_at, file, root, "workflow.started_at", true);
	if (rc == 0)
		rc = get_time(&job->completed_at, file, root, "workflow.completed_at", true);
	return rc;
}

static int parse_hud(struct dc_job *job, const char *file, const json_t *root)
{
	if (!jx_get(root, "hud"))
		return 0;
	if (!json_is_object(jx_get(root, "hud")))
		return err_set(ERR_INVAL, "%s: hud must be an object", file);
	int rc = get_text(&job->verified_repo, file, root, "hud.verified_repo", true, false);
	if (rc == 0)
		rc = get_text(&job->repo_level, file, root, "hud.downstream_repo_level", true,
			      false);
	if (rc == 0 && !(strlen(job->repo_level) == 2 && job->repo_level[0] == 'L' &&
			 job->repo_level[1] >= '1' && job->repo_level[1] <= '4'))
		rc = err_set(ERR_INVAL, "%s: hud.downstream_repo_level must be L1, L2, L3 or L4",
			     file);
	if (rc == 0)
		rc = get_seconds(&job->has_queue_time, &job->queue_time, file, root,
				 "hud.queue_time");
	if (rc == 0)
		rc = get_seconds(&job->has_execution_time, &job->execution_time, file, root,
				 "hud.execution_time");
	return rc;
}

int dc_job_parse(struct dc_job *out, const char *name, const char *text, size_t len)
{
	memset(out, 0, sizeof(*out));
	json_t *root = jx_loadb(text, len, DC_JOB_FILE_MAX);
	if (!root)
		return err_prefix("%s", name);
	int rc = json_is_object(root) ? 0 : err_set(ERR_INVAL, "%s: not a JSON object", name);
	if (rc == 0)
		rc = parse_identity(out, name, root);
	if (rc == 0)
		rc = parse_workflow(out, name, root);
	if (rc == 0)
		rc = parse_hud(out, name, root);
	json_decref(root);
	if (rc)
		dc_job_finish(out);
	return rc;
}

int dc_job_load(struct dc_job *out, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	memset(out, 0, sizeof(*out));
	int rc = fs_read_file(&text, &len, path, DC_JOB_FILE_MAX);
	if (rc)
		return err_prefix("%s", path);
	rc = dc_job_parse(out, path, text, len);
	free(text);
	return rc;
}

void dc_job_finish(struct dc_job *job)
{
	if (!job)
		return;
	char *strs[] = { job->delivery_id,  job->workflow_name, job->url,
			 job->run_id,       job->run_attempt,   job->job_name,
			 job->check_run_id, job->started_at,    job->completed_at,
			 job->conclusion,   job->artifact_url,  job->verified_repo,
			 job->repo_level };
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		free(strs[i]);
	json_decref(job->payload);
	memset(job, 0, sizeof(*job));
}
