/* A change given as a unified diff (funnel_change.diff_path) instead of a range: git's diff of
 * a range ending at HEAD selects what the range selects; a malformed or missing diff is an error
 * naming the file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "funnel/funnel.h"
#include "gitrepo.h"
#include "upstream.h"

#define BASE "HEAD~2" /* HEAD~2..HEAD: a traced change ending at HEAD (upstream.h) */

/* `git diff BASE HEAD` of the upstream into dir/change.diff; false when git is not installed. */
static bool write_diff(char *path, size_t size, const char *dir)
{
	struct test_repo t = { 0 };
	snprintf(t.dir, sizeof t.dir, "%s/.git", up_dir());
	const char *args[] = { "diff", BASE, "HEAD", NULL };
	size_t len = 0;
	char *text = test_git_output(&t, args, &len);
	if (!text)
		return false;
	cr_assert_gt(len, 0, "the range changes something");
	tmp_write(path, size, dir, "change.diff", text);
	free(text);
	return true;
}

static int select_diff(struct funnel_selection *sel, struct funnel_specs *specs,
		       struct funnel_cache *cache, const char *path)
{
	struct funnel_change ch = { .repo = up_dir(), .diff_path = path };
	return funnel_select(sel, &ch, specs, cache, NULL);
}

Test(funnel_change, a_ranges_diff_selects_what_the_range_selects)
{
	char dir[64], path[128];
	tmp_make(dir, sizeof dir, "diff");
	if (!write_diff(path, sizeof path, dir)) {
		tmp_remove(dir);
		cr_skip_test("git is not installed");
	}
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0);
	struct funnel_selection range, diff;
	up_select(&range, specs, cache, BASE, "HEAD", NULL);
	cr_assert_eq(select_diff(&diff, specs, cache, path), 0, "%s", err_last());
	cr_assert(!range.rep.fallback, "a traced range: %s", range.rep.fallback_reason);
	cr_assert_gt(range.n_cases, 0);
	cr_expect_eq(range.rep.changed_files, diff.rep.changed_files);
	expect_same_selection(&range, &diff, "range and diff");
	funnel_selection_finish(&diff);
	funnel_selection_finish(&range);
	funnel_cache_destroy(cache);
	funnel_specs_destroy(specs);
	tmp_remove(dir);
}

Test(funnel_change, a_malformed_diff_is_inval_naming_the_file)
{
	char dir[64], path[128];
	tmp_make(dir, sizeof dir, "diff");
	tmp_write(path, sizeof path, dir, "bad.diff",
		  "diff --git a/torch/x.py b/torch/x.py\n"
		  "index 1111111..2222222 100644\n"
		  "--- a/torch/x.py\n"
		  "+++ b/torch/x.py\n"
		  "@@ -1,2 +1,2 @@ what\n"
		  "-a\n"
		  "+b\n"
		  "@@ this is no hunk header\n");
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0);
	struct funnel_selection sel;
	cr_expect_eq(select_diff(&sel, specs, cache, path), ERR_INVAL, "%s", err_last());
	cr_expect(strstr(err_last(), path), "names the file: %s", err_last());
	cr_expect_eq(sel.rep.n_tests, 0);
	cr_expect_eq(sel.n_cases, 0);
	funnel_selection_finish(&sel);
	funnel_cache_destroy(cache);
	funnel_specs_destroy(specs);
	tmp_remove(dir);
}

Test(funnel_change, a_missing_diff_is_an_error_naming_it)
{
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0);
	struct funnel_selection sel;
	const char *path = "/nonexistent/funnel/change.diff";
	cr_expect_lt(select_diff(&sel, specs, cache, path), 0);
	cr_expect(strstr(err_last(), path), "names the file: %s", err_last());
	cr_expect_eq(sel.n_cases, 0);
	funnel_selection_finish(&sel);
	funnel_cache_destroy(cache);
	funnel_specs_destroy(specs);
}
