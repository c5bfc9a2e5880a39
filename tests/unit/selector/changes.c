/* Stage 1 from a repository: change sets read with libgit2 from repositories this test builds
 * (see gitrepo.c), checked field by field; merge bases, revspecs, errors and limits. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "selector/changes.h"

static const struct file_change *find(const struct change_set *s, const char *new_path)
{
	for (size_t i = 0; i < s->n_files; i++)
		if (strcmp(s->files[i].new_path.bytes, new_path) == 0)
			return &s->files[i];
	cr_assert_fail("no change for %s", new_path);
	return NULL;
}

static void expect(const struct file_change *fc, enum change_status st, const char *old_path,
		   unsigned old_mode, unsigned new_mode, bool binary)
{
	cr_assert_eq(fc->status, st, "%s: status %s", fc->new_path.text,
		     selector_change_status_name(fc->status));
	cr_assert_str_eq(fc->old_path.bytes, old_path);
	cr_assert_eq(fc->old_mode, old_mode, "%s: old mode %o", fc->new_path.text, fc->old_mode);
	cr_assert_eq(fc->new_mode, new_mode, "%s: new mode %o", fc->new_path.text, fc->new_mode);
	cr_assert_eq(fc->binary, binary, "%s: binary", fc->new_path.text);
}

static void expect_hunk(const struct file_change *fc, size_t i, unsigned os, unsigned ol,
			unsigned ns, unsigned nl)
{
	cr_assert_lt(i, fc->n_hunks, "%s: hunk %zu of %zu", fc->new_path.text, i, fc->n_hunks);
	const struct change_hunk *h = &fc->hunks[i];
	cr_assert(h->old_start == os && h->old_lines == ol && h->new_start == ns &&
		      h->new_lines == nl,
		  "%s hunk %zu: -%u,%u +%u,%u", fc->new_path.text, i, h->old_start, h->old_lines,
		  h->new_start, h->new_lines);
}

/* The scenario's change set, exactly; shared with udiff.c's comparison through git. */
static void check_scenario(const struct change_set *s)
{
	cr_assert_eq(s->n_files, 12);
	cr_assert_eq(s->n_limit_hits, 0);
	const struct file_change *fc = find(s, "mod.py");
	expect(fc, CHANGE_MODIFIED, "mod.py", 0100644, 0100644, false);
	cr_assert_eq(fc->n_hunks, 3);
	expect_hunk(fc, 0, 3, 1, 3, 1);
	expect_hunk(fc, 1, 8, 1, 7, 0);
	expect_hunk(fc, 2, 10, 0, 10, 1);
	fc = find(s, "del.py");
	expect(fc, CHANGE_DELETED, "del.py", 0100644, 0, false);
	cr_assert_eq(fc->n_hunks, 1);
	expect_hunk(fc, 0, 1, 1, 0, 0);
	fc = find(s, "renamed/ren_new.py");
	expect(fc, CHANGE_RENAMED, "ren_old.py", 0100644, 0100644, false);
	cr_assert(fc->similarity >= 50 && fc->similarity < 100, "similarity %u", fc->similarity);
	cr_assert_eq(fc->n_hunks, 1);
	expect_hunk(fc, 0, 15, 1, 15, 1);
	fc = find(s, "copy_dst.py");
	expect(fc, CHANGE_COPIED, "copy_src.py", 0100644, 0100644, false);
	cr_assert(fc->similarity >= 50);
	cr_assert_eq(fc->n_hunks, 1);
	expect_hunk(fc, 0, 30, 0, 31, 1);
	fc = find(s, "copy_src.py");
	expect(fc, CHANGE_MODIFIED, "copy_src.py", 0100644, 0100644, false);
	cr_assert_eq(fc->n_hunks, 1);
	expect_hunk(fc, 0, 1, 1, 1, 1);
	fc = find(s, "mode.sh");
	expect(fc, CHANGE_MODIFIED, "mode.sh", 0100644, 0100755, false);
	cr_assert_eq(fc->n_hunks, 0);
	fc = find(s, "link");
	expect(fc, CHANGE_TYPECHANGE, "link", 0120000, 0100644, false);
	cr_assert_eq(fc->n_hunks, 2);
	expect_hunk(fc, 0, 1, 1, 0, 0);
	expect_hunk(fc, 1, 0, 0, 1, 1);
	fc = find(s, "sub");
	expect(fc, CHANGE_MODIFIED, "sub", 0160000, 0160000, false);
	cr_assert_eq(fc->n_hunks, 1);
	expect_hunk(fc, 0, 1, 1, 1, 1);
	fc = find(s, "bin.dat");
	expect(fc, CHANGE_MODIFIED, "bin.dat", 0100644, 0100644, true);
	cr_assert_eq(fc->n_hunks, 0);
	fc = find(s, "new.py");
	expect(fc, CHANGE_ADDED, "new.py", 0, 0100644, false);
	cr_assert_eq(fc->n_hunks, 1);
	expect_hunk(fc, 0, 0, 0, 1, 3);
	fc = find(s, "caf\xe9.py");
	expect(fc, CHANGE_ADDED, "caf\xe9.py", 0, 0100644, false);
	cr_assert_eq(fc->new_path.len, 7);
	cr_assert_str_eq(fc->new_path.text, "caf\\351.py");
	fc = find(s, "newlink");
	expect(fc, CHANGE_ADDED, "newlink", 0, 0120000, false);
	expect_hunk(fc, 0, 0, 0, 1, 1);
	for (size_t i = 0; i < s->n_files; i++)
		cr_assert_eq(s->files[i].similarity == 0, s->files[i].status != CHANGE_RENAMED &&
							      s->files[i].status != CHANGE_COPIED);
}

