/* The catalog of one revision: walks the tree through libgit2 (or derives it from a kept
 * catalog and a tree diff, or from another by overrides), reads each blob of interest through
 * the cache (catalog_cache.c), and extracts the tests of the test files. */
#include <git2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"
#include "common/limits.h"
#include "treediff.h"

/* ---- the tree walk ---- */

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

bool catalog__file_kind(const char *path, enum catalog_file_kind *kind)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(path, "test/", 5) == 0 && has_suffix(base, ".py")) {
		*kind = strncmp(base, "test_", 5) == 0 ? CATALOG_TEST : CATALOG_TEST_HELPER;
		return true;
	}
	if (strncmp(path, "torch/", 6) == 0 && has_suffix(path, ".py")) {
		*kind = CATALOG_SOURCE;
		return true;
	}
	if (strcmp(path, "aten/src/ATen/native/native_functions.yaml") == 0) {
		*kind = CATALOG_YAML;
		return true;
	}
	if (strncmp(path, "aten/src/ATen/native/", 21) == 0 &&
	    (has_suffix(path, ".cpp") || has_suffix(path, ".cu"))) {
		*kind = CATALOG_CPP;
		return true;
	}
	return false;
}

bool selector_catalog_is_opdb(const char *path);
bool selector_catalog_is_opdb(const char *path)
{
	return strcmp(path, "torch/testing/_internal/common_methods_invocations.py") == 0 ||
	       (strncmp(path, "torch/testing/_internal/opinfo/definitions/", 43) == 0 &&
		has_suffix(path, ".py"));
}

static char *module_of(struct arena *a, const char *path)
{
	size_t n = strlen(path) - 3; /* ".py" */
	if (has_suffix(path, "/__init__.py"))
		n = strlen(path) - strlen("/__init__.py");
	char *m = scan__strndup(a, path, n);
	if (!m)
		return NULL;
	for (char *p = m; *p; p++)
		if (*p == '/')
			*p = '.';
	return m;
}

struct walk {
	struct catalog *cat;
	struct catalog_priv *priv;
	struct catalog_cache *cache;
	git_repository *repo;
	size_t cap;
	int rc;
	size_t entries; /* visited, trees included (TREE_ENTRIES_MAX) */
};

/* Appends the file of interest `path` (blob `id`) to the catalog, its blob read through the
 * cache. 0, or a negative code (also in w->rc). */
static int add_file(struct walk *w, const char *path, size_t pl, const git_oid *id,
		    enum catalog_file_kind kind)
{
	if (w->cat->n_files >= CATALOG_FILES_MAX)
		return w->rc = err_set(ERR_LIMIT, "catalog: more than %d files of interest",
				       CATALOG_FILES_MAX);
	void *p = scan__grow(w->cat->files, w->cat->n_files, &w->cap, sizeof(*w->cat->files));
	if (!p)
		return w->rc = err_set(ERR_NOMEM, "catalog files");
	w->cat->files = p;
	struct catalog_file *f = &w->cat->files[w->cat->n_files];
	*f = (struct catalog_file){ .kind = kind };
	f->path = scan__strndup(&w->priv->arena, path, pl);
	if (kind == CATALOG_SOURCE) {
		f->module = module_of(&w->priv->arena, path);
		f->opdb = selector_catalog_is_opdb(path);
	}
	if (!f->path || (kind == CATALOG_SOURCE && !f->module))
		return w->rc = err_set(ERR_NOMEM, "catalog path");
	git_oid_tostr(f->blob_id, sizeof(f->blob_id), id);
	w->rc = catalog__cache_get(&f->blob, w->cache, w->repo, id, kind, f->path, f->module);
	if (w->rc)
		return w->rc;
	w->cat->n_files++;
	return 0;
}

static int walk_cb(const char *root, const git_tree_entry *entry, void *payload)
{
	struct walk *w = payload;
	if (++w->entries > TREE_ENTRIES_MAX) {
		w->rc = err_set(ERR_LIMIT,
				"catalog: the tree has more than %d entries (shared subtrees?)",
				TREE_ENTRIES_MAX);
		return -1;
	}
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		return 0;
	char path[PATH_TEXT_MAX];
	int pl = snprintf(path, sizeof(path), "%s%s", root, git_tree_entry_name(entry));
	enum catalog_file_kind kind;
	if (pl < 0 || (size_t)pl >= sizeof(path) || !catalog__file_kind(path, &kind))
		return 0;
	return add_file(w, path, (size_t)pl, git_tree_entry_id(entry), kind) ? -1 : 0;
}

