/* Tests of common/jsonx: borrowed lookups, stealing setters, bounded loading. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/jsonx.h"

static const char doc[] = "{\"ref\":\"refs/heads/main\",\"pull_request\":{\"number\":42,"
			  "\"head\":{\"sha\":\"abc\"},\"merged\":true},\"n\":\"7\"}";

Test(jsonx, dotted_lookups)
{
	json_t *o = jx_loadb(doc, strlen(doc), 1 << 20);
	cr_assert_not_null(o, "%s", err_last());
	cr_expect_str_eq(jx_get_str(o, "ref"), "refs/heads/main");
	cr_expect_str_eq(jx_get_str(o, "pull_request.head.sha"), "abc");
	cr_expect_null(jx_get_str(o, "pull_request.head.nope"));
	cr_expect_null(jx_get_str(o, "pull_request.number"), "not a string");
	cr_expect_null(jx_get(o, "ref.deeper"), "a string has no keys");
	int64_t n = 0;
	cr_expect_eq(jx_get_int(&n, o, "pull_request.number"), 0);
	cr_expect_eq(n, 42);
	cr_expect_eq(jx_get_int(&n, o, "n"), ERR_INVAL);
	cr_expect_eq(jx_get_int(&n, o, "missing"), ERR_NOTFOUND);
	cr_expect(jx_get_bool(o, "pull_request.merged", false));
	cr_expect(jx_get_bool(o, "missing", true));
	json_decref(o);
}

Test(jsonx, setters_and_sorted_dump)
{
	json_t *o = json_object();
	cr_assert_eq(jx_set_str(o, "z", "last"), 0);
	cr_assert_eq(jx_set_int(o, "a", -3), 0);
	cr_assert_eq(jx_set_bool(o, "m", true), 0);
	cr_assert_eq(jx_set_str(o, "nul", NULL), 0);
	cr_assert_eq(jx_set_real(o, "r", 0.5), 0);
	json_t *arr = json_array();
	cr_assert_eq(jx_append_new(arr, json_integer(1)), 0);
	cr_assert_eq(jx_set_new(o, "arr", arr), 0); /* arr now owned by o */
	char *s = jx_dumps(o);
	cr_expect_str_eq(s,
			 "{\"a\":-3,\"arr\":[1],\"m\":true,\"nul\":null,\"r\":0.5,\"z\":\"last\"}");
	free(s);
	json_decref(o);
}

Test(jsonx, null_value_is_nomem)
{
	json_t *o = json_object();
	cr_expect_eq(jx_set_new(o, "k", NULL), ERR_NOMEM);
	cr_expect_eq(jx_append_new(o, NULL), ERR_NOMEM);
	json_decref(o);
}

Test(jsonx, load_errors_are_located)
{
	const char *bad = "{\"a\":\n  [1, 2,, 3]}";
	cr_expect_null(jx_loadb(bad, strlen(bad), 1000));
	cr_expect(strstr(err_last(), "line 2") != NULL, "%s", err_last());
	cr_expect_null(jx_loadb(doc, strlen(doc), 10));
	cr_expect_eq(err_last_code(), ERR_LIMIT);
	const char *dup = "{\"a\":1,\"a\":2}";
	cr_expect_null(jx_loadb(dup, strlen(dup), 1000), "duplicate keys are refused");
}

Test(jsonx, deep_nesting_refused)
{
	char deep[1000];
	memset(deep, '[', 500);
	memset(deep + 500, ']', 500);
	cr_expect_null(jx_loadb(deep, sizeof(deep), 10000));
	cr_expect_eq(err_last_code(), ERR_LIMIT);
	const char *instr =
	    "{\"k\":\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}";
	json_t *v = jx_loadb(instr, strlen(instr), 10000);
	cr_expect_not_null(v, "brackets inside strings do not count: %s", err_last());
	json_decref(v);
}
