/* The catalog of upstream tests at head and the stand-in stage 2 of `spyre-ci select` (see
 * select_front.h). Test files are read from the head tree through libgit2, so that neither the
 * work tree nor a checkout matters; each is scanned once with the selector's Python scanner. */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "select_front.h"

static const char *git_msg(void)
{
	const git_error *e = git_error_last();
	return e && e->message ? e->message : "unknown libgit2 error";
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && memcmp(s + a - b, suf, b) == 0;
}

bool front_is_test_path(const char *path)
{
	if (strncmp(path, "test/", 5) != 0 || !ends_with(path, ".py"))
		return false;
	const char *base = strrchr(path, '/') + 1;
	return strncmp(base, "test_", 5) == 0;
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	if (need > SELECT_TESTS_MAX)
		return err_set(ERR_LIMIT, "catalog: more than %d entries", SELECT_TESTS_MAX);
	size_t n = *cap ? 2 * *cap : 64;
	while (n < need)
		n *= 2;
	void *p = realloc(*v, n * size);
	if (!p)
		return err_set(ERR_NOMEM, "catalog: %zu entries", n);
	*v = p;
	*cap = n;
	return 0;
}

/* ---- the catalog ---- */

struct walk {
	char **paths;
	git_oid *oids;
	size_t n, cap, cap2;
	int rc;
};

static int walk_cb(const char *root, const git_tree_entry *e, void *payload)
{
	struct walk *w = payload;
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	char path[PATH_TEXT_MAX];
	if (snprintf(path, sizeof path, "%s%s", root, git_tree_entry_name(e)) >= (int)sizeof path)
		return 0;
	if (!front_is_test_path(path))
		return 0;
	if ((w->rc = grow((void **)&w->paths, &w->cap, w->n + 1, sizeof *w->paths)) < 0 ||
	    (w->rc = grow((void **)&w->oids, &w->cap2, w->n + 1, sizeof *w->oids)) < 0)
		return -1;
	w->paths[w->n] = strdup(path);
	if (!w->paths[w->n]) {
		w->rc = err_set(ERR_NOMEM, "catalog: path");
		return -1;
	}
	git_oid_cpy(&w->oids[w->n++], git_tree_entry_id(e));
	return 0;
}

static bool is_test_class(const struct scan_class *c)
{
	return c->parent_class < 0 && c->parent_function < 0 && strncmp(c->name, "Test", 4) == 0;
}

static bool has_ops_decorator(const struct scan_function *fn)
{
	for (size_t i = 0; i < fn->n_decorators; i++)
		if (!strcmp(fn->decorators[i].name, "ops") ||
		    ends_with(fn->decorators[i].name, ".ops"))
			return true;
	return false;
}

static int add_test(struct front *f, const struct scan_file *sf, const struct scan_function *fn,
		    const char *cls)
{
	int rc = grow((void **)&f->tests, &f->cap_tests, f->n_tests + 1, sizeof *f->tests);
	if (rc < 0)
		return rc;
	size_t len = strlen(sf->path) + (cls ? strlen(cls) + 2 : 0) + strlen(fn->name) + 3;
	struct front_test *t = &f->tests[f->n_tests];
	memset(t, 0, sizeof *t);
	t->id = malloc(len);
	if (!t->id)
		return err_set(ERR_NOMEM, "catalog: test id");
	if (cls)
		snprintf(t->id, len, "%s::%s::%s", sf->path, cls, fn->name);
	else
		snprintf(t->id, len, "%s::%s", sf->path, fn->name);
	t->file = sf;
	t->fn = fn;
	t->ops = fn->uses;
	t->n_ops = fn->n_uses;
	t->opinfo = has_ops_decorator(fn);
	f->n_tests++;
	return 0;
}

