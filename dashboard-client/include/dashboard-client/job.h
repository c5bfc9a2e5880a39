/* What one finished job reports: its identity and metadata (the run's job.json) and its test
 * outcomes (results.jsonl, one object per test, docs/contracts.md), read from a results
 * directory with every limit checked and every error naming file:line. The encoders (encode.h)
 * turn a job into CRCR callbacks and HUD envelopes. docs/report.md defines the directory. */
#ifndef DASHBOARD_CLIENT_JOB_H
#define DASHBOARD_CLIENT_JOB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the job came from: a webhook relayed by CRCR, or a run on a schedule. */
enum dc_event {
	DC_EVENT_PULL_REQUEST,
	DC_EVENT_PUSH,
	DC_EVENT_NIGHTLY,
	DC_EVENT_PERIODIC,
};

struct dc_job {
	enum dc_event event;
	char *delivery_id;   /* the upstream delivery; for nightly/periodic the upstream SHA */
	json_t *payload;     /* the dispatch payload echoed back (owned; a new reference) */
	char *workflow_name; /* workflow.name */
	char *url;           /* workflow.url: a link to this run */
	char *run_id;        /* strings, though numeric */
	char *run_attempt;
	char *job_name;
	char *check_run_id;
	char *started_at;   /* RFC 3339, set on in_progress */
	char *completed_at; /* RFC 3339, set on completed */
	char *conclusion;   /* NULL: derived from the results (success or failure) */
	char *artifact_url;
	/* The HUD envelope's trusted part (when spyre-ci plays the relay's part). */
	char *verified_repo;
	char *repo_level; /* "L1".."L4" */
	bool has_queue_time, has_execution_time;
	double queue_time, execution_time;
};

/* One test that did not pass, as HUD's failed_tests_json lists it. */
struct dc_failed_test {
	char *name, *classname, *file, *outcome;
	char *message;    /* NULL when the report had none */
	char *stacktrace; /* NULL when the report had none */
};

struct dc_results {
	uint64_t passed, failed, skipped; /* test_results of the completed callback */
	uint64_t lines;                   /* tests read */
	struct dc_failed_test *failed_tests;
	size_t n_failed_tests; /* all of them; the encoder applies HUD's caps */
	size_t cap_failed_tests;
};

/* Which counter an outcome (docs/contracts.md, outcomes) goes to: passed and xpassed are passed;
 * failed, error, crashed and timed_out are failed; skipped and xfailed are skipped. */
enum dc_tally { DC_TALLY_PASSED, DC_TALLY_FAILED, DC_TALLY_SKIPPED };
int dc_outcome_tally(enum dc_tally *out, const char *outcome);

const char *dc_event_name(enum dc_event e);
int dc_event_parse(enum dc_event *out, const char *name);
/* Nightly and periodic runs send only `completed`. */
bool dc_event_is_periodic(enum dc_event e);

/* Parses job.json's text; `name` is the file's name in errors. ERR_INVAL / ERR_LIMIT with
 * "name:line: ..." in err_last(). */
int dc_job_parse(struct dc_job *out, const char *name, const char *text, size_t len);
/* Reads the job file at `path` (a job.json; at most DC_JOB_FILE_MAX bytes), as dc_job_parse. */
int dc_job_load(struct dc_job *out, const char *path);
void dc_job_finish(struct dc_job *job);

/* Adds the lines of a results.jsonl text to `r` (empty lines are allowed). The first bad line
 * stops it with "name:line: ..." in err_last(). */
int dc_results_parse(struct dc_results *r, const char *name, const char *text, size_t len);
/* Reads a results.jsonl file line by line (never the whole file into memory). */
int dc_results_load(struct dc_results *r, const char *path);
void dc_results_finish(struct dc_results *r);

/* The conclusion the completed callback carries: the job's own, else "failure" when a test
 * failed and "success" otherwise. */
const char *dc_job_conclusion(const struct dc_job *job, const struct dc_results *r);

#endif