Test(changes_git, scenario_exact)
{
	struct test_repo t;
	char a[41], b[41];
	test_repo_create(&t);
	test_repo_scenario(&t, a, b);
	struct change_set *s = NULL;
	int rc = selector_changes_from_git(&s, t.dir, a, b, NULL);
	cr_assert_eq(rc, 0, "%s", err_last());
	check_scenario(s);
	cr_assert_str_eq(s->base_id, a);
	cr_assert_str_eq(s->head_id, b);
	cr_assert_str_eq(s->merge_base_id, "");
	cr_assert_eq(s->n_commits, 1);
	cr_assert_str_eq(s->commits[0].id, b);
	cr_assert_str_eq(s->commits[0].message, "head: edits\n\nFixes test_mod.\n");
	cr_assert_not(selector_change_set_limited(s));
	selector_change_set_destroy(s);

	/* The same range through revspecs. */
	rc = selector_changes_from_git(&s, t.dir, "main~1", "main", NULL);
	cr_assert_eq(rc, 0, "%s", err_last());
	check_scenario(s);
	cr_assert_str_eq(s->base_id, a);
	selector_change_set_destroy(s);
	test_repo_destroy(&t);
}

Test(changes_git, no_base_is_the_empty_tree)
{
	struct test_repo t;
	char a[41], b[41];
	test_repo_create(&t);
	test_repo_scenario(&t, a, b);
	struct change_set *s = NULL;
	cr_assert_eq(selector_changes_from_git(&s, t.dir, NULL, a, NULL), 0, "%s", err_last());
	cr_assert_eq(s->n_files, 9);
	for (size_t i = 0; i < s->n_files; i++)
		cr_assert_eq(s->files[i].status, CHANGE_ADDED, "%s", s->files[i].new_path.text);
	const struct file_change *fc = find(s, "keep.py");
	cr_assert_eq(fc->n_hunks, 1);
	expect_hunk(fc, 0, 0, 0, 1, 20);
	expect(find(s, "sub"), CHANGE_ADDED, "sub", 0, 0160000, false);
	cr_assert_str_eq(s->base_id, "");
	cr_assert_eq(s->n_commits, 1);
	cr_assert_str_eq(s->commits[0].message, "base\n");
	selector_change_set_destroy(s);
	test_repo_destroy(&t);
}

/* A ---- B ---- M (merge of B and C) on main; A ---- C ---- E on feature. For the pull request
 * feature -> main, the change is merge-base(M, E) = C .. E: only E's edit. */
