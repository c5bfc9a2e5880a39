/* Test helper: builds small git repositories with libgit2 in a temporary directory (blobs,
 * trees and commits written directly, no work tree), and runs git as a subprocess. */
#ifndef TESTS_UNIT_SELECTOR_GITREPO_H
#define TESTS_UNIT_SELECTOR_GITREPO_H

#include <git2.h>
#include <stdbool.h>
#include <stddef.h>

struct test_repo {
	char dir[256];
	git_repository *repo;
	git_signature *sig;
	long when;
};

/* One entry of a commit's tree edit: content NULL removes the path; a gitlink's content is
 * the hex id of the commit it points to. */
struct test_edit {
	const char *path;
	unsigned mode;
	const char *content;
	size_t len; /* 0: strlen(content) */
};

void test_repo_create(struct test_repo *t);
void test_repo_destroy(struct test_repo *t);
/* A commit on top of `parents` (nparents 0: from the empty tree, else the first parent's
 * tree), with the edits applied; updates `ref` when not NULL. Returns its hex id in `hex`. */
void test_repo_commit(struct test_repo *t, char hex[41], const char *ref, const char *msg,
		      const char *const *parents, size_t nparents, const struct test_edit *edits,
		      size_t nedits);

/* Removes a directory tree (nftw, no shell); 0 or -1. */
int test_rm_tree(const char *dir);

/* Runs `git --git-dir=DIR args...` (no shell) and returns its stdout, or NULL when git is not
 * installed. Fails the test when git exits non-zero. */
char *test_git_output(const struct test_repo *t, const char *const *args, size_t *len);

/* The repository most tests read: commit A, then B that adds, modifies, deletes, renames (with
 * an edit), copies, changes a mode, turns a symlink into a file, moves a submodule, edits a
 * binary file, and adds a non-UTF-8 path and a symlink. */
void test_repo_scenario(struct test_repo *t, char a[41], char b[41]);
#endif
