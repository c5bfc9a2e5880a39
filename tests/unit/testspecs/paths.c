/* Paths: ${TORCH_ROOT} / ${TORCH_DEVICE_ROOT} substitution, normalisation, escapes refused,
 * and the glob matcher (`*`, `?` within a segment, `**` across segments). */
#include <criterion/criterion.h>

#include "common/err.h"
#include "helpers.h"

static void expect_resolves(const char *text, const char *want)
{
	char *out = NULL;
	int rc = testspecs_path_resolve(&test_roots, text, &out);
	cr_expect_eq(rc, 0, "%s: %s", text, err_last());
	if (rc == 0)
		cr_expect_str_eq(out, want, "%s", text);
	free(out);
}

static void expect_refused(const char *text, const char *fragment)
{
	char *out = NULL;
	int rc = testspecs_path_resolve(&test_roots, text, &out);
	cr_expect_eq(rc, ERR_INVAL, "%s resolved to %s", text, out ? out : "?");
	cr_expect(strstr(err_last(), fragment) != NULL, "%s: '%s' lacks '%s'", text, err_last(),
		  fragment);
	cr_expect_null(out);
	free(out);
}

Test(paths, substitution_and_normalisation)
{
	expect_resolves("${TORCH_ROOT}/test/test_ops.py", "/src/pytorch/test/test_ops.py");
	expect_resolves("${TORCH_DEVICE_ROOT}/tests/x.py", "/src/torch-spyre/tests/x.py");
	expect_resolves("${TORCH_ROOT}//test/./a/../b.py", "/src/pytorch/test/b.py");
	expect_resolves("${TORCH_ROOT}", "/src/pytorch");
	expect_resolves("/src/pytorch/test/x.py", "/src/pytorch/test/x.py");
	expect_resolves("${TORCH_ROOT}/test/*.py", "/src/pytorch/test/*.py");
	struct spec_roots slash = { "/src/pytorch/", NULL };
	char *out = NULL;
	cr_expect_eq(testspecs_path_resolve(&slash, "${TORCH_ROOT}/a.py", &out), 0);
	cr_expect_str_eq(out, "/src/pytorch/a.py");
	free(out);
}

Test(paths, escapes_are_refused)
{
	expect_refused("${TORCH_ROOT}/../etc/passwd", "climbs out");
	expect_refused("${TORCH_ROOT}/test/../../x.py", "climbs out");
	expect_refused("${TORCH_DEVICE_ROOT}/a/b/../../../x", "climbs out");
	expect_refused("/etc/passwd", "outside TORCH_ROOT");
	expect_refused("/src/pytorchX/a.py", "outside TORCH_ROOT");
	expect_refused("${HOME}/x", "only a leading");
	expect_refused("${TORCH_ROOT}x/a.py", "expected '/'");
	expect_refused("test/x.py", "relative");
	struct spec_roots none = { NULL, NULL };
	char *out = NULL;
	cr_expect_eq(testspecs_path_resolve(&none, "${TORCH_ROOT}/a.py", &out), ERR_INVAL);
	cr_expect(strstr(err_last(), "not set") != NULL);
}

Test(paths, glob_matching)
{
	cr_expect(testspecs_glob_match("/r/test/*.py", "/r/test/test_ops.py"));
	cr_expect(!testspecs_glob_match("/r/test/*.py", "/r/test/sub/test_ops.py"));
	cr_expect(testspecs_glob_match("/r/test/**/*.py", "/r/test/test_ops.py"));
	cr_expect(testspecs_glob_match("/r/test/**/*.py", "/r/test/a/b/c/test_ops.py"));
	cr_expect(testspecs_glob_match("/r/**", "/r/a/b"));
	cr_expect(testspecs_glob_match("/r/test/test_?.py", "/r/test/test_a.py"));
	cr_expect(!testspecs_glob_match("/r/test/test_?.py", "/r/test/test_ab.py"));
	cr_expect(
	    testspecs_glob_match("/r/test/test_*_ufuncs.py", "/r/test/test_binary_ufuncs.py"));
	cr_expect(!testspecs_glob_match("/r/test/*.py", "/r/test/x.pyc"));
	cr_expect(testspecs_glob_match("/r/x.py", "/r/x.py"));
	cr_expect(!testspecs_glob_match("/r/x.py", "r/x.py"));
	cr_expect(testspecs_glob_match("/r/**/inductor/*", "/r/tests/inductor/test_a.py"));
	cr_expect(!testspecs_glob_match("/r/**/inductor/*", "/r/tests/inductor"));
	cr_expect(testspecs_path_is_glob("${TORCH_ROOT}/test/*.py"));
	cr_expect(!testspecs_path_is_glob("${TORCH_ROOT}/test/a.py"));
}

Test(paths, glob_is_bounded_on_hostile_patterns)
{
	char pat[600], s[600];
	memset(pat, 0, sizeof(pat));
	for (int i = 0; i < 100; i++)
		strcat(pat, "a*");
	strcat(pat, "b");
	memset(s, 'a', 500);
	s[500] = '\0';
	cr_expect(!testspecs_glob_match(pat, s));
	char deep[1200] = "";
	for (int i = 0; i < 100; i++)
		strcat(deep, "/**");
	strcat(deep, "/z");
	cr_expect(!testspecs_glob_match(deep, "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p"));
}

Test(paths, glob_file_entry_is_marked)
{
	struct loaded l;
	loaded_text(&l, "test_suite_config:\n  files:\n    - path: ${TORCH_ROOT}/test/test_*.py\n",
		    false);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	cr_expect(l.set->files[0].is_glob);
	cr_expect(testspecs_glob_match(l.set->files[0].resolved, "/src/pytorch/test/test_ops.py"));
	loaded_finish(&l);
}