/* A copy of another catalog's file: the strings into this catalog's arena, the blob shared. */
static int copy_file(struct walk *w, const struct catalog_file *src)
{
	if (w->cat->n_files >= CATALOG_FILES_MAX)
		return err_set(ERR_LIMIT, "catalog: more than %d files of interest",
			       CATALOG_FILES_MAX);
	void *p = scan__grow(w->cat->files, w->cat->n_files, &w->cap, sizeof(*w->cat->files));
	if (!p)
		return err_set(ERR_NOMEM, "catalog files");
	w->cat->files = p;
	struct catalog_file *f = &w->cat->files[w->cat->n_files];
	*f = *src;
	f->path = scan__strndup(&w->priv->arena, src->path, strlen(src->path));
	f->module =
	    src->module ? scan__strndup(&w->priv->arena, src->module, strlen(src->module)) : NULL;
	if (!f->path || (src->module && !f->module))
		return err_set(ERR_NOMEM, "catalog path");
	w->cat->n_files++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The catalog of `tree` from `prev`'s (another tree's, of the same repository) and the paths
 * that differ between the two trees, without walking the whole tree: 0 done (*same when no
 * file of interest differs: the caller may share `prev`), 1 when the trees differ in more than
 * CATALOG_DERIVE_PATHS_MAX paths or prev's tree cannot be read (walk instead), or a negative
 * code. Files come out sorted by path. */
static int derive(struct walk *w, const struct catalog *prev, git_tree *tree, bool *same)
{
	const struct catalog_priv *pp = prev->priv_;
	git_oid pid;
	git_tree *ptree = NULL;
	if (git_oid_fromstr(&pid, pp->tree_id) < 0 || git_tree_lookup(&ptree, w->repo, &pid) < 0) {
		err_clear();
		return 1;
	}
	struct treediff td = { .max = CATALOG_DERIVE_PATHS_MAX };
	int rc = treediff__paths(&td, w->repo, ptree, tree);
	git_tree_free(ptree);
	if (rc) {
		treediff__free(&td);
		if (rc == ERR_NOMEM)
			return rc;
		err_clear(); /* too wide or unreadable here: the walk decides */
		return 1;
	}
	enum catalog_file_kind kind;
	size_t k = 0;
	for (size_t i = 0; i < td.n; i++) {
		/* As the walk: a path too long for it is no file of interest. */
		if (strlen(td.paths[i]) < PATH_TEXT_MAX && catalog__file_kind(td.paths[i], &kind))
			td.paths[k++] = td.paths[i];
		else
			free(td.paths[i]);
	}
	td.n = k;
	*same = k == 0;
	if (k > 1)
		qsort(td.paths, k, sizeof(*td.paths), cmp_str);
	size_t i = 0, j = 0;
	while (!rc && !*same && (i < prev->n_files || j < td.n)) {
		int c = i >= prev->n_files ? 1
			: j >= td.n        ? -1
					   : strcmp(prev->files[i].path, td.paths[j]);
		if (c < 0) {
			rc = copy_file(w, &prev->files[i++]);
			continue;
		}
		if (c == 0)
			i++; /* changed or gone: read from the tree */
		const char *path = td.paths[j++];
		while (j < td.n && strcmp(td.paths[j], path) == 0)
			j++; /* a type change lists a path twice */
		git_tree_entry *e = NULL;
		if (git_tree_entry_bypath(&e, tree, path) == 0) {
			if (git_tree_entry_type(e) == GIT_OBJECT_BLOB &&
			    catalog__file_kind(path, &kind))
				rc = add_file(w, path, strlen(path), git_tree_entry_id(e), kind);
			git_tree_entry_free(e);
		}
	}
	treediff__free(&td);
	return rc;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct catalog_file *)a)->path,
		      ((const struct catalog_file *)b)->path);
}

static int open_tree(git_repository **repo, git_tree **tree, char id[41], const char *dir,
		     const char *rev)
{
	if (selector__repo_open(repo, dir) != 0)
		return err_set(ERR_NOTFOUND, "%s: not a git repository: %s", dir,
			       git_error_last()->message);
	*tree = NULL;
	id[0] = 0;
	if (!rev || !*rev)
		return 0;
	git_object *obj;
	if (git_revparse_single(&obj, *repo, rev) != 0)
		return err_set(ERR_NOTFOUND, "%s: revision '%s' not found", dir, rev);
	git_object *peeled;
	int e = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (e != 0)
		return err_set(ERR_NOTFOUND, "%s: '%s' is not a commit", dir, rev);
	git_oid_tostr(id, 41, git_object_id(peeled));
	e = git_commit_tree(tree, (git_commit *)peeled);
	git_object_free(peeled);
	if (e != 0)
		return err_set(ERR_GENERIC, "%s: tree of '%s': %s", dir, rev,
			       git_error_last()->message);
	return 0;
}

