/* The stand-in stage 2 of `spyre-ci select` (select_front.h): per changed file, the tests it
 * reaches with a reason each. A test file's hunks select the test functions they touch (a hunk
 * outside every test function is a module-level edit: the file's tests); a new test file or a
 * renamed one selects its tests; documentation selects nothing; anything else is beyond this
 * stand-in and falls back to every test, saying which path did it. A test is "added" when the
 * base revision's file has no function of that class and name (without a base: when its def
 * line lies in a pure insertion). */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "select_front.h"

struct hit {
	double score;
	char *text;
	bool added;
};

static bool is_doc_path(const char *p)
{
	size_t n = strlen(p);
	return strncmp(p, "docs/", 5) == 0 ||
	       (n > 3 && (!strcmp(p + n - 3, ".md") || !strcmp(p + n - 4, ".rst") ||
			  !strcmp(p + n - 4, ".txt")));
}

/* Keeps the strongest reason: `what` followed by the path. */
static int set_hit(struct hit *h, double score, const char *what, const char *path, bool added)
{
	h->added = h->added || added;
	if (h->text && h->score >= score)
		return 0;
	char buf[PATH_TEXT_MAX + 128];
	snprintf(buf, sizeof buf, "%s %s", what, path);
	free(h->text);
	h->text = strdup(buf);
	h->score = score;
	return h->text ? 0 : err_set(ERR_NOMEM, "stage 2: reason");
}

/* The class part of a test id, or NULL; `fn`'s class name. */
static const char *class_of(const struct front_test *t)
{
	return t->fn->class_index >= 0 ? t->file->classes[t->fn->class_index].name : NULL;
}

static bool base_has(const struct scan_file *base, const struct front_test *t)
{
	const char *cls = class_of(t);
	for (size_t i = 0; base && i < base->n_functions; i++) {
		const struct scan_function *fn = &base->functions[i];
		const char *bc = fn->class_index >= 0 ? base->classes[fn->class_index].name : NULL;
		if (!strcmp(fn->name, t->fn->name) &&
		    ((!cls && !bc) || (cls && bc && !strcmp(cls, bc))))
			return true;
	}
	return false;
}

static bool in_insertion(const struct file_change *fc, uint32_t line)
{
	for (size_t i = 0; i < fc->n_hunks; i++) {
		const struct change_hunk *h = &fc->hunks[i];
		if (h->old_lines == 0 && line >= h->new_start && line < h->new_start + h->new_lines)
			return true;
	}
	return false;
}

