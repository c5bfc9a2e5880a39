/* Tests of common/buf: growth, the hard maximum, formatting, detach. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"

Test(buf, empty_is_empty_string)
{
	struct buf b;
	buf_init(&b, 100);
	cr_expect_str_eq(buf_str(&b), "");
	cr_expect_eq(b.len, 0);
	buf_finish(&b);
}

Test(buf, appends_and_terminates)
{
	struct buf b;
	buf_init(&b, 1000);
	cr_assert_eq(buf_append(&b, "abc", 3), 0);
	cr_assert_eq(buf_append_char(&b, '-'), 0);
	cr_assert_eq(buf_append_str(&b, "def"), 0);
	cr_assert_eq(buf_appendf(&b, "%d/%s", 42, "x"), 0);
	cr_expect_str_eq(buf_str(&b), "abc-def42/x");
	cr_expect_eq(b.len, 11);
	buf_reset(&b);
	cr_expect_str_eq(buf_str(&b), "");
	buf_finish(&b);
}

Test(buf, grows_across_many_appends)
{
	struct buf b;
	buf_init(&b, 1 << 20);
	for (int i = 0; i < 10000; i++)
		cr_assert_eq(buf_appendf(&b, "%04d", i % 10000), 0);
	cr_expect_eq(b.len, 40000);
	cr_expect_eq(memcmp(b.data + 39996, "9999", 4), 0);
	buf_finish(&b);
}

Test(buf, refuses_to_grow_past_max)
{
	struct buf b;
	buf_init(&b, 10);
	cr_assert_eq(buf_append(&b, "0123456789", 10), 0, "exactly max fits");
	cr_expect_eq(buf_append_char(&b, 'x'), ERR_LIMIT);
	cr_expect_eq(b.len, 10, "a refused append appends nothing");
	cr_expect_str_eq(buf_str(&b), "0123456789");
	cr_expect_eq(err_last_code(), ERR_LIMIT);
	buf_finish(&b);
}

Test(buf, refused_append_is_atomic)
{
	struct buf b;
	buf_init(&b, 8);
	cr_assert_eq(buf_append_str(&b, "abcd"), 0);
	cr_expect_eq(buf_append_str(&b, "efghi"), ERR_LIMIT);
	cr_expect_eq(buf_appendf(&b, "%s", "123456"), ERR_LIMIT);
	cr_expect_str_eq(buf_str(&b), "abcd");
	buf_finish(&b);
}

Test(buf, huge_request_does_not_wrap)
{
	struct buf b;
	buf_init(&b, SIZE_MAX);
	cr_assert_eq(buf_append_str(&b, "ab"), 0);
	cr_expect_eq(buf_reserve(&b, SIZE_MAX - 1), ERR_LIMIT);
	cr_expect_eq(buf_reserve(&b, SIZE_MAX), ERR_LIMIT);
	buf_finish(&b);
}

Test(buf, detach_hands_over)
{
	struct buf b;
	buf_init(&b, 100);
	char *empty = buf_detach(&b);
	cr_expect_str_eq(empty, "");
	free(empty);
	buf_append_str(&b, "owned");
	char *s = buf_detach(&b);
	cr_expect_str_eq(s, "owned");
	cr_expect_null(b.data);
	cr_expect_eq(b.len, 0);
	free(s);
	buf_finish(&b);
}