Test(changes_git, merge_base_of_a_pull_request)
{
	struct test_repo t;
	char a[41], b[41], c[41], m[41], e[41];
	test_repo_create(&t);
	struct test_edit ea[] = { { "x.py", 0100644, "x\n", 0 },
				  { "y.py", 0100644, "y\n", 0 },
				  { "z.py", 0100644, "z\n", 0 } };
	test_repo_commit(&t, a, "refs/heads/main", "A\n", NULL, 0, ea, 3);
	struct test_edit eb[] = { { "x.py", 0100644, "x2\n", 0 } };
	const char *pa[] = { a };
	test_repo_commit(&t, b, "refs/heads/main", "B\n", pa, 1, eb, 1);
	struct test_edit ec[] = { { "y.py", 0100644, "y2\n", 0 } };
	test_repo_commit(&t, c, "refs/heads/feature", "C\n", pa, 1, ec, 1);
	const char *pm[] = { b, c };
	struct test_edit em[] = { { "y.py", 0100644, "y2\n", 0 } };
	test_repo_commit(&t, m, "refs/heads/main", "Merge feature\n", pm, 2, em, 1);
	struct test_edit ee[] = { { "z.py", 0100644, "z\nz2\n", 0 } };
	const char *pc[] = { c };
	test_repo_commit(&t, e, "refs/heads/feature", "E\n", pc, 1, ee, 1);

	struct changes_opts o = { .merge_base = true };
	struct change_set *s = NULL;
	cr_assert_eq(selector_changes_from_git(&s, t.dir, "main", "feature", &o), 0, "%s",
		     err_last());
	cr_assert_str_eq(s->merge_base_id, c);
	cr_assert_str_eq(s->base_id, m);
	cr_assert_str_eq(s->head_id, e);
	cr_assert_eq(s->n_files, 1);
	expect(&s->files[0], CHANGE_MODIFIED, "z.py", 0100644, 0100644, false);
	expect_hunk(&s->files[0], 0, 1, 0, 2, 1);
	cr_assert_eq(s->n_commits, 1);
	cr_assert_str_eq(s->commits[0].message, "E\n");
	selector_change_set_destroy(s);

	/* Without merge_base the tree diff also undoes B's edit of x.py. */
	cr_assert_eq(selector_changes_from_git(&s, t.dir, "main", "feature", NULL), 0);
	cr_assert_eq(s->n_files, 2);
	cr_assert_str_eq(s->files[0].new_path.bytes, "x.py");
	cr_assert_str_eq(s->files[1].new_path.bytes, "z.py");
	selector_change_set_destroy(s);

	/* The merge commit's own range: M^1..M brings C's edit of y.py; both B..M commits. */
	cr_assert_eq(selector_changes_from_git(&s, t.dir, b, m, NULL), 0);
	cr_assert_eq(s->n_files, 1);
	cr_assert_str_eq(s->files[0].new_path.bytes, "y.py");
	cr_assert_eq(s->n_commits, 2);
	cr_assert_str_eq(s->commits[0].id, m);
	cr_assert_str_eq(s->commits[1].id, c);
	selector_change_set_destroy(s);
	test_repo_destroy(&t);
}

Test(changes_git, errors_name_the_revision)
{
	struct test_repo t;
	char a[41], b[41];
	test_repo_create(&t);
	test_repo_scenario(&t, a, b);
	struct change_set *s = (struct change_set *)1;
	int rc = selector_changes_from_git(&s, t.dir, "no-such-branch", b, NULL);
	cr_assert_eq(rc, ERR_NOTFOUND);
	cr_assert_null(s);
	cr_assert(strstr(err_last(), "base revision 'no-such-branch' did not resolve"), "%s",
		  err_last());
	rc = selector_changes_from_git(&s, t.dir, a, "main~7", NULL);
	cr_assert_lt(rc, 0);
	cr_assert(strstr(err_last(), "head revision 'main~7'"), "%s", err_last());
	rc = selector_changes_from_git(&s, "/nonexistent/repo", a, b, NULL);
	cr_assert_eq(rc, ERR_NOTFOUND);
	cr_assert(strstr(err_last(), "/nonexistent/repo: not a git repository"), "%s", err_last());
	/* A tree is not a commit. */
	char spec[64];
	snprintf(spec, sizeof(spec), "%s^{tree}", b);
	rc = selector_changes_from_git(&s, t.dir, a, spec, NULL);
	cr_assert_eq(rc, ERR_INVAL);
	cr_assert(strstr(err_last(), "is not a commit"), "%s", err_last());
	test_repo_destroy(&t);
}

