/* Reading results.jsonl (docs/contracts.md): one JSON object per test, counted into
 * passed / failed / skipped; the tests that did not pass are kept (the first
 * HUD_FAILED_TESTS_MAX, message and stack trace already cut to HUD's caps) for
 * failed_tests_json. The file is read a line at a time with a bounded line, so a huge or broken
 * file costs a bounded amount of memory, and the first bad line is named as file:line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "dashboard-client/encode.h"
#include "dashboard-client/job.h"

static const struct {
	const char *name;
	enum dc_tally tally;
} outcomes[] = {
	{ "passed", DC_TALLY_PASSED },   { "xpassed", DC_TALLY_PASSED },
	{ "failed", DC_TALLY_FAILED },   { "error", DC_TALLY_FAILED },
	{ "crashed", DC_TALLY_FAILED },  { "timed_out", DC_TALLY_FAILED },
	{ "skipped", DC_TALLY_SKIPPED }, { "xfailed", DC_TALLY_SKIPPED },
};

int dc_outcome_tally(enum dc_tally *out, const char *outcome)
{
	for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
		if (strcmp(outcome, outcomes[i].name) == 0) {
			*out = outcomes[i].tally;
			return 0;
		}
	}
	return err_set(ERR_INVAL,
		       "outcome '%.32s' is none of passed, failed, error, skipped, xfailed, "
		       "xpassed, crashed, timed_out",
		       outcome);
}

/* A copy of an optional string member cut to `max` bytes on a UTF-8 boundary; NULL when the
 * member is absent or null. ERR_INVAL when it is there but not a string. */
static int take_str(char **out, const json_t *o, const char *key, size_t max, bool required)
{
	*out = NULL;
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return required ? err_set(ERR_INVAL, "'%s' is missing", key) : 0;
	if (!json_is_string(v))
		return err_set(ERR_INVAL, "'%s' must be a string", key);
	*out = dc_utf8_cut(json_string_value(v), json_string_length(v), max);
	return *out ? 0 : err_set(ERR_NOMEM, "out of memory");
}

static void failed_test_finish(struct dc_failed_test *t)
{
	free(t->name);
	free(t->classname);
	free(t->file);
	free(t->outcome);
	free(t->message);
	free(t->stacktrace);
}

static int keep_failed(struct dc_results *r, const json_t *o, const char *outcome)
{
	if (r->n_failed_tests >= HUD_FAILED_TESTS_MAX)
		return 0; /* counted in r->failed; HUD takes no more entries */
	if (r->n_failed_tests == r->cap_failed_tests) {
		size_t cap = r->cap_failed_tests ? r->cap_failed_tests * 2 : 16;
		void *p = realloc(r->failed_tests, cap * sizeof(*r->failed_tests));
		if (!p)
			return err_set(ERR_NOMEM, "out of memory");
		r->failed_tests = p;
		r->cap_failed_tests = cap;
	}
	struct dc_failed_test t = { 0 };
	int rc = take_str(&t.name, o, "name", DC_URL_MAX, true);
	if (rc == 0)
		rc = take_str(&t.classname, o, "classname", DC_URL_MAX, false);
	if (rc == 0)
		rc = take_str(&t.file, o, "file", DC_URL_MAX, false);
	if (rc == 0)
		rc = take_str(&t.message, o, "message", HUD_FAILED_MESSAGE_MAX, false);
	if (rc == 0)
		rc = take_str(&t.stacktrace, o, "stacktrace", HUD_FAILED_TRACE_MAX, false);
	if (rc == 0 && !(t.outcome = strdup(outcome)))
		rc = err_set(ERR_NOMEM, "out of memory");
	if (rc) {
		failed_test_finish(&t);
		return rc;
	}
	r->failed_tests[r->n_failed_tests++] = t;
	return 0;
}

