/* The schema walk of one document: test_suite_config, its files, their test entries and the
 * entries' edits. The shapes and checks follow torch-spyre's own loader (its pydantic models
 * in tests/spyre_test_config_models.py and the later oot_test_config_models.py of
 * torch-spyre/torch-spyre; restated here, not copied):
 *   - a test entry's `names` is one string or a list; each has the "Class::method" shape the
 *     schema (spyre_test_config_schema.json) requires as ^\w+::\w+$: a number or a bare
 *     method name is an error; a regex of that shape is accepted;
 *   - `mode` defaults to mandatory_success for a listed test; `unlisted_test_mode` defaults to
 *     xfail (FileEntry.unlisted_test_mode = MODE_XFAIL; the constants file names
 *     UNLISTED_TEST_MODE_DEFAULT = xfail). Both defaults are applied by the resolver: the
 *     model keeps SPEC_MODE_UNSET so that `explain` can say "default";
 *   - edits.ops.include items are {name, description, tags, sample_inputs_func, kwargs} (the
 *     model-op configs put a call's kwargs beside sample_inputs_func as well as inside it);
 *     edits.dtypes.include items are {name, description, precision, force_xfail}, exclude
 *     items {name, description}; dtype names are checked against the schema's list plus
 *     "half"; edits.modules.include items also take module_path and input specs;
 *     edits.functions has cpu_move.
 * Our additions: `labels` and `no_grad` per entry (docs/specs.md, the keys) and `kernels`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk.h"

static void walk_named(struct walk *w, const struct ynode *n, struct spec_named *it, bool module)
{
	it->loc = walk_loc(w, n);
	if (!walk_is_map(w, n, "a mapping with 'name'"))
		return;
	bool has_name = false;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "name")) {
			has_name = walk_str(w, v, &it->name, "a name");
		} else if (walk_key_is(k, "description")) {
			walk_str(w, v, &it->description, "a description");
		} else if (module && walk_key_is(k, "module_path")) {
			walk_str(w, v, &it->module_path, "a module path");
		} else if (module && (walk_key_is(k, "sample_inputs_func") ||
				      walk_key_is(k, "constructor_inputs"))) {
			struct spec_sample_inputs tmp = { 0 };
			walk_sample_inputs(w, v, &tmp);
		} else if (module && walk_key_is(k, "forward_inputs")) {
			struct spec_sample_inputs tmp = { 0 };
			if (v->kind == YN_SEQ)
				for (size_t j = 0; j < v->n; j++) {
					size_t s2 = walk_push_index(w, j);
					walk_sample_inputs(w, v->kids[j], &tmp);
					walk_pop(w, s2);
				}
			else
				walk_sample_inputs(w, v, &tmp);
		} else {
			walk_unknown_key(w, k, "a named item");
		}
		walk_pop(w, saved);
	}
	if (!has_name && !it->name.s)
		walk_error(w, n, "missing 'name'");
}

static void walk_nameds(struct walk *w, const struct ynode *n, struct spec_nameds *out, bool module)
{
	out->loc = walk_loc(w, n);
	if (!walk_is_seq(w, n, "a list of {name: ...} items"))
		return;
	out->v = walk_calloc(w, n->n, sizeof(*out->v));
	if (!out->v)
		return;
	out->n = n->n;
	for (size_t i = 0; i < n->n; i++) {
		size_t saved = walk_push_index(w, i);
		walk_named(w, n->kids[i], &out->v[i], module);
		walk_pop(w, saved);
	}
}

static void walk_op_include(struct walk *w, const struct ynode *n, struct spec_op_include *it)
{
	it->loc = walk_loc(w, n);
	if (!walk_is_map(w, n, "a mapping with 'name'"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "name"))
			walk_str(w, v, &it->name, "an op name");
		else if (walk_key_is(k, "description"))
			walk_str(w, v, &it->description, "a description");
		else if (walk_key_is(k, "tags"))
			walk_strs(w, v, &it->tags, false, "a list of strings");
		else if (walk_key_is(k, "sample_inputs_func"))
			walk_sample_inputs(w, v, &it->sample_inputs);
		else if (walk_key_is(k, "kwargs") && !it->sample_inputs.kwargs)
			walk_kwargs(w, v, &it->sample_inputs);
		else
			walk_unknown_key(w, k, "an op include item");
		walk_pop(w, saved);
	}
	if (!it->name.s)
		walk_error(w, n, "missing 'name'");
}

/* include/exclude pairs: which = 0 ops, 1 dtypes, 2 modules */
static void walk_incl_excl(struct walk *w, const struct ynode *n, struct spec_edits *e, int which)
{
	if (!walk_is_map(w, n, "a mapping with include and/or exclude"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		bool inc = walk_key_is(k, "include"), exc = walk_key_is(k, "exclude");
		if (!inc && !exc) {
			walk_unknown_key(w, k, "an include/exclude mapping");
		} else if (which == 1) {
			walk_dtype_items(w, v, inc ? &e->dtypes_include : &e->dtypes_exclude, inc);
		} else if (which == 2) {
			walk_nameds(w, v, inc ? &e->modules_include : &e->modules_exclude, inc);
		} else if (exc) {
			walk_nameds(w, v, &e->ops_exclude, false);
		} else if (walk_is_seq(w, v, "a list of {name: ...} items")) {
			e->ops_include = walk_calloc(w, v->n, sizeof(*e->ops_include));
			if (e->ops_include) {
				e->n_ops_include = v->n;
				for (size_t j = 0; j < v->n; j++) {
					size_t s2 = walk_push_index(w, j);
					walk_op_include(w, v->kids[j], &e->ops_include[j]);
					walk_pop(w, s2);
				}
			}
		}
		walk_pop(w, saved);
	}
}

static void walk_functions(struct walk *w, const struct ynode *n, struct spec_edits *e)
{
	if (!walk_is_map(w, n, "a mapping (cpu_move: [...])"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "cpu_move"))
			walk_nameds(w, v, &e->cpu_move, false);
		else
			walk_unknown_key(w, k, "edits.functions");
		walk_pop(w, saved);
	}
}