Test(changes_git, limits_are_recorded_and_keep_what_was_read)
{
	struct test_repo t;
	char a[41], b[41];
	test_repo_create(&t);
	test_repo_scenario(&t, a, b);
	struct change_set *s = NULL;
	struct changes_opts o = { .max_files = 3 };
	cr_assert_eq(selector_changes_from_git(&s, t.dir, a, b, &o), 0);
	cr_assert_eq(s->n_files, 3);
	cr_assert(selector_change_set_limited(s));
	cr_assert_eq(s->n_limit_hits, 1);
	cr_assert_str_eq(s->limit_hits[0].what, "files");
	cr_assert_eq(s->limit_hits[0].limit, 3);
	cr_assert_eq(s->n_commits, 1, "the messages are still read");
	selector_change_set_destroy(s);

	o = (struct changes_opts){ .max_hunks = 2 };
	cr_assert_eq(selector_changes_from_git(&s, t.dir, a, b, &o), 0);
	size_t hunks = 0;
	for (size_t i = 0; i < s->n_files; i++)
		hunks += s->files[i].n_hunks;
	cr_assert_eq(hunks, 2);
	cr_assert_str_eq(s->limit_hits[0].what, "hunks");
	selector_change_set_destroy(s);

	o = (struct changes_opts){ .max_bytes = 10 };
	cr_assert_eq(selector_changes_from_git(&s, t.dir, a, b, &o), 0);
	cr_assert_str_eq(s->limit_hits[0].what, "bytes");
	cr_assert_lt(s->n_files, 12);
	selector_change_set_destroy(s);

	o = (struct changes_opts){ .max_commits = 1 };
	cr_assert_eq(selector_changes_from_git(&s, t.dir, NULL, b, &o), 0);
	cr_assert_eq(s->n_commits, 1);
	cr_assert_str_eq(s->limit_hits[0].what, "commits");
	selector_change_set_destroy(s);
	test_repo_destroy(&t);
}

Test(changes_model, names_and_paths)
{
	cr_assert_str_eq(selector_change_status_name(CHANGE_TYPECHANGE), "typechange");
	cr_assert_str_eq(selector_change_status_name(CHANGE_COPIED), "copied");
	struct file_change fc = { .status = CHANGE_DELETED };
	fc.old_path.bytes = "gone";
	fc.new_path.bytes = "gone2";
	cr_assert_str_eq(selector_file_change_path(&fc)->bytes, "gone");
	fc.status = CHANGE_RENAMED;
	cr_assert_str_eq(selector_file_change_path(&fc)->bytes, "gone2");
	selector_change_set_destroy(NULL);
	cr_assert_not(selector_change_set_limited(NULL));
}

/* Stage 1 narrows libgit2's diff to the paths whose entries differ (treediff.c): a file that
 * becomes a directory and a directory that becomes a file must come out as git shows them, and
 * a change of more paths than the narrowing takes must still be read whole. */