/* One line: an object with at least a string `name` and a known `outcome`. */
static int parse_line(struct dc_results *r, const char *line, size_t len)
{
	json_t *o = jx_loadb(line, len, DC_RESULTS_LINE_MAX);
	if (!o)
		return err_last_code();
	int rc = 0;
	const char *outcome = jx_get_str(o, "outcome");
	enum dc_tally tally = DC_TALLY_PASSED;
	if (!json_is_object(o))
		rc = err_set(ERR_INVAL, "not a JSON object");
	else if (!json_is_string(json_object_get(o, "name")))
		rc = err_set(ERR_INVAL, "'name' must be a string");
	else if (!outcome)
		rc = err_set(ERR_INVAL, "'outcome' must be a string");
	else
		rc = dc_outcome_tally(&tally, outcome);
	if (rc == 0 && json_object_get(o, "time") && !json_is_number(json_object_get(o, "time")))
		rc = err_set(ERR_INVAL, "'time' must be a number");
	if (rc == 0) {
		if (tally == DC_TALLY_PASSED)
			r->passed++;
		else if (tally == DC_TALLY_SKIPPED)
			r->skipped++;
		else
			r->failed++;
		if (tally == DC_TALLY_FAILED)
			rc = keep_failed(r, o, outcome);
	}
	json_decref(o);
	return rc;
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static int add_line(struct dc_results *r, const char *name, uint64_t lineno, const char *line,
		    size_t len)
{
	if (len > DC_RESULTS_LINE_MAX)
		return err_set(ERR_LIMIT, "%s:%llu: a line of more than %zu bytes", name,
			       (unsigned long long)lineno, (size_t)DC_RESULTS_LINE_MAX);
	if (blank(line, len))
		return 0;
	if (r->lines >= DC_RESULTS_LINES_MAX)
		return err_set(ERR_LIMIT, "%s:%llu: more than %d tests", name,
			       (unsigned long long)lineno, DC_RESULTS_LINES_MAX);
	int rc = parse_line(r, line, len);
	if (rc)
		return err_prefix("%s:%llu", name, (unsigned long long)lineno);
	r->lines++;
	return 0;
}

int dc_results_parse(struct dc_results *r, const char *name, const char *text, size_t len)
{
	uint64_t lineno = 0;
	size_t at = 0;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		int rc = add_line(r, name, ++lineno, text + at, end - at);
		if (rc)
			return rc;
		at = end + 1;
	}
	return 0;
}

/* Reads `path` in chunks into a buffer of one line's bound and hands each complete line to
 * add_line(); a line that does not fit is an error. NUL bytes stay in (Jansson refuses them). */
int dc_results_load(struct dc_results *r, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return err_set_errno(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "%s", path);
	size_t cap = DC_RESULTS_LINE_MAX + 1, have = 0;
	char *buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return err_set(ERR_NOMEM, "out of memory");
	}
	uint64_t lineno = 0;
	int rc = 0, eof = 0;
	while (rc == 0 && !(eof && have == 0)) {
		if (!eof) {
			size_t got = fread(buf + have, 1, cap - have, f);
			have += got;
			if (got == 0 || feof(f))
				eof = 1;
			if (ferror(f))
				rc = err_set_errno(ERR_IO, "%s", path);
		}
		size_t at = 0;
		for (char *nl; rc == 0 && (nl = memchr(buf + at, '\n', have - at));) {
			size_t end = (size_t)(nl - buf);
			rc = add_line(r, path, ++lineno, buf + at, end - at);
			at = end + 1;
		}
		if (rc == 0 && at == 0 && have == cap)
			rc = err_set(ERR_LIMIT, "%s:%llu: a line of more than %zu bytes", path,
				     (unsigned long long)lineno + 1, (size_t)DC_RESULTS_LINE_MAX);
		if (rc == 0 && eof && at < have) { /* the last line has no newline */
			rc = add_line(r, path, ++lineno, buf + at, have - at);
			at = have;
		}
		memmove(buf, buf + at, have - at);
		have -= at;
	}
	free(buf);
	fclose(f);
	return rc;
}

void dc_results_finish(struct dc_results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_failed_tests; i++)
		failed_test_finish(&r->failed_tests[i]);
	free(r->failed_tests);
	memset(r, 0, sizeof(*r));
}

const char *dc_job_conclusion(const struct dc_job *job, const struct dc_results *r)
{
	if (job->conclusion)
		return job->conclusion;
	return r && r->failed ? "failure" : "success";
}
