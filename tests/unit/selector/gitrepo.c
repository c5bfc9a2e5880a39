/* Test helper: repositories built with libgit2, and git run with an argument vector (see
 * gitrepo.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "gitrepo.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fsutil.h"

extern char **environ;

static void check_git(int rc, const char *what)
{
	if (rc < 0) {
		const git_error *e = git_error_last();
		cr_assert_fail("%s: %s", what, e ? e->message : "?");
	}
}

void test_repo_create(struct test_repo *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/sel-changes-XXXXXX");
	cr_assert_not_null(mkdtemp(t->dir));
	git_libgit2_init();
	check_git(git_repository_init(&t->repo, t->dir, 1), "init");
	t->when = 1700000000;
}

int test_rm_tree(const char *dir)
{
	return fs_remove_tree(dir) < 0 ? -1 : 0;
}

void test_repo_destroy(struct test_repo *t)
{
	git_repository_free(t->repo);
	git_libgit2_shutdown();
	test_rm_tree(t->dir);
}

void test_repo_commit(struct test_repo *t, char hex[41], const char *ref, const char *msg,
		      const char *const *parents, size_t nparents, const struct test_edit *edits,
		      size_t nedits)
{
	git_commit *pc[4] = { 0 };
	cr_assert(nparents <= 4);
	for (size_t i = 0; i < nparents; i++) {
		git_oid id;
		check_git(git_oid_fromstr(&id, parents[i]), "parent id");
		check_git(git_commit_lookup(&pc[i], t->repo, &id), "parent");
	}
	git_tree *base = NULL;
	if (nparents) {
		check_git(git_commit_tree(&base, pc[0]), "parent tree");
	} else {
		git_treebuilder *tb;
		git_oid empty;
		check_git(git_treebuilder_new(&tb, t->repo, NULL), "treebuilder");
		check_git(git_treebuilder_write(&empty, tb), "empty tree");
		git_treebuilder_free(tb);
		check_git(git_tree_lookup(&base, t->repo, &empty), "empty tree");
	}
	git_tree_update *up = calloc(nedits ? nedits : 1, sizeof(*up));
	cr_assert_not_null(up);
	for (size_t i = 0; i < nedits; i++) {
		up[i].path = edits[i].path;
		if (!edits[i].content) {
			up[i].action = GIT_TREE_UPDATE_REMOVE;
			continue;
		}
		up[i].action = GIT_TREE_UPDATE_UPSERT;
		up[i].filemode = (git_filemode_t)edits[i].mode;
		if (edits[i].mode == GIT_FILEMODE_COMMIT) {
			check_git(git_oid_fromstr(&up[i].id, edits[i].content), "gitlink id");
		} else {
			size_t len = edits[i].len ? edits[i].len : strlen(edits[i].content);
			check_git(
			    git_blob_create_from_buffer(&up[i].id, t->repo, edits[i].content, len),
			    "blob");
		}
	}
	git_oid tree_id, cid;
	check_git(git_tree_create_updated(&tree_id, t->repo, base, nedits, up), "tree");
	free(up);
	git_tree *tree;
	check_git(git_tree_lookup(&tree, t->repo, &tree_id), "tree lookup");
	git_signature *sig;
	check_git(git_signature_new(&sig, "Test", "test@example.com", t->when++, 0), "signature");
	check_git(git_commit_create(&cid, t->repo, ref, sig, sig, NULL, msg, tree, nparents,
				    (const git_commit **)pc),
		  "commit");
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(base);
	for (size_t i = 0; i < nparents; i++)
		git_commit_free(pc[i]);
	git_oid_tostr(hex, 41, &cid);
}

char *test_git_output(const struct test_repo *t, const char *const *args, size_t *len)
{
	if (access("/usr/bin/git", X_OK) != 0 && access("/usr/local/bin/git", X_OK) != 0)
		return NULL;
	char gitdir[300];
	snprintf(gitdir, sizeof(gitdir), "--git-dir=%s", t->dir);
	const char *argv[32] = { "git", gitdir,
				 "-c",  "core.quotePath=true",
				 "-c",  "diff.noprefix=false",
				 "-c",  "color.ui=never" };
	size_t argc = 8;
	for (size_t i = 0; args[i]; i++) {
		cr_assert(argc < 31);
		argv[argc++] = args[i];
	}
	argv[argc] = NULL;
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	pid_t pid;
	int rc = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *out = malloc(cap);
	cr_assert_not_null(out);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			out = realloc(out, cap);
			cr_assert_not_null(out);
		}
		ssize_t k = read(fds[0], out + n, cap - n - 1);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fds[0]);
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "git %s failed", args[0]);
	out[n] = '\0';
	*len = n;
	return out;
}

/* n numbered lines "<stem> i\n" into buf (i from 1), with line `changed` (0: none) altered. */
static const char *numbered(char *buf, size_t cap, const char *stem, int n, int changed)
{
	size_t o = 0;
	for (int i = 1; i <= n; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s %d%s\n", stem, i,
				      i == changed ? " !" : "");
	return buf;
}

