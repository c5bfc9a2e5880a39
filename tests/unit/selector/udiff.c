/* Stage 1 from a unified diff: diffs we write (git's format, plain diff -u), diffs git itself
 * writes of the repositories gitrepo.c builds (compared with what libgit2 reads from the same
 * range), malformed diffs each refused with "origin:line: expected ...", and the limits. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "gitrepo.h"
#include "selector/changes.h"

static struct change_set *parse_ok(const char *text)
{
	struct change_set *s = NULL;
	int rc = selector_changes_from_udiff(&s, text, strlen(text), "t");
	cr_assert_eq(rc, 0, "%s", err_last());
	cr_assert_not_null(s);
	return s;
}

static void expect_file(const struct file_change *fc, enum change_status st, const char *old_path,
			const char *new_path, unsigned old_mode, unsigned new_mode, size_t n_hunks)
{
	cr_assert_eq(fc->status, st, "%s: %s", fc->new_path.text,
		     selector_change_status_name(fc->status));
	cr_assert_str_eq(fc->old_path.bytes, old_path);
	cr_assert_str_eq(fc->new_path.bytes, new_path);
	cr_assert_eq(fc->old_mode, old_mode, "%s: old mode %o", fc->new_path.text, fc->old_mode);
	cr_assert_eq(fc->new_mode, new_mode, "%s: new mode %o", fc->new_path.text, fc->new_mode);
	cr_assert_eq(fc->n_hunks, n_hunks, "%s: %zu hunks", fc->new_path.text, fc->n_hunks);
}

static void expect_hunk(const struct file_change *fc, size_t i, unsigned os, unsigned ol,
			unsigned ns, unsigned nl)
{
	const struct change_hunk *h = &fc->hunks[i];
	cr_assert(h->old_start == os && h->old_lines == ol && h->new_start == ns &&
		      h->new_lines == nl,
		  "%s hunk %zu: -%u,%u +%u,%u", fc->new_path.text, i, h->old_start, h->old_lines,
		  h->new_start, h->new_lines);
}

static const char git_text[] =
    "From 0123 Mon Sep 17 00:00:00 2001\n"
    "Subject: [PATCH] a mail's text is its message\n"
    "\n"
    "---\n"
    " mod.py | 3 ++-\n"
    "\n"
    "diff --git a/mod.py b/mod.py\n" /* 7 */
    "index 1234567..89abcde 100644\n"
    "--- a/mod.py\n"
    "+++ b/mod.py\n"
    "@@ -1,3 +1,3 @@ def f():\n"
    " a\n"
    "-b\n"
    "+B\n"
    "\n" /* a context line whose ' ' a mailer ate */
    "@@ -10 +10,2 @@\n"
    "-x\n"
    "\\ No newline at end of file\n"
    "+x\n"
    "+y\n"
    "\\ No newline at end of file\n"
    "diff --git a/new file.py b/new file.py\n"
    "new file mode 100755\n"
    "index 0000000..e69de29\n"
    "--- /dev/null\n"
    "+++ b/new file.py\n"
    "@@ -0,0 +1 @@\n"
    "+print()\n"
    "diff --git a/gone.py b/gone.py\n"
    "deleted file mode 100644\n"
    "index e69de29..0000000\n"
    "diff --git a/old.py b/pkg/new.py\n"
    "similarity index 90%\n"
    "rename from old.py\n"
    "rename to pkg/new.py\n"
    "index 1111111..2222222 100644\n"
    "--- a/old.py\n"
    "+++ b/pkg/new.py\n"
    "@@ -5,0 +6,2 @@\n"
    "+p\n"
    "+q\n"
    "diff --git a/src.py b/dst.py\n"
    "similarity index 100%\n"
    "copy from src.py\n"
    "copy to dst.py\n"
    "diff --git a/run.sh b/run.sh\n"
    "old mode 100644\n"
    "new mode 100755\n"
    "diff --git \"a/caf\\351 \\\"q\\\".py\" \"b/caf\\351 \\\"q\\\".py\"\n"
    "index 1111111..2222222 100644\n"
    "Binary files \"a/caf\\351 \\\"q\\\".py\" and \"b/caf\\351 \\\"q\\\".py\" differ\n"
    "diff --git a/img.png b/img.png\n"
    "new file mode 100644\n"
    "index 0000000..3333333\n"
    "GIT binary patch\n"
    "literal 5\n"
    "Mc${NkU|?VX00RI3NdN!<\n"
    "\n"
    "literal 0\n"
    "HcmV?d00001\n"
    "\n"
    "diff --git a/third_party/sub b/third_party/sub\n"
    "index 1111111..2222222 160000\n"
    "--- a/third_party/sub\n"
    "+++ b/third_party/sub\n"
    "@@ -1 +1 @@\n"
    "-Subproject commit 1111111111111111111111111111111111111111\n"
    "+Subproject commit 2222222222222222222222222222222222222222\n"
    "diff --git a/ln b/ln\n"
    "deleted file mode 120000\n"
    "index 1111111..0000000\n"
    "--- a/ln\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-target\n"
    "\\ No newline at end of file\n"
    "diff --git a/ln b/ln\n"
    "new file mode 100644\n"
    "index 0000000..2222222\n"
    "--- /dev/null\n"
    "+++ b/ln\n"
    "@@ -0,0 +1,2 @@\n"
    "+now\n"
    "+a file\n"
    "-- \n"
    "2.39.2\n";

