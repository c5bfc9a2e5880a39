/* Fuzz target: a results directory as `spyre-ci report` reads it, from arbitrary bytes. The
 * input is job.json and results.jsonl separated by a line "----". Invariants: parsing never
 * crashes; when both parse, every message encodes to valid JSON within HUD's 2 MiB, its
 * failed_tests_json within HUD's caps, in_progress before completed. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/limits.h"
#include "dashboard-client/encode.h"
#include "dashboard-client/job.h"
#include "fuzz.h"

static void check_message(const struct dc_message *m)
{
	if (m->body_len > HUD_BODY_MAX || strlen(m->body) != m->body_len)
		abort();
	json_t *b = jx_loadb(m->body, m->body_len, HUD_BODY_MAX);
	if (!b)
		abort(); /* the encoder wrote something that is not JSON */
	json_t *cb = jx_get(b, "untrusted.callback_payload");
	const char *ft = jx_get_str(cb ? cb : b, "workflow.failed_tests_json");
	if (ft) {
		json_t *arr = jx_loadb(ft, strlen(ft), HUD_BODY_MAX);
		if (!json_is_array(arr) || json_array_size(arr) > HUD_FAILED_TESTS_MAX)
			abort();
		for (size_t i = 0; i < json_array_size(arr); i++) {
			json_t *e = json_array_get(arr, i);
			json_t *msg = json_object_get(e, "message"),
			       *tr = json_object_get(e, "stacktrace");
			if ((msg && json_string_length(msg) > HUD_FAILED_MESSAGE_MAX) ||
			    (tr && json_string_length(tr) > HUD_FAILED_TRACE_MAX))
				abort();
		}
		json_decref(arr);
	}
	json_decref(b);
}

static const char *find_separator(const char *text, size_t size)
{
	for (size_t i = 0; i + 6 <= size; i++)
		if (memcmp(text + i, "\n----\n", 6) == 0)
			return text + i;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *sep = find_separator(text, size);
	size_t job_len = sep ? (size_t)(sep - text) : size;
	struct dc_results r = { 0 };
	if (sep)
		dc_results_parse(&r, "results.jsonl", sep + 6, size - job_len - 6);
	if (r.n_failed_tests > HUD_FAILED_TESTS_MAX || r.n_failed_tests > r.failed)
		abort();
	struct dc_job job;
	if (dc_job_parse(&job, "job.json", text, job_len) == 0) {
		for (int f = 0; f < 2; f++) {
			struct dc_message *ms = NULL;
			size_t n = 0;
			if (dc_job_messages(&ms, &n, &job, &r, (enum dc_format)f) != 0)
				continue;
			for (size_t i = 0; i < n; i++) {
				check_message(&ms[i]);
				if (i > 0 && ms[i].seq <= ms[i - 1].seq)
					abort();
				dc_message_finish(&ms[i]);
			}
			free(ms);
		}
		dc_job_finish(&job);
	}
	dc_results_finish(&r);
	return 0;
}
