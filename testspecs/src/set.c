/* Spec sets: loading files, texts and directories, and merging each document into the set.
 *
 * Merging. torch-spyre itself reads one YAML per run (PYTORCH_TEST_CONFIG names it;
 * tests/spyre_test_parsing.py load_yaml_config, then resolve_current_file picks the single
 * file entry whose resolved path is the test file pytest runs), and its CI runs one config at
 * a time. docs/specs.md states the merge spyre-ci applies across files, which is also
 * what running each config in turn decides for a test: entries for the same path combine
 * (their tests are concatenated in load order, so entry order is preserved; which entry
 * decides a test listed twice is the resolver's call: torch-spyre's TorchTestBase
 * _build_test_entry_map keeps the LAST entry per method name and warns, while the later
 * FileEntry.get_test_entry returns the FIRST entry naming the test), and
 * the global lists become unions (by name; for a name defined twice the first definition is
 * kept and a differing later one is a warning). unlisted_test_mode: the first explicit value
 * for a path wins; a later different one is a warning. Suite labels stay with each test
 * entry (spec_test.suite_labels), so merging documents of different tiers loses nothing. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "scope.h"
#include "walk.h"

#define SPEC_DIR_FILES_MAX 10000

int testspecs_set_create(struct spec_set **out)
{
	struct spec_set *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(ERR_NOMEM, "out of memory for a spec set");
	s->arena = spec_arena_create();
	if (!s->arena) {
		free(s);
		return err_set(ERR_NOMEM, "out of memory for a spec set");
	}
	*out = s;
	return 0;
}

void testspecs_set_destroy(struct spec_set *set)
{
	if (!set)
		return;
	spec_arena_destroy(set->arena);
	free(set);
}

/* Appends `n` elements of `size` to an arena array (copying it: arrays are small). */
static void *arena_append(struct spec_arena *a, const void *old, size_t n_old, const void *add,
			  size_t n_add, size_t size)
{
	char *p = spec_arena_calloc(a, n_old + n_add, size);
	if (!p)
		return NULL;
	if (n_old)
		memcpy(p, old, n_old * size);
	if (n_add)
		memcpy(p + n_old * size, add, n_add * size);
	return p;
}

static void check_path(struct walk *w, struct spec_file *f)
{
	static const struct spec_roots placeholder = { "/TORCH_ROOT", "/TORCH_DEVICE_ROOT" };
	if (!f->path.s)
		return;
	struct ynode at = { .line = f->path.loc.line, .col = f->path.loc.col };
	f->is_glob = testspecs_path_is_glob(f->path.s);
	const char *t = f->path.s;
	if (t[0] != '/' && strncmp(t, "${", 2) != 0) {
		walk_warn(w, &at,
			  "path '%s' has no ${TORCH_ROOT} or ${TORCH_DEVICE_ROOT} and is not "
			  "absolute",
			  t);
		return;
	}
	const struct spec_roots *roots = w->opts && w->opts->roots ? w->opts->roots : &placeholder;
	char *res = NULL;
	if (testspecs_path_resolve(roots, t, &res) != 0) {
		if (err_last_code() == ERR_NOMEM)
			w->nomem = true;
		walk_error(w, &at, "%s", err_last());
		return;
	}
	if (roots != &placeholder)
		f->resolved = spec_arena_strdup(w->arena, res);
	free(res);
}

static const char *file_key(const struct spec_file *f)
{
	return f->resolved ? f->resolved : f->path.s ? f->path.s : "";
}

static void merge_file(struct walk *w, struct spec_set *set, const struct spec_file *f)
{
	for (size_t i = 0; i < set->n_files; i++) {
		struct spec_file *e = &set->files[i];
		if (strcmp(file_key(e), file_key(f)) != 0)
			continue;
		if (e->unlisted == SPEC_MODE_UNSET) {
			e->unlisted = f->unlisted;
			e->unlisted_loc = f->unlisted_loc;
		} else if (f->unlisted != SPEC_MODE_UNSET && f->unlisted != e->unlisted) {
			struct ynode at = { .line = f->unlisted_loc.line,
					    .col = f->unlisted_loc.col };
			walk_warn(w, &at,
				  "unlisted_test_mode '%s' differs from '%s' at %s:%u for the same "
				  "path; keeping the first",
				  testspecs_mode_name(f->unlisted),
				  testspecs_mode_name(e->unlisted), e->unlisted_loc.file,
				  e->unlisted_loc.line);
		}
		struct spec_test *t =
		    arena_append(w->arena, e->tests, e->n_tests, f->tests, f->n_tests, sizeof(*t));
		if (!t) {
			w->nomem = true;
			return;
		}
		e->tests = t;
		e->n_tests += f->n_tests;
		return;
	}
	struct spec_file *nf = arena_append(w->arena, set->files, set->n_files, f, 1, sizeof(*f));
	if (!nf) {
		w->nomem = true;
		return;
	}
	set->files = nf;
	set->n_files++;
}