Test(udiff, git_format_exact)
{
	struct change_set *s = parse_ok(git_text);
	cr_assert_eq(s->n_files, 10);
	cr_assert_eq(s->n_limit_hits, 0);
	cr_assert_eq(s->n_commits, 1, "the mail's message");
	cr_assert_str_eq(s->commits[0].id, "", "'From 0123' is no commit id");
	cr_assert_str_eq(s->commits[0].message, "a mail's text is its message\n\n");
	const struct file_change *f = s->files;
	expect_file(&f[0], CHANGE_MODIFIED, "mod.py", "mod.py", 0100644, 0100644, 2);
	expect_hunk(&f[0], 0, 1, 3, 1, 3);
	expect_hunk(&f[0], 1, 10, 1, 10, 2);
	expect_file(&f[1], CHANGE_ADDED, "new file.py", "new file.py", 0, 0100755, 1);
	expect_hunk(&f[1], 0, 0, 0, 1, 1);
	expect_file(&f[2], CHANGE_DELETED, "gone.py", "gone.py", 0100644, 0, 0);
	expect_file(&f[3], CHANGE_RENAMED, "old.py", "pkg/new.py", 0100644, 0100644, 1);
	cr_assert_eq(f[3].similarity, 90);
	expect_hunk(&f[3], 0, 5, 0, 6, 2);
	expect_file(&f[4], CHANGE_COPIED, "src.py", "dst.py", 0100644, 0100644, 0);
	cr_assert_eq(f[4].similarity, 100);
	expect_file(&f[5], CHANGE_MODIFIED, "run.sh", "run.sh", 0100644, 0100755, 0);
	expect_file(&f[6], CHANGE_MODIFIED, "caf\xe9 \"q\".py", "caf\xe9 \"q\".py", 0100644,
		    0100644, 0);
	cr_assert(f[6].binary);
	cr_assert_str_eq(f[6].new_path.text, "caf\\351 \\\"q\\\".py");
	expect_file(&f[7], CHANGE_ADDED, "img.png", "img.png", 0, 0100644, 0);
	cr_assert(f[7].binary);
	expect_file(&f[8], CHANGE_MODIFIED, "third_party/sub", "third_party/sub", 0160000, 0160000,
		    1);
	/* The deletion of symlink ln and the addition of file ln: one type change. */
	expect_file(&f[9], CHANGE_TYPECHANGE, "ln", "ln", 0120000, 0100644, 2);
	expect_hunk(&f[9], 0, 1, 1, 0, 0);
	expect_hunk(&f[9], 1, 0, 0, 1, 2);
	for (size_t i = 0; i < 10; i++)
		cr_assert_eq(f[i].binary, i == 6 || i == 7, "%zu", i);
	selector_change_set_destroy(s);
}

