/* Tests of common/num: strict parsing, the edge cases atoi() gets wrong. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/err.h"
#include "common/num.h"

Test(num, i64_accepts_plain_decimals)
{
	int64_t v;
	cr_expect_eq(num_parse_i64(&v, "0", INT64_MIN, INT64_MAX), 0);
	cr_expect_eq(v, 0);
	cr_expect_eq(num_parse_i64(&v, "-17", INT64_MIN, INT64_MAX), 0);
	cr_expect_eq(v, -17);
	cr_expect_eq(num_parse_i64(&v, "+5", INT64_MIN, INT64_MAX), 0);
	cr_expect_eq(v, 5);
	cr_expect_eq(num_parse_i64(&v, "9223372036854775807", INT64_MIN, INT64_MAX), 0);
	cr_expect_eq(v, INT64_MAX);
	cr_expect_eq(num_parse_i64(&v, "-9223372036854775808", INT64_MIN, INT64_MAX), 0);
	cr_expect_eq(v, INT64_MIN);
}

Test(num, i64_rejects_garbage_and_overflow)
{
	int64_t v = 123;
	const char *bad[] = { "",
			      " 1",
			      "1 ",
			      "1x",
			      "0x10",
			      "--1",
			      "+",
			      "-",
			      "1.0",
			      "1e3",
			      "٣",
			      "\t2",
			      "9223372036854775808",
			      "-9223372036854775809",
			      "99999999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(num_parse_i64(&v, bad[i], INT64_MIN, INT64_MAX), ERR_INVAL, "'%s'",
			     bad[i]);
		cr_expect_neq(err_last()[0], '\0');
	}
	cr_expect_eq(v, 123, "a failed parse leaves the output alone");
}

Test(num, range_is_the_callers)
{
	int v = 0;
	cr_expect_eq(num_parse_int(&v, "32", 1, 32), 0);
	cr_expect_eq(v, 32);
	cr_expect_eq(num_parse_int(&v, "33", 1, 32), ERR_INVAL);
	cr_expect_eq(num_parse_int(&v, "0", 1, 32), ERR_INVAL);
	cr_expect(strstr(err_last(), "out of range [1, 32]") != NULL, "%s", err_last());
	cr_expect_eq(num_parse_int(&v, "4294967297", INT32_MIN, INT32_MAX), ERR_INVAL);
}

Test(num, u64)
{
	uint64_t v;
	cr_expect_eq(num_parse_u64(&v, "18446744073709551615", 0, UINT64_MAX), 0);
	cr_expect_eq(v, UINT64_MAX);
	cr_expect_eq(num_parse_u64(&v, "18446744073709551616", 0, UINT64_MAX), ERR_INVAL);
	cr_expect_eq(num_parse_u64(&v, "-1", 0, UINT64_MAX), ERR_INVAL, "strtoull accepts -1");
	cr_expect_eq(num_parse_u64(&v, "+", 0, UINT64_MAX), ERR_INVAL);
}

Test(num, length_bounded_variant_ignores_what_follows)
{
	int64_t v;
	cr_expect_eq(num_parse_i64n(&v, "123456", 3, 0, 1000), 0);
	cr_expect_eq(v, 123);
	cr_expect_eq(num_parse_i64n(&v,
				    "12\0"
				    "3",
				    4, 0, 1000),
		     ERR_INVAL, "embedded NUL");
	char longtext[200];
	memset(longtext, '1', sizeof(longtext));
	cr_expect_eq(num_parse_i64n(&v, longtext, sizeof(longtext), 0, INT64_MAX), ERR_INVAL);
}

Test(num, doubles)
{
	double d;
	cr_expect_eq(num_parse_double(&d, "1e-3", 0, 1), 0);
	cr_expect_float_eq(d, 1e-3, 1e-18);
	cr_expect_eq(num_parse_double(&d, "-0.5", -1, 1), 0);
	cr_expect_float_eq(d, -0.5, 0);
	cr_expect_eq(num_parse_double(&d, ".5", 0, 1), 0);
	cr_expect_eq(num_parse_double(&d, "5.", 0, 10), 0);
	cr_expect_eq(num_parse_double(&d, "1E+2", 0, 1000), 0);
	cr_expect_float_eq(d, 100.0, 0);
	const char *bad[] = { "",  "inf",   "nan", "-inf", "0x1p3", "1e", "1e+",
			      ".", "1.2.3", " 1",  "1 ",   "1e999", "e5", "--1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(num_parse_double(&d, bad[i], -INFINITY, INFINITY), ERR_INVAL, "'%s'",
			     bad[i]);
	cr_expect_eq(num_parse_double(&d, "2", 0, 1), ERR_INVAL, "range");
}

Test(num, bytes_with_suffixes)
{
	uint64_t v;
	cr_expect_eq(num_parse_bytes(&v, "4096", UINT64_MAX), 0);
	cr_expect_eq(v, 4096);
	cr_expect_eq(num_parse_bytes(&v, "2MiB", UINT64_MAX), 0);
	cr_expect_eq(v, 2u << 20);
	cr_expect_eq(num_parse_bytes(&v, "64K", UINT64_MAX), 0);
	cr_expect_eq(v, 64u << 10);
	cr_expect_eq(num_parse_bytes(&v, "1GiB", UINT64_MAX), 0);
	cr_expect_eq(v, 1ull << 30);
	cr_expect_eq(num_parse_bytes(&v, "2MB", UINT64_MAX), ERR_INVAL);
	cr_expect_eq(num_parse_bytes(&v, "MiB", UINT64_MAX), ERR_INVAL);
	cr_expect_eq(num_parse_bytes(&v, "-1", UINT64_MAX), ERR_INVAL);
	cr_expect_eq(num_parse_bytes(&v, "17179869184TiB", UINT64_MAX), ERR_INVAL, "overflow");
	cr_expect_eq(num_parse_bytes(&v, "3MiB", 2u << 20), ERR_INVAL, "max");
}

Test(num, hexval_every_byte)
{
	const char *digits = "0123456789abcdef", *upper = "ABCDEF";
	for (int c = 0; c < 256; c++) {
		const char *at = c ? strchr(digits, c) : NULL;
		const char *up = c ? strchr(upper, c) : NULL;
		int want = at ? (int)(at - digits) : up ? 10 + (int)(up - upper) : -1;
		cr_assert_eq(num_hexval((char)c), want, "byte %d", c);
	}
}
