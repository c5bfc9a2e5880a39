/* Fuzz target: the pool's pipe protocol as the parent reads it from a worker. Arbitrary bytes go
 * through exec_proto_parse frame by frame, as the parent's reader does; a RESULT frame of the
 * right size is checked with exec_result_check, as the parent does before believing it. The
 * adapter table's parser (a YAML file beside the specs) gets the same bytes. Invariants: a
 * parsed frame lies inside the input and never exceeds EXEC_FRAME_MAX; nothing crashes. */
#include <stdlib.h>
#include <string.h>

#include "executors/adapters.h"
#include "executors/case.h"
#include "executors/proto.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t at = 0;
	while (at < size) {
		uint32_t type, len;
		const unsigned char *payload;
		int used = exec_proto_parse(data + at, size - at, &type, &payload, &len);
		if (used <= 0)
			break;
		if ((size_t)used > size - at || len > EXEC_FRAME_MAX ||
		    payload + len > data + size || payload < data)
			abort();
		if (type == EXEC_FRAME_RESULT && len == sizeof(struct exec_result)) {
			struct exec_result r;
			memcpy(&r, payload, sizeof(r));
			(void)exec_result_check(&r);
		}
		if (type == EXEC_FRAME_CASE && len == sizeof(struct exec_case)) {
			struct exec_case c;
			memcpy(&c, payload, sizeof(c));
			(void)exec_case_check(&c);
		}
		at += (size_t)used;
	}
	struct exec_adapters *t = NULL;
	if (exec_adapters_parse(&t, (const char *)data, size, "fuzz") == 0 && !t)
		abort();
	exec_adapters_destroy(t);
	return 0;
}