Test(udiff, plain_diff_u)
{
	struct change_set *s = parse_ok("Only text before the first file is a preamble.\n"
					"diff -ru old/a.py new/a.py\n"
					"--- old/a.py\t2024-01-01 10:00:00.000000000 +0000\n"
					"+++ new/a.py\t2024-01-02 10:00:00.000000000 +0000\n"
					"@@ -2,2 +2,3 @@\n"
					" two\n"
					"-three\n"
					"+THREE\n"
					"+four\n"
					"diff -ru old/b.py new/b.py\n"
					"--- old/b.py\n"
					"+++ /dev/null\n"
					"@@ -1,2 +0,0 @@\n"
					"-x\n"
					"-y\n"
					"Binary files old/c.bin and new/c.bin differ\n"
					"--- x.py\t2024-01-01\n"
					"+++ y.py\t2024-01-01\n"
					"@@ -1 +1 @@\n"
					"-1\n"
					"+2\n");
	cr_assert_eq(s->n_files, 4);
	expect_file(&s->files[0], CHANGE_MODIFIED, "a.py", "a.py", 0100644, 0100644, 1);
	expect_hunk(&s->files[0], 0, 2, 2, 2, 3);
	expect_file(&s->files[1], CHANGE_DELETED, "b.py", "b.py", 0100644, 0, 1);
	expect_file(&s->files[2], CHANGE_MODIFIED, "c.bin", "c.bin", 0100644, 0100644, 0);
	cr_assert(s->files[2].binary);
	/* Two differently named files without directories: no prefix to strip. */
	expect_file(&s->files[3], CHANGE_MODIFIED, "x.py", "y.py", 0100644, 0100644, 1);
	selector_change_set_destroy(s);
}

Test(udiff, empty_and_crlf)
{
	struct change_set *s = parse_ok("");
	cr_assert_eq(s->n_files, 0);
	selector_change_set_destroy(s);
	s = parse_ok("diff --git a/w.py b/w.py\r\nindex 1234567..89abcde 100644\r\n--- a/w.py\r\n"
		     "+++ b/w.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n");
	cr_assert_eq(s->n_files, 1);
	expect_file(&s->files[0], CHANGE_MODIFIED, "w.py", "w.py", 0100644, 0100644, 1);
	selector_change_set_destroy(s);
	/* No final newline. */
	s = parse_ok("--- a/q\n+++ b/q\n@@ -1 +1 @@\n-a\n+b");
	cr_assert_eq(s->n_files, 1);
	selector_change_set_destroy(s);
}

Test(udiff, printable_paths)
{
	/* UTF-8 stays readable, other bytes and controls become escapes; the bytes stay as given.
	 */
	struct change_set *s =
	    parse_ok("diff --git \"a/\\303\\251\\t\\377\" \"b/\\303\\251\\t\\377\"\n"
		     "index 1111111..2222222 100644\n"
		     "--- \"a/\\303\\251\\t\\377\"\n"
		     "+++ \"b/\\303\\251\\t\\377\"\n"
		     "@@ -1 +1 @@\n-a\n+b\n");
	cr_assert_eq(s->n_files, 1);
	cr_assert_eq(s->files[0].new_path.len, 4);
	cr_assert_str_eq(s->files[0].new_path.bytes, "\303\251\t\377");
	cr_assert_str_eq(s->files[0].new_path.text, "\303\251\\t\\377");
	selector_change_set_destroy(s);
}

struct bad {
	const char *text;
	const char *error; /* a substring of err_last() */
};

#define GH "diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/x\n"