/* An empty catalog of `cache`, live from now on (its files are in use from the first one). */
static struct catalog *catalog_new(struct catalog_cache *cache)
{
	struct catalog *cat = calloc(1, sizeof(*cat));
	struct catalog_priv *priv = calloc(1, sizeof(*priv));
	if (!cat || !priv) {
		free(cat);
		free(priv);
		err_set(ERR_NOMEM, "catalog");
		return NULL;
	}
	cat->priv_ = priv;
	priv->refs = 1;
	priv->cache = cache;
	priv->cat = cat;
	priv->live_next = cache->live;
	if (cache->live)
		cache->live->live_prev = priv;
	cache->live = priv;
	return cat;
}

/* By path, then in the caller's order (qsort is not stable). */
static int cmp_override(const void *a, const void *b)
{
	const struct catalog_override *x = *(struct catalog_override *const *)a,
				      *y = *(struct catalog_override *const *)b;
	int c = strcmp(x->path, y->path);
	return c ? c : (x > y) - (x < y);
}

/* True for an id of zeros: the side of a change that does not exist. */
static bool null_id(const char *hex)
{
	return hex[strspn(hex, "0")] == 0;
}

/* Applies one override to the catalog being built: the file read from blob `hex` (an
 * abbreviation will do) or, when NULL, zeros or not in the repository, left out. */
static int apply_override(struct walk *w, struct catalog_override *o, size_t *missing)
{
	enum catalog_file_kind kind;
	o->found = true;
	if (!o->blob || null_id(o->blob) || !catalog__file_kind(o->path, &kind))
		return 0;
	git_oid oid;
	git_object *obj = NULL;
	size_t len = strlen(o->blob);
	if (len < 4 || len > GIT_OID_HEXSZ || git_oid_fromstrn(&oid, o->blob, len) < 0 ||
	    git_object_lookup_prefix(&obj, w->repo, &oid, len, GIT_OBJECT_BLOB) < 0) {
		err_clear();
		(*missing)++;
		o->found = false;
		return 0;
	}
	int rc = add_file(w, o->path, strlen(o->path), git_object_id(obj), kind);
	git_object_free(obj);
	return rc;
}

int selector_catalog_build_overrides(struct catalog **out, const char *repo_dir,
				     const struct catalog *from, struct catalog_override *ov,
				     size_t n_ov, struct catalog_cache *cache, size_t *missing)
{
	*missing = 0;
	if (!out || !repo_dir || !from || !cache || (n_ov && !ov))
		return err_set(ERR_INVAL, "catalog overrides: NULL argument");
	struct catalog_override **sorted = malloc((n_ov + 1) * sizeof(*sorted));
	struct catalog *cat = sorted ? catalog_new(cache) : NULL;
	if (!cat) {
		free(sorted);
		return err_set(ERR_NOMEM, "catalog overrides");
	}
	for (size_t k = 0; k < n_ov; k++) {
		ov[k].found = true;
		sorted[k] = &ov[k];
	}
	qsort(sorted, n_ov, sizeof(*sorted), cmp_override);
	memcpy(cat->commit_id, from->commit_id, sizeof(cat->commit_id));
	git_libgit2_init();
	struct walk w = { cat, cat->priv_, cache, NULL, 0, 0 };
	int rc = 0;
	if (selector__repo_open(&w.repo, repo_dir) != 0)
		rc = err_set(ERR_NOTFOUND, "%s: not a git repository: %s", repo_dir,
			     git_error_last()->message);
	size_t i = 0, j = 0;
	while (!rc && (i < from->n_files || j < n_ov)) {
		int c = i >= from->n_files ? 1
			: j >= n_ov        ? -1
					   : strcmp(from->files[i].path, sorted[j]->path);
		if (c < 0) {
			rc = copy_file(&w, &from->files[i++]);
			continue;
		}
		if (c == 0)
			i++;
		/* Of several overrides of a path, the last with a blob counts (a file renamed away
		 * and another added at its path: the path has content), else the last. */
		struct catalog_override *o = sorted[j++];
		while (j < n_ov && strcmp(sorted[j]->path, o->path) == 0) {
			if (sorted[j]->blob || !o->blob)
				o = sorted[j];
			j++;
		}
		rc = apply_override(&w, o, missing);
	}
	git_repository_free(w.repo);
	git_libgit2_shutdown();
	free(sorted);
	if (!rc)
		rc = catalog__extract_tests(cat, cat->priv_);
	if (rc) {
		selector_catalog_destroy(cat);
		return rc;
	}
	*out = cat;
	return 0;
}