static void walk_edits(struct walk *w, const struct ynode *n, struct spec_edits *e)
{
	e->loc = walk_loc(w, n);
	e->present = true;
	if (!walk_is_map(w, n, "a mapping (ops, dtypes, modules, functions)"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "ops"))
			walk_incl_excl(w, v, e, 0);
		else if (walk_key_is(k, "dtypes"))
			walk_incl_excl(w, v, e, 1);
		else if (walk_key_is(k, "modules"))
			walk_incl_excl(w, v, e, 2);
		else if (walk_key_is(k, "functions"))
			walk_functions(w, v, e);
		else
			walk_unknown_key(w, k, "edits");
		walk_pop(w, saved);
	}
}

/* torch-spyre's rule: split on "::" gives one part (a method or module-level function) or two
 * (class and method), none empty. Regular expressions pass as long as they keep that shape. */
/* Whether a plain scalar reads as a YAML number, bool or null: not a string to the schema. */
static bool plain_not_string(const struct ynode *n)
{
	if (!n->plain)
		return false;
	if (ynode_is_null(n) || !strcmp(n->text, "true") || !strcmp(n->text, "false") ||
	    !strcmp(n->text, "True") || !strcmp(n->text, "False"))
		return true;
	char *end = NULL;
	errno = 0;
	(void)strtod(n->text, &end);
	return end != n->text && *end == '\0';
}

/* torch-spyre's schema wants each name to match ^\w+::\w+$. A name that is not a string, or
 * has no Class::method shape, is an error. A regex with that shape (TestSDPA.*::test_.*, as the
 * real configs write) is accepted, as torch-spyre's loader accepts it. */
static void check_name(struct walk *w, const struct spec_str *s, const struct ynode *n)
{
	if (plain_not_string(n)) {
		walk_error(w, n,
			   "test name %s is not a string (expected 'ClassName::method_name', "
			   "quoted if it could read as a number)",
			   s->s);
		return;
	}
	const char *sep = strstr(s->s, "::");
	if (!sep || sep == s->s || !sep[2] || strstr(sep + 2, "::")) {
		walk_error(w, n,
			   "invalid test name '%s' (expected 'ClassName::method_name', as the "
			   "schema's ^\\w+::\\w+$ wants; '.*::method_name' matches any class)",
			   s->s);
		return;
	}
}

static void walk_names(struct walk *w, const struct ynode *v, struct spec_test *t)
{
	if (!walk_strs(w, v, &t->names, true, "a name or a list of names"))
		return;
	if (t->names.n == 0)
		walk_error(w, v, "empty list of names (expected at least one)");
	for (size_t j = 0; j < t->names.n; j++) {
		const struct ynode *item = v->kind == YN_SEQ ? v->kids[j] : v;
		size_t saved = v->kind == YN_SEQ ? walk_push_index(w, j) : w->plen;
		check_name(w, &t->names.v[j], item);
		walk_pop(w, saved);
	}
}