static int add_file_tests(struct front *f, const struct scan_file *sf)
{
	for (size_t i = 0; i < sf->n_functions; i++) {
		const struct scan_function *fn = &sf->functions[i];
		int rc = 0;
		if (fn->parent_function >= 0 || strncmp(fn->name, "test", 4) != 0)
			continue;
		if (fn->class_index >= 0 && is_test_class(&sf->classes[fn->class_index]))
			rc = add_test(f, sf, fn, sf->classes[fn->class_index].name);
		else if (fn->class_index < 0 && strncmp(fn->name, "test_", 5) == 0)
			rc = add_test(f, sf, fn, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int scan_blob(struct scan_file **out, git_repository *repo, const git_oid *oid,
		     const char *path)
{
	git_blob *blob = NULL;
	if (git_blob_lookup(&blob, repo, oid) < 0)
		return err_set(ERR_GENERIC, "catalog: blob of %s: %s", path, git_msg());
	int rc = selector_scan(out, path, NULL, git_blob_rawcontent(blob),
			       (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	if (rc == ERR_LIMIT) {
		*out = NULL; /* too large to scan: left out of the catalog, said on stderr */
		fprintf(stderr, "spyre-ci select: %s: %s (skipped)\n", path, err_last());
		return 0;
	}
	return rc;
}

static int scan_all(struct front *f, git_repository *repo, struct walk *w,
		    front_progress_fn progress, void *ctx)
{
	int rc = grow((void **)&f->files, &f->cap_files, w->n ? w->n : 1, sizeof *f->files);
	for (size_t i = 0; i < w->n && rc == 0; i++) {
		struct scan_file *sf = NULL;
		rc = scan_blob(&sf, repo, &w->oids[i], w->paths[i]);
		if (rc == 0 && sf) {
			f->files[f->n_files++] = sf;
			rc = add_file_tests(f, sf);
		}
		if (progress && (i % 64 == 0 || i + 1 == w->n))
			progress(ctx, "scanning test files", i + 1, w->n);
	}
	return rc;
}

static int open_tree(git_repository **repo, git_tree **tree, const char *dir, const char *rev)
{
	git_object *obj = NULL;
	if (git_repository_open_ext(repo, dir, 0, NULL) < 0)
		return err_set(ERR_NOTFOUND, "%s: not a git repository: %s", dir, git_msg());
	if (git_revparse_single(&obj, *repo, rev) < 0)
		return err_set(ERR_NOTFOUND, "revision '%s' not found in %s", rev, dir);
	int rc = git_object_peel((git_object **)tree, obj, GIT_OBJECT_TREE);
	git_object_free(obj);
	return rc < 0 ? err_set(ERR_INVAL, "revision '%s' has no tree: %s", rev, git_msg()) : 0;
}

int front_catalog(struct front *f, const char *repo_dir, const char *head,
		  front_progress_fn progress, void *ctx)
{
	git_repository *repo = NULL;
	git_tree *tree = NULL;
	struct walk w = { 0 };
	git_libgit2_init();
	int rc = open_tree(&repo, &tree, repo_dir, head);
	if (rc == 0 && git_tree_walk(tree, GIT_TREEWALK_PRE, walk_cb, &w) < 0)
		rc = w.rc < 0 ? w.rc : err_set(ERR_GENERIC, "walking %s: %s", head, git_msg());
	if (rc == 0)
		rc = scan_all(f, repo, &w, progress, ctx);
	if (rc == 0 && f->n_tests) {
		f->ids = malloc(f->n_tests * sizeof *f->ids);
		if (!f->ids)
			rc = err_set(ERR_NOMEM, "catalog: ids");
		for (size_t i = 0; rc == 0 && i < f->n_tests; i++)
			f->ids[i] = f->tests[i].id;
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.paths[i]);
	free(w.paths);
	free(w.oids);
	git_tree_free(tree);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

void front_finish(struct front *f)
{
	for (size_t i = 0; i < f->n_tests; i++)
		free(f->tests[i].id);
	free(f->tests);
	for (size_t i = 0; i < f->n_files; i++)
		scan_file_destroy(f->files[i]);
	free(f->files);
	for (size_t i = 0; i < f->n_cands; i++)
		free(f->reasons[i].text);
	free(f->reasons);
	free(f->cands);
	free(f->ids);
	memset(f, 0, sizeof *f);
}
