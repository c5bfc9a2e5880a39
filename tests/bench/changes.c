/* Benchmark of stage 1: selector_changes_from_git over a range of 100 commits that touch about
 * 1,000 files of a generated 2,000-file repository, next to `git diff --name-only` (and `git diff
 * -U0 -M -C`, which reads what we read) on the same range in the same run; then the unified
 * diff parser's speed in MB/s on git's own diff of that range, repeated. Never asserts a time:
 * exits 1 only when a figure is insane (no files read), 2 on bad usage. --smoke: small sizes. */
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "git_floor.h"
#include "selector/changes.h"

struct size {
	int files, dirs, commits, per_commit, lines;
	size_t diff_mb;
};

static void die(const char *what)
{
	const git_error *e = git_error_last();
	fprintf(stderr, "bench-changes: %s: %s\n", what, e ? e->message : err_last());
	exit(1);
}

/* File f's content at version v: `lines` lines, line (v % lines) marked with v. */
static size_t content(char *buf, size_t cap, int f, int v, int lines)
{
	size_t o = 0;
	for (int i = 0; i < lines && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "def f%d_%d(x):  # %s\n", f, i,
				      v && i == v % lines ? "edited" : "same");
	if (v)
		o += (size_t)snprintf(buf + o, cap - o, "# version %d\n", v);
	return o < cap ? o : cap;
}

/* Commits the updates on top of parent (NULL: the empty tree), returns the new commit. */
static void commit(git_repository *repo, git_oid *out, const git_oid *parent, git_tree_update *up,
		   size_t n, int i)
{
	git_commit *pc = NULL;
	git_tree *base = NULL;
	if (parent) {
		if (git_commit_lookup(&pc, repo, parent) < 0 || git_commit_tree(&base, pc) < 0)
			die("parent");
	} else {
		git_treebuilder *tb;
		git_oid empty;
		if (git_treebuilder_new(&tb, repo, NULL) < 0 ||
		    git_treebuilder_write(&empty, tb) < 0 ||
		    git_tree_lookup(&base, repo, &empty) < 0)
			die("empty tree");
		git_treebuilder_free(tb);
	}
	git_oid tid;
	git_tree *tree;
	git_signature *sig;
	char msg[64];
	snprintf(msg, sizeof(msg), "commit %d\n", i);
	if (git_tree_create_updated(&tid, repo, base, n, up) < 0 ||
	    git_tree_lookup(&tree, repo, &tid) < 0 ||
	    git_signature_new(&sig, "Bench", "bench@example.com", 1700000000 + i, 0) < 0 ||
	    git_commit_create(out, repo, "refs/heads/main", sig, sig, NULL, msg, tree, pc ? 1 : 0,
			      (const git_commit **)&pc) < 0)
		die("commit");
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(base);
	git_commit_free(pc);
}

static void path_of(char *p, size_t cap, int f, int dirs)
{
	snprintf(p, cap, "pkg%02d/mod%04d.py", f % dirs, f);
}

/* The repository: one commit with every file, then `commits` commits editing per_commit files
 * each (every tenth also renames one and deletes one). */
static void generate(git_repository *repo, const struct size *z, git_oid *first, git_oid *last)
{
	size_t cap = (size_t)z->lines * 40 + 64;
	char *buf = malloc(cap);
	char(*paths)[64] = calloc((size_t)z->files + 2, sizeof(*paths));
	git_tree_update *up = calloc((size_t)z->files + 2, sizeof(*up));
	if (!buf || !paths || !up)
		die("out of memory");
	for (int f = 0; f < z->files; f++) {
		path_of(paths[f], sizeof(paths[f]), f, z->dirs);
		size_t n = content(buf, cap, f, 0, z->lines);
		up[f] = (git_tree_update){
			GIT_TREE_UPDATE_UPSERT, { { 0 } }, GIT_FILEMODE_BLOB, paths[f]
		};
		if (git_blob_create_from_buffer(&up[f].id, repo, buf, n) < 0)
			die("blob");
	}
	commit(repo, first, NULL, up, (size_t)z->files, 0);
	git_oid prev = *first;
	for (int c = 1; c <= z->commits; c++) {
		size_t n = 0;
		for (int k = 0; k < z->per_commit; k++) {
			int f = (((c - 1) * z->per_commit + k) * 7) % z->files; /* 7: coprime */
			size_t len = content(buf, cap, f, c, z->lines);
			up[n] = (git_tree_update){
				GIT_TREE_UPDATE_UPSERT, { { 0 } }, GIT_FILEMODE_BLOB, paths[f]
			};
			if (git_blob_create_from_buffer(&up[n].id, repo, buf, len) < 0)
				die("blob");
			n++;
		}
		commit(repo, last, &prev, up, n, c);
		prev = *last;
	}
	free(up);
	free(paths);
	free(buf);
}