static void walk_test(struct walk *w, const struct ynode *n, struct spec_test *t)
{
	t->loc = walk_loc(w, n);
	if (!walk_is_map(w, n, "a test entry (a mapping with 'names')"))
		return;
	bool has_names = false;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "names")) {
			has_names = true;
			walk_names(w, v, t);
		} else if (walk_key_is(k, "mode")) {
			t->mode_loc = walk_loc(w, v);
			walk_mode(w, v, &t->mode, "mode");
		} else if (walk_key_is(k, "tags")) {
			walk_strs(w, v, &t->tags, false, "a list of strings");
		} else if (walk_key_is(k, "labels")) {
			walk_strs(w, v, &t->labels, false, "a list of strings");
		} else if (walk_key_is(k, "no_grad")) {
			walk_tri(w, v, &t->no_grad);
		} else if (walk_key_is(k, "edits")) {
			walk_edits(w, v, &t->edits);
		} else if (walk_key_is(k, "kernels")) {
			walk_kernels(w, v, t);
		} else if (walk_key_is(k, "description")) {
			struct spec_str d;
			walk_str(w, v, &d, "a description");
		} else {
			walk_unknown_key(w, k, "a test entry");
		}
		walk_pop(w, saved);
	}
	if (!has_names)
		walk_error(w, n, "missing 'names' (expected a list of 'Class::method' names)");
}

static void walk_file(struct walk *w, const struct ynode *n, struct spec_file *f,
		      const struct spec_strs *labels, uint32_t index)
{
	f->loc = walk_loc(w, n);
	f->labels = *labels;
	if (!walk_is_map(w, n, "a file entry (a mapping with 'path')"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "path")) {
			walk_str(w, v, &f->path, "a path");
		} else if (walk_key_is(k, "unlisted_test_mode")) {
			f->unlisted_loc = walk_loc(w, v);
			walk_mode(w, v, &f->unlisted, "unlisted_test_mode");
		} else if (walk_key_is(k, "tests")) {
			if (walk_is_seq(w, v, "a list of test entries")) {
				f->tests = walk_calloc(w, v->n, sizeof(*f->tests));
				f->n_tests = f->tests ? v->n : 0;
				for (size_t j = 0; j < f->n_tests; j++) {
					size_t s2 = walk_push_index(w, j);
					f->tests[j].suite_labels = *labels;
					f->tests[j].doc_file = index;
					f->tests[j].doc_test = (uint32_t)j;
					walk_test(w, v->kids[j], &f->tests[j]);
					walk_pop(w, s2);
				}
			}
		} else {
			walk_unknown_key(w, k, "a file entry");
		}
		walk_pop(w, saved);
	}
	if (!f->path.s)
		walk_error(w, n, "missing 'path'");
}

static void walk_files(struct walk *w, const struct ynode *v, struct spec_doc *doc)
{
	if (!walk_is_seq(w, v, "a list of file entries"))
		return;
	if (v->n == 0)
		walk_warn(w, v, "empty list of files");
	doc->files = walk_calloc(w, v->n, sizeof(*doc->files));
	doc->n_files = doc->files ? v->n : 0;
	for (size_t j = 0; j < doc->n_files; j++) {
		size_t saved = walk_push_index(w, j);
		walk_file(w, v->kids[j], &doc->files[j], &doc->labels, (uint32_t)j);
		walk_pop(w, saved);
	}
}

static void walk_tsc(struct walk *w, const struct ynode *n, struct spec_doc *doc)
{
	if (!walk_is_map(w, n, "a mapping (labels, files, global)"))
		return;
	const struct ynode *files = NULL;
	/* labels first: every file entry keeps the document's labels */
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "labels"))
			walk_strs(w, v, &doc->labels, false, "a list of strings");
		else if (walk_key_is(k, "files"))
			files = v;
		else if (walk_key_is(k, "global"))
			walk_global(w, v, &doc->global);
		else
			walk_unknown_key(w, k, "test_suite_config");
		walk_pop(w, saved);
	}
	if (!files) {
		walk_error(w, n, "missing 'files' (expected a list of file entries)");
		return;
	}
	size_t saved = walk_push_key(w, "files");
	walk_files(w, files, doc);
	walk_pop(w, saved);
}

size_t walk_document(struct walk *w, const struct ynode *root, struct spec_doc *doc)
{
	static const struct ynode empty = { .kind = YN_SCALAR, .line = 1, .col = 1, .text = "" };
	if (!root || ynode_is_null(root)) {
		walk_error(w, root ? root : &empty,
			   "empty document (expected a mapping with 'test_suite_config')");
		return w->errors;
	}
	if (!walk_is_map(w, root, "a mapping with 'test_suite_config'"))
		return w->errors;
	const struct ynode *tsc = NULL;
	for (size_t i = 0; i < root->n / 2; i++) {
		const struct ynode *k = walk_key(w, root, i);
		if (!k)
			continue;
		if (walk_key_is(k, "test_suite_config"))
			tsc = root->kids[2 * i + 1];
		else
			walk_unknown_key(w, k, "the document");
	}
	if (!tsc) {
		walk_error(w, root, "missing 'test_suite_config' (the root key of a test suite)");
		return w->errors;
	}
	size_t saved = walk_push_key(w, "test_suite_config");
	walk_tsc(w, tsc, doc);
	walk_pop(w, saved);
	return w->errors;
}