static void merge_strs(struct walk *w, struct spec_strs *into, const struct spec_strs *add)
{
	for (size_t i = 0; i < add->n; i++) {
		bool have = false;
		for (size_t j = 0; j < into->n && !have; j++)
			have = strcmp(into->v[j].s, add->v[i].s) == 0;
		if (have)
			continue;
		struct spec_str *v =
		    arena_append(w->arena, into->v, into->n, &add->v[i], 1, sizeof(*v));
		if (!v) {
			w->nomem = true;
			return;
		}
		into->v = v;
		into->n++;
	}
}

static void merge_dtypes(struct walk *w, struct spec_dtype_items *into,
			 const struct spec_dtype_items *add)
{
	for (size_t i = 0; i < add->n; i++) {
		bool have = false;
		for (size_t j = 0; j < into->n && !have; j++)
			have = into->v[j].dtype == add->v[i].dtype;
		if (have)
			continue;
		struct spec_dtype_item *v =
		    arena_append(w->arena, into->v, into->n, &add->v[i], 1, sizeof(*v));
		if (!v) {
			w->nomem = true;
			return;
		}
		into->v = v;
		into->n++;
	}
}

static bool same_file(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void merge_ops(struct walk *w, struct spec_op **into, size_t *n_into,
		      const struct spec_op *add, size_t n_add)
{
	for (size_t i = 0; i < n_add; i++) {
		const struct spec_op *a = &add[i];
		struct spec_op *have = NULL;
		for (size_t j = 0; j < *n_into && !have; j++)
			if (a->name.s && (*into)[j].name.s &&
			    strcmp((*into)[j].name.s, a->name.s) == 0)
				have = &(*into)[j];
		if (have) {
			/* Across configs this is no conflict: each config's own global decides
			 * its files (scope.c); only the set's fallback keeps the first. */
			if (a->structured && same_file(a->loc.file, have->loc.file) &&
			    (a->force_xfail != have->force_xfail ||
			     a->dtypes.n != have->dtypes.n)) {
				struct ynode at = { .line = a->loc.line, .col = a->loc.col };
				walk_warn(w, &at,
					  "'%s' is defined again with other settings (first at "
					  "%s:%u); keeping the first",
					  a->name.s, have->loc.file, have->loc.line);
			}
			continue;
		}
		struct spec_op *v = arena_append(w->arena, *into, *n_into, a, 1, sizeof(*v));
		if (!v) {
			w->nomem = true;
			return;
		}
		*into = v;
		(*n_into)++;
	}
}

static void merge_global(struct walk *w, struct spec_global *g, const struct spec_global *a)
{
	if (!a->present)
		return;
	if (!g->present)
		g->loc = a->loc;
	g->present = true;
	g->has_supported_dtypes |= a->has_supported_dtypes;
	g->has_supported_ops |= a->has_supported_ops;
	g->has_supported_modules |= a->has_supported_modules;
	if (!g->supported_dtypes.v)
		g->supported_dtypes.loc = a->supported_dtypes.loc;
	merge_dtypes(w, &g->supported_dtypes, &a->supported_dtypes);
	merge_ops(w, &g->supported_ops, &g->n_supported_ops, a->supported_ops, a->n_supported_ops);
	merge_ops(w, &g->supported_modules, &g->n_supported_modules, a->supported_modules,
		  a->n_supported_modules);
	if (a->has_seed && !g->has_seed) {
		g->has_seed = true;
		g->seed = a->seed;
		g->seed_loc = a->seed_loc;
	} else if (a->has_seed && a->seed != g->seed &&
		   same_file(a->seed_loc.file, g->seed_loc.file)) {
		struct ynode at = { .line = a->seed_loc.line, .col = a->seed_loc.col };
		walk_warn(w, &at,
			  "input_config.seed differs from the one at %s:%u; keeping the first",
			  g->seed_loc.file, g->seed_loc.line);
	}
}

static int merge_doc(struct walk *w, struct spec_set *set, const struct spec_doc *doc)
{
	const char **src =
	    arena_append(w->arena, set->sources, set->n_sources, &w->file, 1, sizeof(*src));
	if (!src)
		return err_set(ERR_NOMEM, "out of memory merging specs");
	set->sources = src;
	set->n_sources++;
	merge_strs(w, &set->labels, &doc->labels);
	if (testspecs__bind_doc_global(set->arena, doc->files, doc->n_files, &doc->global) < 0)
		return err_set(ERR_NOMEM, "out of memory merging specs");
	for (size_t i = 0; i < doc->n_files; i++)
		merge_file(w, set, &doc->files[i]);
	merge_global(w, &set->global, &doc->global);
	return w->nomem ? err_set(ERR_NOMEM, "out of memory merging specs") : 0;
}

int testspecs_load_text(struct spec_set *set, const char *name, const char *text, size_t len,
			const struct spec_load_opts *opts)
{
	struct spec_diag_list local;
	testspecs_diags_init(&local);
	struct walk w = { .arena = set->arena, .opts = opts };
	w.diags = opts && opts->diags ? opts->diags : &local;
	w.file = spec_arena_strdup(set->arena, name ? name : "<text>");
	if (!w.file)
		return err_set(ERR_NOMEM, "out of memory loading %s", name);
	struct ynode *root = NULL;
	int rc = ytree_parse(set->arena, w.file, text, len, w.diags, &root);
	if (rc == 0) {
		struct spec_doc doc = { 0 };
		walk_document(&w, root, &doc);
		for (size_t i = 0; i < doc.n_files; i++) {
			size_t saved = walk_push_key(&w, "test_suite_config.files");
			walk_push_index(&w, i);
			walk_push_key(&w, "path");
			check_path(&w, &doc.files[i]);
			walk_pop(&w, saved);
		}
		if (w.nomem)
			rc = err_set(ERR_NOMEM, "out of memory loading %s", w.file);
		else if (w.errors)
			rc = err_set(ERR_INVAL, "%s: %zu error(s)", w.file, w.errors);
		else
			rc = merge_doc(&w, set, &doc);
	}
	testspecs_diags_finish(&local);
	return rc;
}

int testspecs_load_file(struct spec_set *set, const char *path, const struct spec_load_opts *opts)
{
	char *text = NULL;
	size_t len = 0;
	int rc = fs_read_file(&text, &len, path, YAML_DOC_MAX);
	if (rc == ERR_LIMIT) {
		struct spec_loc l = { .file = path, .line = 1, .col = 1 };
		if (opts && opts->diags)
			testspecs_diags_add(opts->diags, SPEC_ERROR, &l, "",
					    "document too large (more than %zu bytes)",
					    (size_t)YAML_DOC_MAX);
		return err_set(ERR_INVAL, "%s: document too large", path);
	}
	if (rc) {
		struct spec_loc l = { .file = path, .line = 0, .col = 0 };
		if (opts && opts->diags)
			testspecs_diags_add(opts->diags, SPEC_ERROR, &l, "", "cannot read: %s",
					    err_last());
		return rc;
	}
	rc = testspecs_load_text(set, path, text, len, opts);
	free(text);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_yaml_name(const char *n)
{
	size_t l = strlen(n);
	return n[0] != '.' && ((l > 5 && strcmp(n + l - 5, ".yaml") == 0) ||
			       (l > 4 && strcmp(n + l - 4, ".yml") == 0));
}

static int list_dir(const char *dir, char ***names, size_t *count)
{
	DIR *d = opendir(dir);
	if (!d)
		return err_set_errno(ERR_IO, "cannot open directory %s", dir);
	char **v = NULL;
	size_t n = 0;
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d)) != NULL) {
		if (!is_yaml_name(e->d_name))
			continue;
		if (n == SPEC_DIR_FILES_MAX) {
			rc = err_set(ERR_LIMIT, "%s: more than %d spec files", dir,
				     SPEC_DIR_FILES_MAX);
			break;
		}
		char **nv = realloc(v, (n + 1) * sizeof(*v));
		char *s = nv ? strdup(e->d_name) : NULL;
		if (nv)
			v = nv;
		if (!s) {
			rc = err_set(ERR_NOMEM, "out of memory listing %s", dir);
			break;
		}
		v[n++] = s;
	}
	closedir(d);
	if (!rc)
		qsort(v, n, sizeof(*v), name_cmp);
	*names = v;
	*count = n;
	return rc;
}

int testspecs_load_dir(struct spec_set *set, const char *dir, const struct spec_load_opts *opts)
{
	char **names = NULL;
	size_t n = 0;
	int rc = list_dir(dir, &names, &n), first = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *p = malloc(len);
		if (!p) {
			rc = err_set(ERR_NOMEM, "out of memory");
			break;
		}
		size_t dl = strlen(dir);
		while (dl > 1 && dir[dl - 1] == '/') /* "specs/" names files specs/x.yaml */
			dl--;
		snprintf(p, len, "%.*s/%s", (int)dl, dir, names[i]);
		int r = testspecs_load_file(set, p, opts);
		free(p);
		if (r == ERR_NOMEM)
			rc = r;
		else if (r && !first)
			first = r; /* keep going: every file's problems are reported */
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc ? rc : first;
}

int testspecs_load_path(struct spec_set *set, const char *path, const struct spec_load_opts *opts)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return testspecs_load_dir(set, path, opts);
	return testspecs_load_file(set, path, opts);
}
