/* Tests of common/err: thread-local detail, codes, prefixing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "common/err.h"

Test(err, set_returns_code_and_keeps_detail)
{
	err_clear();
	cr_expect_eq(err_last_code(), 0);
	cr_expect_str_empty(err_last());
	int rc = err_set(ERR_INVAL, "bad %s at %d", "thing", 7);
	cr_expect_eq(rc, ERR_INVAL);
	cr_expect_eq(err_last_code(), ERR_INVAL);
	cr_expect_str_eq(err_last(), "bad thing at 7");
	err_clear();
	cr_expect_str_empty(err_last());
}

Test(err, errno_text_appended)
{
	errno = ENOENT;
	err_set_errno(ERR_IO, "open x");
	cr_expect_str_eq(err_last(), "open x: No such file or directory");
	cr_expect_eq(errno, ENOENT, "err_set_errno must not clobber errno");
}

Test(err, prefix_adds_context_and_keeps_code)
{
	err_set(ERR_LIMIT, "too big");
	int rc = err_prefix("file %s:%d", "a.yaml", 3);
	cr_expect_eq(rc, ERR_LIMIT);
	cr_expect_str_eq(err_last(), "file a.yaml:3: too big");
}

Test(err, prefix_with_its_own_separator_gets_one_colon)
{
	err_set(ERR_INVAL, "bad key");
	err_prefix("--history %s: ", "h.json");
	cr_expect_str_eq(err_last(), "--history h.json: bad key");
	err_prefix("stage 3:");
	cr_expect_str_eq(err_last(), "stage 3: --history h.json: bad key");
	err_prefix("http://x:");
	cr_expect_str_eq(err_last(), "http://x: stage 3: --history h.json: bad key");
}

Test(err, long_detail_is_cut_not_overflowed)
{
	char big[4000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	err_set(ERR_INVAL, "%s", big);
	cr_expect_lt(strlen(err_last()), sizeof(big));
	err_prefix("%s", big);
	cr_expect_lt(strlen(err_last()), sizeof(big));
}

static void *other_thread(void *arg)
{
	(void)arg;
	cr_expect_str_empty(err_last(), "a new thread starts with no error");
	err_set(ERR_AUTH, "thread's own");
	return NULL;
}

Test(err, detail_is_per_thread)
{
	err_set(ERR_INVAL, "main's");
	pthread_t t;
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, NULL);
	cr_expect_str_eq(err_last(), "main's");
	cr_expect_eq(err_last_code(), ERR_INVAL);
}

Test(err, code_names)
{
	cr_expect_str_eq(err_code_name(ERR_LIMIT), "limit exceeded");
	cr_expect_str_eq(err_code_name(ERR_AUTH), "authentication failed");
	cr_expect_str_eq(err_code_name(ERR_OK), "ok");
	cr_expect_str_eq(err_code_name(-99), "error");
}
