/* Encoders for the two wire formats of docs/contracts.md: the CRCR callback (schema version 1)
 * and the HUD results envelope, and the messages of one job in the order
 * they must be delivered, each with the idempotency key that lets a receiver make an
 * at-least-once sender exactly-once. Bodies are compact JSON with sorted keys, so the same job
 * always gives the same bytes (the golden files in tests/fixtures/dashboard/ rely on it). */
#ifndef DASHBOARD_CLIENT_ENCODE_H
#define DASHBOARD_CLIENT_ENCODE_H

#include <jansson.h>
#include <stddef.h>

#include "dashboard-client/job.h"

enum dc_format { DC_FORMAT_CRCR, DC_FORMAT_HUD };
enum dc_status { DC_STATUS_IN_PROGRESS, DC_STATUS_COMPLETED };

const char *dc_format_name(enum dc_format f);
int dc_format_parse(enum dc_format *out, const char *name);
const char *dc_status_name(enum dc_status s);

/* The CRCR callback body for one transition. `r` is needed for completed (NULL for
 * in_progress). On completed, workflow.failed_tests_json is a JSON array (as a string) of the
 * failed tests within HUD's caps: at most HUD_FAILED_TESTS_MAX entries, message and stacktrace
 * cut on a UTF-8 boundary to HUD_FAILED_MESSAGE_MAX and HUD_FAILED_TRACE_MAX bytes, and fewer
 * entries when the whole body would pass HUD_BODY_MAX. NEW reference in *out. */
int dc_callback_build(json_t **out, const struct dc_job *job, enum dc_status status,
		      const struct dc_results *r);
/* The HUD envelope around a callback body (borrowed; the envelope takes its own
 * reference). NEW reference in *out. */
int dc_hud_build(json_t **out, const struct dc_job *job, json_t *callback);

/* One message ready for the outbox. */
struct dc_message {
	char key[48];     /* Idempotency-Key: "sci1-" + 32 hex of SHA-256 over the identity */
	char job_key[48]; /* the same over the job's identity: messages of one job share it */
	int seq;          /* order within the job: 0 in_progress, 1 completed */
	enum dc_format format;
	enum dc_status status;
	char *body; /* malloc()ed, NUL-terminated */
	size_t body_len;
	int attempts; /* filled by the outbox: sends started before this one */
};

void dc_message_finish(struct dc_message *m);

/* The job key every message of `job` in `format` carries (dc_message.job_key): how a store
 * finds one job's messages in an outbox. */
int dc_job_key(char out[48], const struct dc_job *job, enum dc_format format);

/* The messages of `job` in delivery order: in_progress then completed, or only completed for
 * nightly and periodic runs. *out is a malloc()ed array of *n messages (free each with
 * dc_message_finish(), then the array). Every message stays within HUD_BODY_MAX. */
int dc_job_messages(struct dc_message **out, size_t *n, const struct dc_job *job,
		    const struct dc_results *r, enum dc_format format);

/* Copies `in` into a new string of at most `max` bytes, cut on a UTF-8 character boundary
 * (never inside a multi-byte sequence). Returns NULL only when out of memory. */
char *dc_utf8_cut(const char *in, size_t len, size_t max);

#endif