static int scan_base(struct scan_file **out, git_tree *base, git_repository *repo, const char *path)
{
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	*out = NULL;
	if (!base || git_tree_entry_bypath(&e, base, path) < 0)
		return 0; /* no such file at base: every test is new */
	int rc = 0;
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(e)) == 0)
		rc = selector_scan(out, path, NULL, git_blob_rawcontent(blob),
				   (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	git_tree_entry_free(e);
	return rc == ERR_LIMIT ? 0 : rc;
}

static bool overlaps(const struct scan_function *fn, const struct change_hunk *h)
{
	uint32_t a = h->new_start, b = h->new_start + (h->new_lines ? h->new_lines - 1 : 0);
	return fn->deco_line <= b && a <= fn->last_line;
}

/* The tests of one modified or added test file. */
static int test_file_hits(struct front *f, struct hit *hits, const struct file_change *fc,
			  const char *path, const struct scan_file *base, bool have_base)
{
	int rc = 0;
	bool whole = fc->status != CHANGE_MODIFIED || fc->binary || fc->n_hunks == 0;
	for (size_t k = 0; k < fc->n_hunks && !whole; k++) {
		bool any = false;
		for (size_t i = 0; i < f->n_tests && !any; i++)
			any = f->tests[i].file->path && !strcmp(f->tests[i].file->path, path) &&
			      overlaps(f->tests[i].fn, &fc->hunks[k]);
		whole = !any && fc->hunks[k].new_lines > 0;
	}
	for (size_t i = 0; i < f->n_tests && rc == 0; i++) {
		const struct front_test *t = &f->tests[i];
		if (strcmp(t->file->path, path) != 0)
			continue;
		bool added = have_base ? !base_has(base, t) : in_insertion(fc, t->fn->first_line);
		if (fc->status == CHANGE_ADDED)
			added = true;
		bool edited = false;
		for (size_t k = 0; k < fc->n_hunks && !edited; k++)
			edited = overlaps(t->fn, &fc->hunks[k]);
		if (edited && fc->status == CHANGE_MODIFIED)
			rc = set_hit(&hits[i], 1.0, "test function edited in", path, added);
		else if (whole)
			rc = set_hit(&hits[i], 0.5,
				     fc->status == CHANGE_MODIFIED ? "module-level edit of"
								   : "new or renamed test file",
				     path, added);
	}
	return rc;
}

static int one_change(struct front *f, struct hit *hits, const struct file_change *fc,
		      git_repository *repo, git_tree *base)
{
	const char *path = selector_file_change_path(fc)->bytes;
	if (fc->status == CHANGE_DELETED && front_is_test_path(path))
		return 0; /* its tests are gone with it */
	if (front_is_test_path(path) && fc->status != CHANGE_TYPECHANGE) {
		struct scan_file *bs = NULL;
		int rc = scan_base(&bs, base, repo, fc->old_path.bytes);
		if (rc == 0)
			rc = test_file_hits(f, hits, fc, path, bs, base != NULL);
		scan_file_destroy(bs);
		return rc;
	}
	if (is_doc_path(path))
		return 0;
	if (!f->fallback) {
		f->fallback = true;
		snprintf(f->fallback_reason, sizeof f->fallback_reason,
			 "%s changed: stage 2 cannot trace it (every test selected)",
			 selector_file_change_path(fc)->text);
	}
	return 0;
}

static int open_base(git_repository **repo, git_tree **tree, const char *dir, const char *rev)
{
	git_object *obj = NULL;
	if (git_repository_open_ext(repo, dir, 0, NULL) < 0)
		return err_set(ERR_NOTFOUND, "%s: not a git repository", dir);
	if (!rev || !*rev)
		return 0;
	if (git_revparse_single(&obj, *repo, rev) < 0)
		return err_set(ERR_NOTFOUND, "revision '%s' not found in %s", rev, dir);
	int rc = git_object_peel((git_object **)tree, obj, GIT_OBJECT_TREE);
	git_object_free(obj);
	return rc < 0 ? err_set(ERR_INVAL, "revision '%s' has no tree", rev) : 0;
}

static int make_cands(struct front *f, struct hit *hits)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n_tests; i++)
		n += f->fallback || hits[i].text;
	f->cands = calloc(n ? n : 1, sizeof *f->cands);
	f->reasons = calloc(n ? n : 1, sizeof *f->reasons);
	if (!f->cands || !f->reasons)
		return err_set(ERR_NOMEM, "stage 2: %zu candidates", n);
	for (size_t i = 0; i < f->n_tests; i++) {
		if (!f->fallback && !hits[i].text)
			continue;
		struct select_reason *r = &f->reasons[f->n_cands];
		bool fb = f->fallback;
		snprintf(r->kind, sizeof r->kind, "%s", fb ? "fallback" : "edited");
		r->score = fb ? 1.0 : hits[i].score;
		r->text = strdup(fb ? f->fallback_reason : hits[i].text);
		if (!r->text)
			return err_set(ERR_NOMEM, "stage 2: reason");
		f->cands[f->n_cands++] = (struct select_candidate){
			.id = f->tests[i].id,
			.reasons = r,
			.n_reasons = 1,
			.added = hits[i].added,
			.opinfo = f->tests[i].opinfo,
			.body_ops = f->tests[i].ops,
			.n_body_ops = f->tests[i].n_ops,
		};
	}
	return 0;
}

int front_impact(struct front *f, const char *repo_dir, const char *base,
		 const struct change_set *cs)
{
	git_repository *repo = NULL;
	git_tree *tree = NULL;
	struct hit *hits = calloc(f->n_tests ? f->n_tests : 1, sizeof *hits);
	if (!hits)
		return err_set(ERR_NOMEM, "stage 2: %zu tests", f->n_tests);
	git_libgit2_init();
	int rc = open_base(&repo, &tree, repo_dir, base);
	if (rc == 0 && selector_change_set_limited(cs)) {
		f->fallback = true;
		snprintf(f->fallback_reason, sizeof f->fallback_reason,
			 "the change hit the %s limit (%llu): it cannot be read whole",
			 cs->limit_hits[0].what, (unsigned long long)cs->limit_hits[0].limit);
	}
	for (size_t i = 0; i < cs->n_files && rc == 0; i++)
		rc = one_change(f, hits, &cs->files[i], repo, tree);
	if (rc == 0)
		rc = make_cands(f, hits);
	for (size_t i = 0; i < f->n_tests; i++)
		free(hits[i].text);
	free(hits);
	git_tree_free(tree);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}
