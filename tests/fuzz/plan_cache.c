/* Fuzz target: the reader of on-disk plan cache records (files a previous run wrote, so
 * untrusted). Invariants: it never crashes, takes only a record of exactly the right size for
 * exactly the key it was asked about, and what it accepts has a NUL-terminated plan name and a
 * timing without pointers. The input is the record; the key is fixed, so most inputs are
 * refused: the first bytes after the magic decide. */
#include <stdlib.h>
#include <string.h>

#include "../../spyre-emu/src/plan_cache.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct spyre_hw hw;
	if (!hw.cores && spyre_hw_load_default(&hw) != 0)
		abort();
	struct plan_key k;
	const int64_t shapes[2][SPYRE_DIMS_MAX] = { { 64, 64 }, { 64, 64 } };
	const int ndims[2] = { 2, 2 };
	struct spyre_op_params p = { .dim = -1 };
	plan_cache_key(&k, "mm", SPYRE_DTYPE_FLOAT16, 2, shapes, ndims, &p, &hw);
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	char plan[SPYRE_PLAN_NAME_MAX];
	struct spyre_timing t;
	if (plan_cache__decode(buf, size, &k, plan, &t) == 0 &&
	    (!memchr(plan, '\0', sizeof(plan)) || t.critical || t.sched || t.ncores != hw.cores))
		abort();
	free(buf);
	return 0;
}