static const struct bad bad_diffs[] = {
	{ GH "@@ -1 +1 @@\n-a\n",
	  "t:7: expected 0 more old and 1 more new line(s) of the hunk at line 5, found the end" },
	{ GH "@@ -1,2 +1 @@\n-a\n+b\ndiff --git a/y b/y\n",
	  "t:8: expected 1 more old and 0 more new" },
	{ GH "@@ -1 +1 @@\n-a\n+b\n+c\n", "t:8: expected a file header" },
	{ GH "@@ -1 +1\n-a\n",
	  "t:5: expected a hunk header '@@ -A[,B] +C[,D] @@', found '@@ -1 +1'" },
	{ GH "@@ -a,1 +1 @@\n", "t:5: expected a hunk header" },
	{ GH "@@ -0,1 +1 @@\n-a\n+b\n", "t:5: expected a hunk that starts at line 1 or later" },
	{ GH "@@ -1 +1 @@junk\n-a\n+b\n", "t:5: expected a hunk header" },
	{ GH "@@ -99999999999 +1 @@\n", "t:5: expected a hunk header" },
	{ GH "-a\n", "t:5: expected a hunk header '@@ -A[,B] +C[,D] @@' after '+++'" },
	{ GH "@@ -1 +1 @@\n*a\n", "t:6: expected 1 more old and 1 more new" },
	{ GH "@@ -1 +1 @@\n\\ No newline at end of file\n", "t:6: expected 1 more old" },
	{ GH "@@ -5 +5 @@\n-a\n+b\n@@ -4 +4 @@\n-c\n+d\n", "t:8: expected hunks in order" },
	{ "--- a/x\nfoo\n", "t:2: expected '+++ PATH' after '---', found 'foo'" },
	{ "--- /dev/null\n+++ /dev/null\n", "t:2: expected a file on at least one side" },
	{ "diff --git a/x b/x\nnew file mode 100999\n", "t:2: expected a mode (100644)" },
	{ "diff --git a/x b/x\nold mode 040000\nnew mode 100644\n", "t:2: expected a mode" },
	{ "diff --git a/x b/y\nsimilarity index 150%\n", "t:2: expected a percentage (50%)" },
	{ "diff --git a/x b/y\nrename from x\n", "t:1: a rename or copy needs both" },
	{ "diff --git a/x b/y\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
	  "t:1: the lines of this file name different paths" },
	{ "diff --git \"a/b\\q\" \"b/b\\q\"\n", "t:1: expected 'diff --git a/PATH b/PATH'" },
	{ "diff --git \"a/unterminated b/x\n", "t:1: expected 'diff --git a/PATH b/PATH'" },
	{ "diff --git x x\n", "t:1: expected 'diff --git a/PATH b/PATH', found 'diff --git x x'" },
	{ "diff --git a/x b/x\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\n"
	  "literal 5\nMc${Nk!!!\n\n",
	  "t:6: expected a base85 line of a binary patch" },
	{ "diff --git a/x b/x\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\n"
	  "bogus\n",
	  "t:5: expected 'literal SIZE' or 'delta SIZE'" },
	{ "diff --cc merged.py\nindex 1,2..3\n", "t:1: expected a two-sided diff" },
	{ "Only in a: x\n", "t:1: expected a file diff ('Only in'" },
	{ "@@ -1 +1 @@\n-a\n+b\n", "t:1: expected a file header" },
	{ "diff --git a/x b/x\nnew file mode 100644\nindex 0000000..1111111\n--- a/x\n+++ b/x\n"
	  "@@ -1 +1 @@\n-a\n+b\n",
	  "t:1: '/dev/null' in '---'/'+++' disagrees" },
	{ "hello\nworld\n", "t: no diff found" },
	{ "diff --git a/x b/x\nindex zz..yy 100644\n", "t:2: expected 'index HEX..HEX [MODE]'" },
	{ "Binary files x differ\n",
	  "t:1: expected 'Binary files A and B differ' with one ' and '" },
	{ "diff --git a/x y b/z w\nindex 1234567..89abcde 100644\n",
	  "t:1: the paths of 'diff --git' are ambiguous" },
	{ GH "@@ -1 +1 @@\n-a\n+b\nrandom text\n", "t:8: expected a file header" },
	{ "diff --git a/x b/x\nnew file mode 100644\ndeleted file mode 100644\n",
	  "t:1: a file that is new, deleted, renamed or copied at once" },
	{ "diff --git a/x b/x\nindex 1234567..89abcde 100644\nBinary files a/x and b/x\n",
	  "t:3: expected 'Binary files A and B differ', found 'Binary files a/x and b/x'" },
};

Test(udiff, malformed_refused_with_a_location)
{
	size_t n = sizeof(bad_diffs) / sizeof(bad_diffs[0]);
	cr_assert_geq(n, 20);
	for (size_t i = 0; i < n; i++) {
		struct change_set *s = (struct change_set *)1;
		int rc = selector_changes_from_udiff(&s, bad_diffs[i].text,
						     strlen(bad_diffs[i].text), "t");
		cr_expect_eq(rc, ERR_INVAL, "case %zu: rc %d (%s)", i, rc, err_last());
		cr_expect_null(s, "case %zu", i);
		cr_expect(strstr(err_last(), bad_diffs[i].error) != NULL,
			  "case %zu: got \"%s\", wanted \"%s\"", i, err_last(), bad_diffs[i].error);
		if (rc == 0)
			selector_change_set_destroy(s);
	}
}