int selector_catalog_build(struct catalog **out, const char *repo_dir, const char *rev,
			   struct catalog_cache *cache)
{
	if (!out || !repo_dir || !cache)
		return err_set(ERR_INVAL, "catalog_build: NULL argument");
	struct catalog *cat = catalog_new(cache);
	if (!cat)
		return ERR_NOMEM;
	struct catalog_priv *priv = cat->priv_;
	git_libgit2_init();
	git_repository *repo = NULL;
	git_tree *tree = NULL;
	int rc = open_tree(&repo, &tree, cat->commit_id, repo_dir, rev);
	struct catalog *shared = NULL;
	if (!rc && tree) {
		git_oid_tostr(priv->tree_id, sizeof(priv->tree_id), git_tree_id(tree));
		shared = catalog__tree_get(cache, priv->tree_id);
	}
	bool derived = false;
	struct walk w = { cat, priv, cache, repo, 0, 0 };
	if (!rc && tree && !shared && cache->n_trees) {
		/* From the newest catalog kept: the previous commit's, in the daemon's order. */
		struct catalog *prev = cache->trees[cache->n_trees - 1].cat;
		bool same = false;
		int d = derive(&w, prev, tree, &same);
		if (d < 0) {
			rc = d;
		} else if (d == 0 && same) {
			shared = prev; /* no file of interest differs: the same catalog */
			((struct catalog_priv *)prev->priv_)->refs++;
			catalog__tree_put(cache, priv->tree_id, prev);
			cache->derived++;
		} else if (d == 0) {
			derived = true;
			cache->derived++;
		} else {
			free(cat->files);
			cat->files = NULL;
			cat->n_files = 0;
			w.cap = 0;
		}
	}
	if (!rc && tree && !shared && !derived) {
		if (git_tree_walk(tree, GIT_TREEWALK_PRE, walk_cb, &w) != 0)
			rc = w.rc ? w.rc
				  : err_set(ERR_GENERIC, "%s: tree walk: %s", repo_dir,
					    git_error_last()->message);
	}
	git_tree_free(tree);
	git_repository_free(repo);
	git_libgit2_shutdown();
	if (shared) {
		selector_catalog_destroy(cat);
		*out = shared;
		return 0;
	}
	if (!rc) {
		if (cat->n_files && !derived)
			qsort(cat->files, cat->n_files, sizeof(*cat->files), cmp_file);
		rc = catalog__extract_tests(cat, priv);
	}
	if (rc) {
		selector_catalog_destroy(cat);
		return rc;
	}
	if (priv->tree_id[0])
		catalog__tree_put(cache, priv->tree_id, cat);
	*out = cat;
	return 0;
}

void selector_catalog_destroy(struct catalog *cat)
{
	if (!cat)
		return;
	struct catalog_priv *priv = cat->priv_;
	if (priv && priv->refs > 1) {
		priv->refs--;
		return;
	}
	if (priv) {
		if (priv->live_prev)
			priv->live_prev->live_next = priv->live_next;
		else if (priv->cache && priv->cache->live == priv)
			priv->cache->live = priv->live_next;
		if (priv->live_next)
			priv->live_next->live_prev = priv->live_prev;
		impact__graph_destroy(priv->graph);
		impact__msg_index_destroy(priv->msg_index);
		free(priv->by_id);
		strmap_free(&priv->op_infos);
		catalog__oplists_free(priv);
		scan__arena_free(&priv->arena);
		free(priv);
	}
	free(cat->files);
	free(cat->tests);
	free(cat);
}

const struct catalog_file *selector_catalog_file(const struct catalog *cat, const char *path)
{
	size_t lo = 0, hi = cat->n_files;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(cat->files[mid].path, path);
		if (c == 0)
			return &cat->files[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct catalog_test *selector_catalog_test(const struct catalog *cat, const char *id)
{
	const struct catalog_priv *priv = cat->priv_;
	size_t lo = 0, hi = cat->n_tests;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(priv->by_id[mid]->id, id);
		if (c == 0)
			return priv->by_id[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int selector_catalog_test_runs_op(const struct catalog *cat, const struct catalog_test *t,
				  const char *name)
{
	const struct catalog_op_list *l;
	if (t->opset == CATALOG_OPSET_NONE)
		return 0;
	int rc = catalog__test_op_list(cat, t, &l);
	if (rc || !l || l->status == 0)
		return rc ? rc : 1;
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->entries[i]->name, name) ||
		    (l->entries[i]->aten_name && !strcmp(l->entries[i]->aten_name, name)))
			return 1;
	return 0;
}