/* Runs git with argv (no shell), stdout into *out (NULL: discarded). Returns seconds. */
static double run_git(const char *const *argv, char **out, size_t *len)
{
	double t = bench_git(argv, out, len, NULL);
	if (t == -1)
		die("git is needed for the comparison");
	if (t < 0)
		die("git failed");
	return t;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(int argc, char **argv)
{
	struct size z = { 2000, 40, 100, 10, 60, 64 };
	if (argc == 2 && strcmp(argv[1], "--smoke") == 0) {
		z = (struct size){ 300, 10, 20, 10, 30, 4 };
	} else if (argc != 1) {
		fprintf(stderr, "usage: bench-changes [--smoke]\n");
		return 2;
	}
	char dir[] = "/tmp/bench-changes-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	git_libgit2_init();
	git_repository *repo;
	git_oid first, last;
	if (git_repository_init(&repo, dir, 1) < 0)
		die("init");
	uint64_t t0 = clock_mono_ns();
	generate(repo, &z, &first, &last);
	printf("generated %d files, %d commits in %.2f s\n", z.files, z.commits,
	       clock_elapsed_s(t0, clock_mono_ns()));
	char a[41], b[41], gd[300];
	git_oid_tostr(a, sizeof(a), &first);
	git_oid_tostr(b, sizeof(b), &last);
	snprintf(gd, sizeof(gd), "--git-dir=%s", dir);

	double best_lib = 1e9, best_names = 1e9, best_u0 = 1e9;
	struct change_set *s = NULL;
	size_t files = 0, hunks = 0;
	for (int rep = 0; rep < 3; rep++) {
		t0 = clock_mono_ns();
		if (selector_changes_from_git(&s, dir, a, b, NULL) != 0)
			die("selector_changes_from_git");
		double t = clock_elapsed_s(t0, clock_mono_ns());
		best_lib = t < best_lib ? t : best_lib;
		files = s->n_files;
		hunks = 0;
		for (size_t i = 0; i < s->n_files; i++)
			hunks += s->files[i].n_hunks;
		selector_change_set_destroy(s);
		const char *names[] = { "git", gd, "diff", "--name-only", a, b, NULL };
		t = run_git(names, NULL, NULL);
		best_names = t < best_names ? t : best_names;
		const char *u0[] = { "git", gd, "diff", "-U0", "-M", "-C", a, b, NULL };
		t = run_git(u0, NULL, NULL);
		best_u0 = t < best_u0 ? t : best_u0;
	}
	printf("changes_from_git: %zu files, %zu hunks, %d commits: %.1f ms\n", files, hunks,
	       z.commits, best_lib * 1e3);
	printf("git diff --name-only:    %.1f ms (ratio %.2f)\n", best_names * 1e3,
	       best_lib / best_names);
	printf("git diff -U0 -M -C:      %.1f ms (ratio %.2f)\n", best_u0 * 1e3,
	       best_lib / best_u0);

	/* The parser: git's diff of the range, repeated to about diff_mb MB. */
	char *one;
	size_t one_len;
	const char *u3[] = { "git", gd, "diff", "-M", a, b, NULL };
	run_git(u3, &one, &one_len);
	size_t reps = (z.diff_mb << 20) / (one_len ? one_len : 1) + 1, big_len = one_len * reps;
	char *big = malloc(big_len + 1);
	if (!big)
		die("out of memory");
	for (size_t i = 0; i < reps; i++)
		memcpy(big + i * one_len, one, one_len);
	double best_parse = 1e9;
	size_t ufiles = 0;
	for (int rep = 0; rep < 3; rep++) {
		t0 = clock_mono_ns();
		struct changes_opts o = { .max_files = 10000000, .max_hunks = 100000000 };
		if (selector_changes_from_udiff_opts(&s, big, big_len, "bench", &o) != 0)
			die("selector_changes_from_udiff");
		if (selector_change_set_limited(s))
			die("the parse hit a limit");
		double t = clock_elapsed_s(t0, clock_mono_ns());
		best_parse = t < best_parse ? t : best_parse;
		ufiles = s->n_files;
		selector_change_set_destroy(s);
	}
	printf("udiff parse: %.1f MB, %zu files in %.1f ms: %.0f MB/s\n", big_len / 1048576.0,
	       ufiles, best_parse * 1e3, big_len / 1048576.0 / best_parse);
	free(big);
	free(one);
	git_repository_free(repo);
	git_libgit2_shutdown();
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return files == 0 || ufiles == 0 ? 1 : 0;
}