Test(changes_git, trees_turned_into_files_and_back)
{
	struct test_repo t;
	test_repo_create(&t);
	char a[41], b[41], c[41];
	const struct test_edit ea[] = {
		{ "a/b/deep.py", 0100644, "x = 1\n", 0 },
		{ "x", 0100644, "a file\n", 0 },
		{ "dir/one.py", 0100644, "one = 1\n", 0 },
		{ "keep/k.py", 0100644, "k = 1\n", 0 },
		{ "keep/sub/k2.py", 0100644, "k2 = 1\n", 0 },
	};
	test_repo_commit(&t, a, NULL, "A", NULL, 0, ea, 5);
	const char *pa[] = { a };
	/* In two commits (the test helper's tree update cannot swap a tree and a blob at once);
	 * the diff is taken across both. */
	const struct test_edit eb1[] = {
		{ "a/b/deep.py", 0100644, "x = 2\n", 0 },
		{ "x", 0, NULL, 0 },
		{ "dir/one.py", 0, NULL, 0 },
	};
	char b1[41];
	test_repo_commit(&t, b1, NULL, "B1", pa, 1, eb1, 3);
	const char *pb1[] = { b1 };
	const struct test_edit eb[] = {
		{ "x/inner.py", 0100644, "inner = 1\n", 0 },
		{ "dir", 0100644, "now a file\n", 0 },
	};
	test_repo_commit(&t, b, NULL, "B", pb1, 1, eb, 2);
	struct change_set *s;
	cr_assert_eq(selector_changes_from_git(&s, t.dir, a, b, NULL), 0, "%s", err_last());
	cr_assert_eq(s->n_files, 5, "%zu files", s->n_files);
	expect(find(s, "a/b/deep.py"), CHANGE_MODIFIED, "a/b/deep.py", 0100644, 0100644, false);
	expect(find(s, "x/inner.py"), CHANGE_ADDED, "x/inner.py", 0, 0100644, false);
	expect(find(s, "dir"), CHANGE_ADDED, "dir", 0, 0100644, false);
	const struct file_change *fx = NULL, *fd = NULL;
	for (size_t i = 0; i < s->n_files; i++) {
		if (strcmp(s->files[i].old_path.text, "x") == 0)
			fx = &s->files[i];
		if (strcmp(s->files[i].old_path.text, "dir/one.py") == 0)
			fd = &s->files[i];
	}
	cr_assert(fx && fx->status == CHANGE_DELETED, "x deleted");
	cr_assert(fd && fd->status == CHANGE_DELETED, "dir/one.py deleted");
	selector_change_set_destroy(s);

	/* 1,500 files added at once: more than the narrowed diff takes. */
	static struct test_edit many[1500];
	static char names[1500][32];
	for (int i = 0; i < 1500; i++) {
		snprintf(names[i], sizeof(names[i]), "gen/d%02d/f%04d.py", i % 37, i);
		many[i] = (struct test_edit){ names[i], 0100644, "v = 1\n", 0 };
	}
	const char *pb[] = { b };
	test_repo_commit(&t, c, NULL, "C", pb, 1, many, 1500);
	cr_assert_eq(selector_changes_from_git(&s, t.dir, b, c, NULL), 0, "%s", err_last());
	cr_assert_eq(s->n_files, 1500, "%zu files", s->n_files);
	selector_change_set_destroy(s);
	cr_assert_eq(selector_changes_from_git(&s, t.dir, a, a, NULL), 0, "%s", err_last());
	cr_assert_eq(s->n_files, 0, "the same tree: %zu files", s->n_files);
	selector_change_set_destroy(s);
	test_repo_destroy(&t);
}

/* A "tree bomb": a tree whose 16 entries all name one subtree, six levels deep, holds 16^6
 * paths in a few hundred bytes of objects. Stage 1 must stop at TREE_ENTRIES_MAX entries with
 * the bound recorded (the selection then falls back), not walk it; a catalog build refuses it. */
