/* Fuzz target: what a receiver sends back. The first line is a Retry-After value, the rest a
 * response body. Invariants: Retry-After parses to a delay within [0, DC_RETRY_AFTER_MAX_S]
 * or is refused; the verdict of any status and body is one of the four, and "already
 * recorded" only ever for a 400 after an earlier send. */
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "dashboard-client/retry.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nl = memchr(text, '\n', size);
	size_t first = nl ? (size_t)(nl - text) : size;
	int64_t ms = -1;
	if (dc_retry_after_parse(&ms, text, first, 1790000000000LL) == 0 &&
	    (ms < 0 || ms > (int64_t)DC_RETRY_AFTER_MAX_S * 1000))
		abort();
	char *body = NULL;
	size_t len = nl ? size - first - 1 : 0;
	if (nl) {
		body = malloc(len + 1);
		if (!body)
			return 0;
		memcpy(body, nl + 1, len);
		body[len] = '\0';
	}
	static const long statuses[] = { 0, 200, 204, 301, 400, 401, 408, 409, 429, 500, 503 };
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		struct dc_response r = { .status = statuses[i], .body = body, .body_len = len };
		for (int sent = 0; sent < 2; sent++) {
			enum dc_verdict v = dc_classify(&r, sent);
			if (v == DC_VERDICT_ALREADY && (statuses[i] != 400 || !sent))
				abort();
			if (v > DC_VERDICT_PERMANENT)
				abort();
		}
	}
	free(body);
	return 0;
}
