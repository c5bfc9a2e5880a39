/* Fuzz target: every strict number parser on arbitrary bytes. Invariants: a parsed integer
 * prints back to the same digits (no leading zeros or '+' aside), and results respect the
 * requested range. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/num.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[128];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = '\0';

	int64_t i;
	if (num_parse_i64n(&i, (const char *)data, size, -1000000, 1000000) == 0) {
		if (i < -1000000 || i > 1000000)
			abort();
		char back[32];
		snprintf(back, sizeof(back), "%lld", (long long)i);
		int64_t again;
		if (num_parse_i64(&again, back, -1000000, 1000000) != 0 || again != i)
			abort();
	}
	uint64_t u;
	if (num_parse_u64(&u, s, 10, 1u << 30) == 0 && (u < 10 || u > (1u << 30)))
		abort();
	double d;
	if (num_parse_doublen(&d, (const char *)data, size, -1e9, 1e9) == 0 &&
	    !(d >= -1e9 && d <= 1e9))
		abort();
	if (num_parse_bytes(&u, s, 1ull << 40) == 0 && u > (1ull << 40))
		abort();
	int k;
	if (num_parse_int(&k, s, 1, 32) == 0 && (k < 1 || k > 32))
		abort();
	return 0;
}