Test(udiff, limits_stop_and_are_recorded)
{
	struct change_set *s = NULL;
	struct changes_opts o = { .max_files = 2 };
	cr_assert_eq(selector_changes_from_udiff_opts(&s, git_text, strlen(git_text), "t", &o), 0);
	cr_assert_eq(s->n_files, 2);
	cr_assert_eq(s->n_limit_hits, 1);
	cr_assert_str_eq(s->limit_hits[0].what, "files");
	selector_change_set_destroy(s);

	o = (struct changes_opts){ .max_hunks = 1 };
	cr_assert_eq(selector_changes_from_udiff_opts(&s, git_text, strlen(git_text), "t", &o), 0);
	cr_assert_eq(s->n_files, 1);
	cr_assert_eq(s->files[0].n_hunks, 1);
	cr_assert_str_eq(s->limit_hits[0].what, "hunks");
	selector_change_set_destroy(s);

	/* A byte bound inside mod.py's second hunk: the first hunk is kept, the cut one is not,
	 * and a truncated hunk there is not an error. */
	const char *second = strstr(git_text, "@@ -10 +10,2 @@");
	o = (struct changes_opts){ .max_bytes = (size_t)(second - git_text) + 20 };
	cr_assert_eq(selector_changes_from_udiff_opts(&s, git_text, strlen(git_text), "t", &o), 0,
		     "%s", err_last());
	cr_assert_eq(s->n_files, 1);
	cr_assert_eq(s->files[0].n_hunks, 1);
	cr_assert_str_eq(s->limit_hits[0].what, "bytes");
	cr_assert(selector_change_set_limited(s));
	selector_change_set_destroy(s);
}

/* What libgit2 reads of a range equals what our parser reads of git's own diff of it. */
static void same_changes(const struct change_set *g, const struct change_set *u, bool hunks)
{
	cr_assert_eq(u->n_files, g->n_files);
	for (size_t i = 0; i < g->n_files; i++) {
		const struct file_change *a = &g->files[i], *b = NULL;
		for (size_t j = 0; j < u->n_files && !b; j++)
			if (strcmp(u->files[j].new_path.bytes, a->new_path.bytes) == 0 &&
			    u->files[j].status == a->status)
				b = &u->files[j];
		cr_assert_not_null(b, "git diff lacks %s %s",
				   selector_change_status_name(a->status), a->new_path.text);
		cr_assert_str_eq(b->old_path.bytes, a->old_path.bytes);
		cr_assert_eq(b->old_mode, a->old_mode, "%s", a->new_path.text);
		cr_assert_eq(b->new_mode, a->new_mode, "%s", a->new_path.text);
		cr_assert_eq(b->binary, a->binary, "%s", a->new_path.text);
		/* The `index` line's ids abbreviate libgit2's; git writes none when the content is
		 * the same (a mode change, a pure rename or copy). */
		cr_assert_eq(strlen(a->old_id), 40, "%s", a->new_path.text);
		cr_assert_eq(strlen(a->new_id), 40, "%s", a->new_path.text);
		bool content = strcmp(a->old_id, a->new_id) != 0;
		cr_assert(!content || b->old_id[0], "%s: no index line", a->new_path.text);
		if (b->old_id[0] || b->new_id[0]) {
			cr_assert_geq(strlen(b->old_id), 7, "%s: index line", a->new_path.text);
			cr_assert(strncmp(a->old_id, b->old_id, strlen(b->old_id)) == 0 &&
				      strncmp(a->new_id, b->new_id, strlen(b->new_id)) == 0,
				  "%s: %s..%s is not %s..%s", a->new_path.text, b->old_id,
				  b->new_id, a->old_id, a->new_id);
		}
		if (!hunks)
			continue;
		cr_assert_eq(b->n_hunks, a->n_hunks, "%s", a->new_path.text);
		for (size_t h = 0; h < a->n_hunks; h++)
			cr_assert(memcmp(&a->hunks[h], &b->hunks[h], sizeof(a->hunks[h])) == 0,
				  "%s hunk %zu", a->new_path.text, h);
	}
}

