/* Spec-name regexes: Python re.fullmatch semantics on PCRE2, the dialect differences that
 * regex.h lists, torch-spyre's plain-identifier test, compile errors and the match limit. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "testspecs/regex.h"

static int fm(const char *pat, const char *s)
{
	struct spec_regex *re;
	int rc = testspecs_regex_create(&re, pat);
	cr_assert_eq(rc, 0, "compile '%s': %s", pat, err_last());
	int m = testspecs_regex_match(re, s, strlen(s));
	testspecs_regex_destroy(re);
	return m;
}

Test(regex, whole_name_only)
{
	cr_assert_eq(fm("test_contig_.*", "test_contig_vs_transposed"), 1);
	cr_assert_eq(fm("test_add", "test_add_x"), 0); /* fullmatch, not re.match */
	cr_assert_eq(fm("add", "test_add"), 0);        /* not re.search either */
	cr_assert_eq(fm("a|ab", "ab"), 1);             /* alternation still ends at the end */
	cr_assert_eq(fm("test_(pointwise|reduction)", "test_reduction"), 1);
	cr_assert_eq(fm("test_(pointwise|reduction)", "test_reductionx"), 0);
}

Test(regex, python_dialect)
{
	cr_assert_eq(fm("a\\Z", "a"), 1);
	cr_assert_eq(fm("a\\Z", "a\n"), 0); /* Python \Z: end of string only */
	cr_assert_eq(fm("a$", "a\n"), 0);   /* fullmatch must consume the newline */
	cr_assert_eq(fm("a\\n?$", "a\n"), 1);
	cr_assert_eq(fm("x{,2}", "xx"), 1); /* Python {,n} is {0,n} */
	cr_assert_eq(fm("x{,2}", ""), 1);
	cr_assert_eq(fm("x{,2}", "xxx"), 0);
	cr_assert_eq(fm("\\u00e9t\\u00e9", "été"), 1);
	cr_assert_eq(fm("(?P<op>add|sub)_(?P=op)", "add_add"), 1);
	cr_assert_eq(fm("(?P<op>add|sub)_(?P=op)", "add_sub"), 0);
	cr_assert_eq(fm("\\w+", "tést_1"), 1); /* \w is Unicode, as in Python 3 */
	cr_assert_eq(fm("a.b", "a\nb"), 0);    /* . stops at newline */
	cr_assert_eq(fm("a.b", "a\rb"), 1);
	cr_assert_eq(fm("\\\\Z", "\\Z"), 1); /* an escaped backslash then Z is literal */
}

Test(regex, compile_error_names_offset_and_message)
{
	struct spec_regex *re = (struct spec_regex *)1;
	cr_assert_eq(testspecs_regex_create(&re, "test_(add"), ERR_INVAL);
	cr_assert_null(re);
	cr_assert(strstr(err_last(), "offset 9"), "%s", err_last());
	cr_assert(strstr(err_last(), "missing closing parenthesis"), "%s", err_last());
	cr_assert_eq(testspecs_regex_create(&re, "a\\u12"), ERR_INVAL);
	cr_assert(strstr(err_last(), "\\u"), "%s", err_last());
}

Test(regex, match_limit_stops_catastrophic_backtracking)
{
	struct spec_regex *re;
	cr_assert_eq(testspecs_regex_create(&re, "(a+)+b"), 0);
	char s[64];
	memset(s, 'a', sizeof s - 1);
	s[sizeof s - 1] = '\0';
	int m = testspecs_regex_match(re, s, strlen(s));
	/* JIT may reject it by its own analysis: either no match or the limit, never a hang. */
	cr_assert(m == 0 || m == ERR_LIMIT, "%d", m);
	testspecs_regex_destroy(re);
}

Test(regex, literal_prefix)
{
	const char *cases[][2] = {
		{ "LxPlanning.*", "LxPlanning" },
		{ "test_ab*", "test_a" },
		{ "a|b", "" },
		{ "(?i)abc", "" },
		{ "test_x", "test_x" },
		{ "ab(c|d)", "ab" },
		{ "test_é?", "test_" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct spec_regex *re;
		cr_assert_eq(testspecs_regex_create(&re, cases[i][0]), 0);
		cr_assert_str_eq(testspecs_regex_literal_prefix(re), cases[i][1], "%s",
				 cases[i][0]);
		cr_assert_str_eq(testspecs_regex_pattern(re), cases[i][0]);
		testspecs_regex_destroy(re);
	}
}

Test(regex, plain_identifier_as_torch_spyre_decides)
{
	cr_assert(testspecs_name_is_plain("test_add"));
	cr_assert(testspecs_name_is_plain("TestTorch"));
	cr_assert(testspecs_name_is_plain("tést"));
	cr_assert(testspecs_name_is_plain("test_add\n")); /* \w+$ allows one final newline */
	cr_assert_not(testspecs_name_is_plain(""));
	cr_assert_not(testspecs_name_is_plain("test_.*"));
	cr_assert_not(testspecs_name_is_plain("TestTorch::test_add"));
	cr_assert_not(testspecs_name_is_plain("test-add"));
	cr_assert_not(testspecs_name_is_plain("a b"));
}