void test_repo_scenario(struct test_repo *t, char a[41], char b[41])
{
	static char keep[2048], mod_a[2048], ren_a[2048], ren_b[2048], cp_a[2048], cp_b[2048],
	    cp_dst[4096], mod_b[2048];
	static const char bin_a[] = "\x00\x01\x02binary\x00\xff",
			  bin_b[] = "\x00\x01\x03binary\x00\xfe";
	numbered(keep, sizeof(keep), "keep", 20, 0);
	numbered(mod_a, sizeof(mod_a), "mod", 10, 0);
	numbered(ren_a, sizeof(ren_a), "def f(): return", 30, 0);
	numbered(ren_b, sizeof(ren_b), "def f(): return", 30, 15);
	numbered(cp_a, sizeof(cp_a), "value =", 30, 0);
	numbered(cp_b, sizeof(cp_b), "value =", 30, 1);
	snprintf(cp_dst, sizeof(cp_dst), "%sextra\n", cp_a);
	/* mod.py at B: line 3 changed, line 8 deleted, a line appended. */
	snprintf(mod_b, sizeof(mod_b),
		 "mod 1\nmod 2\nmod 3 !\nmod 4\nmod 5\nmod 6\nmod 7\nmod 9\n"
		 "mod 10\nmod 11\n");
	struct test_edit ea[] = {
		{ "keep.py", 0100644, keep, 0 },
		{ "mod.py", 0100644, mod_a, 0 },
		{ "del.py", 0100644, "x\n", 0 },
		{ "ren_old.py", 0100644, ren_a, 0 },
		{ "copy_src.py", 0100644, cp_a, 0 },
		{ "mode.sh", 0100644, "echo hi\n", 0 },
		{ "link", 0120000, "keep.py", 0 },
		{ "sub", 0160000, "1111111111111111111111111111111111111111", 0 },
		{ "bin.dat", 0100644, bin_a, sizeof(bin_a) - 1 },
	};
	test_repo_commit(t, a, "refs/heads/main", "base\n", NULL, 0, ea,
			 sizeof(ea) / sizeof(ea[0]));
	struct test_edit eb[] = {
		{ "mod.py", 0100644, mod_b, 0 },
		{ "del.py", 0, NULL, 0 },
		{ "ren_old.py", 0, NULL, 0 },
		{ "renamed/ren_new.py", 0100644, ren_b, 0 },
		{ "copy_src.py", 0100644, cp_b, 0 },
		{ "copy_dst.py", 0100644, cp_dst, 0 },
		{ "mode.sh", 0100755, "echo hi\n", 0 },
		{ "link", 0100644, "keep.py\n", 0 },
		{ "sub", 0160000, "2222222222222222222222222222222222222222", 0 },
		{ "bin.dat", 0100644, bin_b, sizeof(bin_b) - 1 },
		{ "new.py", 0100644, "a\nb\nc\n", 0 },
		{ "caf\xe9.py", 0100644, "latin-1 name\n", 0 },
		{ "newlink", 0120000, "mod.py", 0 },
	};
	const char *pa[] = { a };
	test_repo_commit(t, b, "refs/heads/main", "head: edits\n\nFixes test_mod.\n", pa, 1, eb,
			 sizeof(eb) / sizeof(eb[0]));
}
