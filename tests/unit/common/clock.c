/* Tests of common/clock. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"

Test(clock, monotonic_does_not_go_back)
{
	uint64_t a = clock_mono_ns();
	clock_sleep_ms(2);
	uint64_t b = clock_mono_ns();
	cr_expect_geq(b, a + 1000000, "slept at least 1 ms");
	cr_expect_gt(clock_elapsed_s(a, b), 0.0);
	cr_expect_eq(clock_elapsed_s(b, a), 0.0);
}

Test(clock, wall_is_plausible)
{
	int64_t ms = clock_wall_ms();
	cr_expect_gt(ms, 1700000000000LL, "after 2023");
}

Test(clock, iso8601_formats)
{
	char out[CLOCK_ISO8601_LEN + 1];
	cr_assert_eq(clock_format_iso8601(out, sizeof(out), 0, 0), 0);
	cr_expect_str_eq(out, "1970-01-01T00:00:00Z");
	cr_assert_eq(clock_format_iso8601(out, sizeof(out), 1790000000123LL, 1), 0);
	cr_expect_str_eq(out, "2026-09-21T14:13:20.123Z");
	cr_assert_eq(clock_format_iso8601(out, sizeof(out), -1, 1), 0);
	cr_expect_str_eq(out, "1969-12-31T23:59:59.999Z");
	cr_expect_eq(strlen(out), CLOCK_ISO8601_LEN);
}

Test(clock, iso8601_small_buffer_refused)
{
	char out[10];
	cr_expect_eq(clock_format_iso8601(out, sizeof(out), 0, 1), ERR_LIMIT);
}