Test(changes_git, tree_bomb_is_bounded, .timeout = 60)
{
	struct test_repo t;
	test_repo_create(&t);
	char a[41];
	const struct test_edit ea[] = { { "a.py", 0100644, "a = 1\n", 0 } };
	test_repo_commit(&t, a, NULL, "A", NULL, 0, ea, 1);
	git_oid blob, tree;
	cr_assert_eq(git_blob_create_from_buffer(&blob, t.repo, "x = 1\n", 6), 0);
	git_treebuilder *tb;
	cr_assert_eq(git_treebuilder_new(&tb, t.repo, NULL), 0);
	cr_assert_eq(git_treebuilder_insert(NULL, tb, "x.txt", &blob, GIT_FILEMODE_BLOB), 0);
	cr_assert_eq(git_treebuilder_write(&tree, tb), 0);
	git_treebuilder_free(tb);
	for (int level = 0; level < 6; level++) {
		cr_assert_eq(git_treebuilder_new(&tb, t.repo, NULL), 0);
		for (int k = 0; k < 16; k++) {
			char name[8];
			snprintf(name, sizeof(name), "d%02d", k);
			cr_assert_eq(
			    git_treebuilder_insert(NULL, tb, name, &tree, GIT_FILEMODE_TREE), 0);
		}
		cr_assert_eq(git_treebuilder_write(&tree, tb), 0);
		git_treebuilder_free(tb);
	}
	git_oid root, bomb_commit, a_id;
	cr_assert_eq(git_treebuilder_new(&tb, t.repo, NULL), 0);
	cr_assert_eq(git_treebuilder_insert(NULL, tb, "test", &tree, GIT_FILEMODE_TREE), 0);
	cr_assert_eq(git_treebuilder_write(&root, tb), 0);
	git_treebuilder_free(tb);
	git_tree *rt;
	git_commit *pa;
	cr_assert_eq(git_oid_fromstr(&a_id, a), 0);
	cr_assert_eq(git_commit_lookup(&pa, t.repo, &a_id), 0);
	cr_assert_eq(git_tree_lookup(&rt, t.repo, &root), 0);
	const git_commit *parents[1] = { pa };
	git_signature *sig;
	cr_assert_eq(git_signature_new(&sig, "t", "t@example.com", 1700000000, 0), 0);
	cr_assert_eq(
	    git_commit_create(&bomb_commit, t.repo, NULL, sig, sig, NULL, "bomb", rt, 1, parents),
	    0);
	git_signature_free(sig);
	git_tree_free(rt);
	git_commit_free(pa);
	char b[41];
	git_oid_tostr(b, sizeof(b), &bomb_commit);

	struct change_set *s;
	cr_assert_eq(selector_changes_from_git(&s, t.dir, a, b, NULL), 0, "%s", err_last());
	cr_assert(selector_change_set_limited(s), "the bound was not recorded");
	cr_assert_str_eq(s->limit_hits[0].what, "tree entries");
	selector_change_set_destroy(s);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *cat;
	cr_assert_eq(selector_catalog_build(&cat, t.dir, b, cache), ERR_LIMIT);
	cr_assert(strstr(err_last(), "entries"), "%s", err_last());
	selector_catalog_cache_destroy(cache);

	/* 300 directories deep: past TREE_DEPTH_MAX, recorded as a bound too. */
	cr_assert_eq(git_treebuilder_new(&tb, t.repo, NULL), 0);
	cr_assert_eq(git_treebuilder_insert(NULL, tb, "x.py", &blob, GIT_FILEMODE_BLOB), 0);
	cr_assert_eq(git_treebuilder_write(&tree, tb), 0);
	git_treebuilder_free(tb);
	for (int level = 0; level < 300; level++) {
		cr_assert_eq(git_treebuilder_new(&tb, t.repo, NULL), 0);
		cr_assert_eq(git_treebuilder_insert(NULL, tb, "d", &tree, GIT_FILEMODE_TREE), 0);
		cr_assert_eq(git_treebuilder_write(&tree, tb), 0);
		git_treebuilder_free(tb);
	}
	git_oid deep_commit;
	cr_assert_eq(git_tree_lookup(&rt, t.repo, &tree), 0);
	cr_assert_eq(git_signature_new(&sig, "t", "t@example.com", 1700000000, 0), 0);
	cr_assert_eq(git_commit_lookup(&pa, t.repo, &a_id), 0);
	parents[0] = pa;
	cr_assert_eq(
	    git_commit_create(&deep_commit, t.repo, NULL, sig, sig, NULL, "deep", rt, 1, parents),
	    0);
	git_signature_free(sig);
	git_commit_free(pa);
	git_tree_free(rt);
	git_oid_tostr(b, sizeof(b), &deep_commit);
	cr_assert_eq(selector_changes_from_git(&s, t.dir, a, b, NULL), 0, "%s", err_last());
	cr_assert(selector_change_set_limited(s), "the depth bound was not recorded");
	cr_assert_str_eq(s->limit_hits[0].what, "tree depth or path length");
	selector_change_set_destroy(s);
	test_repo_destroy(&t);
}