Test(udiff, git_diff_of_a_generated_repo)
{
	struct test_repo t;
	char a[41], b[41];
	test_repo_create(&t);
	test_repo_scenario(&t, a, b);
	struct change_set *g = NULL, *u = NULL;
	cr_assert_eq(selector_changes_from_git(&g, t.dir, a, b, NULL), 0, "%s", err_last());

	const char *u0[] = { "diff", "-U0", "-M", "-C", a, b, NULL };
	size_t len;
	char *out = test_git_output(&t, u0, &len);
	if (!out) {
		selector_change_set_destroy(g);
		test_repo_destroy(&t);
		cr_skip_test("git is not installed");
	}
	cr_assert_eq(selector_changes_from_udiff(&u, out, len, "git-diff"), 0, "%s", err_last());
	same_changes(g, u, true);
	selector_change_set_destroy(u);
	free(out);

	/* With context, binary patches, and as format-patch's mail. */
	const char *bin[] = { "diff", "--binary", "-M", "-C", a, b, NULL };
	out = test_git_output(&t, bin, &len);
	cr_assert_eq(selector_changes_from_udiff(&u, out, len, "git-diff"), 0, "%s", err_last());
	same_changes(g, u, false);
	selector_change_set_destroy(u);
	free(out);
	const char *fp[] = { "format-patch", "--stdout", "-M", "-C", "-1", b, NULL };
	out = test_git_output(&t, fp, &len);
	cr_assert_eq(selector_changes_from_udiff(&u, out, len, "mail"), 0, "%s", err_last());
	same_changes(g, u, false);
	selector_change_set_destroy(u);
	free(out);
	selector_change_set_destroy(g);
	test_repo_destroy(&t);
}

/* A format-patch series: each mail's Subject (folded, without "[PATCH n/m]") and body up to its
 * "---" become a commit with the mail's id; the patches after the first signature are read. A
 * diff with text that is no mail keeps the whole text; a plain diff has no message. */
Test(udiff, format_patch_messages)
{
	static const char series[] =
	    "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
	    "From: A <a@b>\n"
	    "Subject: [PATCH 1/2] Fix test_fold_cpu in\n"
	    " TestNNDeviceTypeCPU\n"
	    "\n"
	    "Repro: python test/test_nn.py -k test_fold\n"
	    "-- \n"
	    "---\n"
	    " a.py | 1 +\n"
	    "\n"
	    "diff --git a/a.py b/a.py\n"
	    "--- a/a.py\n"
	    "+++ b/a.py\n"
	    "@@ -1 +1 @@\n"
	    "-a\n"
	    "+b\n"
	    "-- \n"
	    "2.39.2\n"
	    "\n"
	    "From 2222222222222222222222222222222222222222 Mon Sep 17 00:00:00 2001\n"
	    "Subject: [PATCH 2/2] Second\n"
	    "\n"
	    "---\n"
	    "diff --git a/b.py b/b.py\n"
	    "--- a/b.py\n"
	    "+++ b/b.py\n"
	    "@@ -1 +1 @@\n"
	    "-a\n"
	    "+b\n"
	    "-- \n"
	    "2.39.2\n";
	struct change_set *s = parse_ok(series);
	cr_assert_eq(s->n_files, 2, "both patches of the series");
	cr_assert_eq(s->n_commits, 2);
	cr_assert_str_eq(s->commits[0].id, "1111111111111111111111111111111111111111");
	cr_assert_str_eq(s->commits[0].message, "Fix test_fold_cpu in TestNNDeviceTypeCPU\n\n"
						"Repro: python test/test_nn.py -k test_fold\n"
						"-- \n");
	cr_assert_str_eq(s->commits[1].id, "2222222222222222222222222222222222222222");
	cr_assert_str_eq(s->commits[1].message, "Second\n\n");
	selector_change_set_destroy(s);
	s = parse_ok("commit 3333333333333333333333333333333333333333\nAuthor: A\n\n"
		     "    Fixes TestNN.test_fold\n\n"
		     "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n");
	cr_assert_eq(s->n_commits, 1);
	cr_assert_str_eq(s->commits[0].id, "3333333333333333333333333333333333333333");
	cr_assert(strstr(s->commits[0].message, "    Fixes TestNN.test_fold"));
	selector_change_set_destroy(s);
	s = parse_ok("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n");
	cr_assert_eq(s->n_commits, 0);
	selector_change_set_destroy(s);
}
