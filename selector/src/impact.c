/* Stage 2, impact: the fallback check, the candidates and their reasons, and the per-file
 * signals (tests edited, op database entries, native code, path rules, coverage). The call
 * graph and the symbol signal are in impact_graph.c, the commit messages in impact_message.c. */
#include <fnmatch.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "impact_internal.h"

static const char *const default_fallback[] = {
	"setup.py",
	"CMakeLists.txt",
	"*.cmake",
	"requirements*.txt",
	"torch/__init__.py",
	"conftest.py",
	"test/run_test.py",
	"torch/testing/_internal/common_utils.py",
	"torch/testing/_internal/common_device_type.py",
};

const char *selector_impact_signal_name(enum impact_signal s)
{
	static const char *const names[] = { "test-edited", "test-module", "opdb",     "symbol",
					     "native",      "path-rule",   "coverage", "message" };
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* ---- candidates ---- */

int impact__add(struct ictx *x, const char *id, enum impact_signal sig, double score,
		const char *fmt, ...)
{
	intptr_t idx;
	struct impact_result *r = x->res;
	if (!strmap_get(&x->cand, id, &idx)) {
		void *p = scan__grow(r->candidates, r->n_candidates, &x->cand_cap,
				     sizeof(*r->candidates));
		if (!p)
			return err_set(ERR_NOMEM, "impact candidates");
		r->candidates = p;
		idx = (intptr_t)r->n_candidates;
		r->candidates[r->n_candidates++] = (struct impact_candidate){ .id = id };
		if (strmap_put(&x->cand, id, idx))
			return ERR_NOMEM;
	}
	struct impact_candidate *c = &r->candidates[idx];
	for (size_t i = 0; i < c->n_reasons; i++)
		if (c->reasons[i].signal == sig)
			return 0; /* one reason per signal: the first, which is the strongest */
	void *p = realloc(c->reasons, sizeof(*c->reasons) * (c->n_reasons + 1));
	if (!p)
		return err_set(ERR_NOMEM, "impact reasons");
	c->reasons = p;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *d = strdup(buf);
	if (!d)
		return err_set(ERR_NOMEM, "impact reason");
	c->reasons[c->n_reasons++] = (struct impact_reason){ sig, d, score };
	c->score += score;
	return 0;
}

/* ---- fallback ---- */

static bool glob_path(const char *glob, const char *path)
{
	if (!strchr(glob, '/')) {
		const char *b = strrchr(path, '/');
		path = b ? b + 1 : path;
	}
	return fnmatch(glob, path, 0) == 0;
}

/* Paths that no test can read: a change of only these selects nothing. Everything else the
 * selector does not read widens (docs/select.md, "What widens"). */
static const char *const no_effect[] = {
	"docs/*", ".github/*",  "*.md",     "*.rst",      "LICENSE",
	"NOTICE", "CODEOWNERS", ".mailmap", ".gitignore",
};

static bool has_no_effect(const char *path)
{
	for (size_t g = 0; g < sizeof(no_effect) / sizeof(*no_effect); g++) {
		const char *glob = no_effect[g];
		size_t gl = strlen(glob);
		if (glob[gl - 1] == '*' && glob[gl - 2] == '/' ? strncmp(path, glob, gl - 1) == 0
							       : glob_path(glob, path))
			return true;
	}
	return false;
}

static const char *mode_name(uint32_t mode)
{
	switch (mode) {
	case CHANGE_MODE_SYMLINK:
		return "a symlink";
	case CHANGE_MODE_GITLINK:
		return "a submodule";
	case CHANGE_MODE_NONE:
		return "nothing";
	default:
		return "a file";
	}
}

/* Why Python file cf (of a catalog; NULL: none) cannot be read, NULL when it can: a NUL byte,
 * not UTF-8, over the size bound. */
static const char *unscannable(const struct catalog_file *cf, char *buf, size_t n)
{
	if (!cf || cf->kind == CATALOG_YAML || cf->kind == CATALOG_CPP || !cf->blob)
		return NULL;
	const struct scan_file *sf = cf->blob->scan;
	if (!sf) {
		snprintf(buf, n, "over the size bound of %zu bytes", (size_t)PYTHON_FILE_MAX);
		return buf;
	}
	if (!sf->skipped)
		return NULL;
	snprintf(buf, n, "%s", sf->n_warnings ? sf->warnings[0].message : "not scannable");
	return buf;
}

/* Why changed file fc must select every test, or NULL when the selector's signals read it (or
 * no test can). */
static const char *widens(struct ictx *x, const struct file_change *fc, char *buf, size_t n)
{
	const char *path = fc->new_path.text, *old = fc->old_path.text;
	const char *np = fc->new_path.bytes, *op = fc->old_path.bytes;
	if (fc->old_mode == CHANGE_MODE_GITLINK || fc->new_mode == CHANGE_MODE_GITLINK) {
		snprintf(buf, n, "submodule %s %s", path,
			 fc->old_mode != CHANGE_MODE_GITLINK   ? "added"
			 : fc->new_mode != CHANGE_MODE_GITLINK ? "removed"
							       : "moved to another commit");
		return buf;
	}
	if (strcmp(np, ".gitmodules") == 0 || strcmp(op, ".gitmodules") == 0) {
		snprintf(buf, n, ".gitmodules changed (the submodules' map)");
		return buf;
	}
	bool gone = fc->new_mode == CHANGE_MODE_NONE;
	if (has_no_effect(np) && has_no_effect(op))
		return NULL;
	if (fc->status == CHANGE_TYPECHANGE || (fc->old_mode == CHANGE_MODE_SYMLINK) !=
						   (fc->new_mode == CHANGE_MODE_SYMLINK && !gone)) {
		snprintf(buf, n, "%s changed from %s to %s", path, mode_name(fc->old_mode),
			 mode_name(fc->new_mode));
		return buf;
	}
	if (fc->new_mode == CHANGE_MODE_SYMLINK) {
		snprintf(buf, n, "%s is a symlink (what it points to is not read)", path);
		return buf;
	}
	enum catalog_file_kind kn, ko;
	bool read_new = catalog__file_kind(np, &kn), read_old = catalog__file_kind(op, &ko);
	if (!read_new || !read_old) {
		snprintf(buf, n, "%s changed%s: no signal reads it, so any test may depend on it",
			 !read_new ? path : old, fc->binary ? " (binary)" : "");
		return buf;
	}
	char why[200];
	if (!gone && kn != CATALOG_YAML && kn != CATALOG_CPP) {
		const char *w = unscannable(selector_catalog_file(x->head, np), why, sizeof why);
		if (w || fc->binary) {
			snprintf(buf, n, "%s cannot be scanned (%s)%s", path,
				 w ? w : "binary content",
				 kn == CATALOG_TEST ? ": its tests as the base had them" : "");
			return buf;
		}
	}
	/* what imports a test helper is read from the test side's scans: one that cannot be
	 * scanned hides its imports */
	if (kn == CATALOG_TEST_HELPER || ko == CATALOG_TEST_HELPER)
		for (size_t f = 0; f < x->head->n_files; f++) {
			const struct catalog_file *cf = &x->head->files[f];
			if ((cf->kind == CATALOG_TEST || cf->kind == CATALOG_TEST_HELPER) &&
			    unscannable(cf, why, sizeof why)) {
				snprintf(buf, n,
					 "%s changed, and %s cannot be scanned (%s): what it "
					 "imports is unknown",
					 path, cf->path, why);
				return buf;
			}
		}
	return NULL;
}

static int fallback_reason(struct ictx *x, char *buf, size_t n)
{
	const struct impact_config *cfg = x->cfg;
	const char *const *globs =
	    cfg && cfg->fallback_globs ? cfg->fallback_globs : default_fallback;
	size_t ng = cfg && cfg->fallback_globs
			? cfg->n_fallback_globs
			: sizeof(default_fallback) / sizeof(*default_fallback);
	if (selector_change_set_limited(x->cs)) {
		snprintf(buf, n, "change set incomplete: the %s limit (%llu) was hit",
			 x->cs->limit_hits[0].what, (unsigned long long)x->cs->limit_hits[0].limit);
		return 1;
	}
	for (size_t i = 0; i < x->cs->n_files; i++) {
		const struct file_change *fc = &x->cs->files[i];
		const char *paths[2] = { fc->new_path.bytes, fc->old_path.bytes };
		for (size_t p = 0; p < 2; p++)
			for (size_t g = 0; g < ng; g++)
				if (glob_path(globs[g], paths[p])) {
					snprintf(buf, n, "%s changed (fallback rule '%s')",
						 p ? fc->old_path.text : fc->new_path.text,
						 globs[g]);
					return 1;
				}
		const char *old = fc->old_path.bytes;
		if ((fc->status == CHANGE_DELETED || fc->status == CHANGE_RENAMED) &&
		    strncmp(old, "torch/", 6) == 0 && strlen(old) > 3 &&
		    strcmp(old + strlen(old) - 3, ".py") == 0) {
			snprintf(buf, n, "torch module %s %s", fc->old_path.text,
				 fc->status == CHANGE_DELETED ? "deleted" : "renamed");
			return 1;
		}
	}
	/* then what no signal reads (after the rules above, whose reasons are the familiar ones) */
	for (size_t i = 0; i < x->cs->n_files; i++)
		if (widens(x, &x->cs->files[i], buf, n))
			return 1;
	return 0;
}

/* Whether test file `path` of the head catalog cannot be scanned (its tests are unknown). */
static bool test_file_lost(const struct catalog *head, const char *path)
{
	char why[200];
	const struct catalog_file *cf = selector_catalog_file(head, path);
	return cf && cf->kind == CATALOG_TEST && unscannable(cf, why, sizeof why);
}

static int fallback_all(struct ictx *x, const char *reason)
{
	struct impact_result *r = x->res;
	if (!(r->fallback_reason = strdup(reason)))
		return err_set(ERR_NOMEM, "fallback reason");
	r->fallback = true;
	/* A test file the head cannot scan keeps its tests: the base's, by id (they are selected
	 * with the fallback's reason, which names the file). The changed files say which. */
	uint8_t *lost = calloc(x->base->n_files + 1, 1);
	if (!lost)
		return err_set(ERR_NOMEM, "fallback candidates");
	bool any = false;
	for (size_t i = 0; i < x->cs->n_files; i++) {
		const char *p = x->cs->files[i].new_path.bytes;
		const struct catalog_file *bf = selector_catalog_file(x->base, p);
		if (bf && test_file_lost(x->head, p)) {
			lost[bf - x->base->files] = 1;
			any = true;
		}
	}
	size_t extra = 0;
	for (size_t i = 0; any && i < x->base->n_tests; i++)
		extra += lost[x->base->tests[i].file] &&
			 !selector_catalog_test(x->head, x->base->tests[i].id);
	r->candidates = calloc(x->head->n_tests + extra + 1, sizeof(*r->candidates));
	r->owned_ids = calloc(extra + 1, sizeof(*r->owned_ids));
	if (!r->candidates || !r->owned_ids) {
		free(lost);
		return err_set(ERR_NOMEM, "fallback candidates");
	}
	for (size_t i = 0; i < x->head->n_tests; i++)
		r->candidates[i].id = x->head->tests[i].id;
	r->n_candidates = x->head->n_tests;
	int rc = 0;
	for (size_t i = 0; !rc && extra && i < x->base->n_tests; i++) {
		const struct catalog_test *t = &x->base->tests[i];
		if (!lost[t->file] || selector_catalog_test(x->head, t->id))
			continue;
		char *id = strdup(t->id);
		if (!id) {
			rc = err_set(ERR_NOMEM, "fallback candidates");
			break;
		}
		r->owned_ids[r->n_owned++] = id;
		r->candidates[r->n_candidates++].id = id;
	}
	free(lost);
	return rc;
}

/* ---- test files ---- */

static int file_tests_all(struct ictx *x, size_t file, enum impact_signal sig, double score,
			  const char *why)
{
	for (size_t i = 0; i < x->head->n_tests; i++)
		if (x->head->tests[i].file == file) {
			int rc = impact__add(x, x->head->tests[i].id, sig, score, "%s", why);
			if (rc)
				return rc;
		}
	return 0;
}

/* Helpers (non-test functions) of the file that changed: the tests that reach them through the
 * file's helpers, globals and decorators (impact_local.c), each with the chain. */
static int helpers_changed(struct ictx *x, size_t fi, const struct scan_file *hs,
			   const struct scan_file *bs)
{
	uint8_t *changed = calloc(hs->n_functions ? hs->n_functions : 1, 1);
	if (!changed)
		return err_set(ERR_NOMEM, "impact: helpers of %s", hs->path);
	bool any = false;
	for (size_t h = 0; h < hs->n_functions; h++) {
		const struct scan_function *fn = &hs->functions[h];
		const struct scan_function *old = impact__counterpart_fn(hs, h, bs);
		changed[h] =
		    strncmp(fn->name, "test", 4) != 0 && (!old || old->body_hash != fn->body_hash);
		any |= changed[h];
	}
	struct local_index li;
	int rc = any ? impact__local_init(&li, hs) : 0;
	for (size_t i = 0; any && !rc && i < x->head->n_tests; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		if (t->file != fi)
			continue;
		size_t reached = impact__local_walk(&li, (uint32_t)t->function);
		uint32_t hit = UINT32_MAX;
		for (size_t q = 1; q < reached && hit == UINT32_MAX; q++)
			if (li.queue[q] < li.n_fn && changed[li.queue[q]])
				hit = li.queue[q];
		if (hit == UINT32_MAX)
			continue;
		char chain[400];
		impact__local_chain(&li, (uint32_t)t->function, hit, chain, sizeof(chain));
		rc = impact__add(x, t->id, IMPACT_TEST_EDITED, 0.8,
				 "helper %s of the test file changed: %s%s",
				 hs->functions[hit].qualname, t->id, chain);
	}
	if (any)
		impact__local_finish(&li);
	free(changed);
	return rc;
}

/* True when class `c` of `sf` is `changed` or inherits from it, through bases of the file. */
static bool inherits_changed(const struct scan_file *sf, size_t c, const uint8_t *changed, int hops)
{
	if (changed[c])
		return true;
	const struct scan_class *k = &sf->classes[c];
	for (size_t b = 0; hops < 64 && b < k->n_bases; b++)
		for (size_t o = 0; k->bases[b].text && o < sf->n_classes; o++)
			if (o != c && strcmp(sf->classes[o].qualname, k->bases[b].text) == 0 &&
			    inherits_changed(sf, o, changed, hops + 1))
				return true;
	return false;
}

/* Test classes whose own statements (class attributes, decorators, bases) changed: their tests,
 * and those of the classes of the file that inherit from them. */
static int classes_changed(struct ictx *x, size_t fi, const struct scan_file *hs,
			   const struct scan_file *bs)
{
	uint8_t *changed = calloc(hs->n_classes + 1, 1);
	if (!changed)
		return err_set(ERR_NOMEM, "impact: classes of %s", hs->path);
	bool any = false;
	for (size_t c = 0; c < hs->n_classes; c++) {
		const struct scan_class *old = impact__counterpart_class(hs, c, bs);
		changed[c] = !old || old->body_hash != hs->classes[c].body_hash;
		any |= changed[c];
	}
	int rc = 0;
	for (size_t i = 0; any && !rc && i < x->head->n_tests; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		if (t->file != fi || !t->class_name)
			continue;
		for (size_t c = 0; c < hs->n_classes; c++)
			if (strcmp(hs->classes[c].qualname, t->class_name) == 0 &&
			    inherits_changed(hs, c, changed, 0)) {
				rc = impact__add(x, t->id, IMPACT_TEST_EDITED, 0.9,
						 "class-level code of %s (or a base in the file) "
						 "changed",
						 t->class_name);
				break;
			}
	}
	free(changed);
	return rc;
}

static int test_file_signal(struct ictx *x, const struct catalog_file *hf,
			    const struct catalog_file *bf)
{
	size_t fi = (size_t)(hf - x->head->files);
	const struct scan_file *hs = hf->blob->scan, *bs = bf ? bf->blob->scan : NULL;
	if (!hs)
		return 0;
	if (!bs)
		return file_tests_all(x, fi, IMPACT_TEST_EDITED, 1.0, "test file added");
	if (hs->module_hash != bs->module_hash)
		return file_tests_all(x, fi, IMPACT_TEST_MODULE, 0.9,
				      "module-level code of the test file changed");
	for (size_t i = 0; i < x->head->n_tests; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		if (t->file != fi)
			continue;
		const struct catalog_test *b = selector_catalog_test(x->base, t->id);
		if (b && b->body_hash == t->body_hash)
			continue;
		int rc = impact__add(x, t->id, IMPACT_TEST_EDITED, 1.0,
				     b ? "test body changed" : "test added");
		if (rc)
			return rc;
	}
	int rc = classes_changed(x, fi, hs, bs);
	return rc ? rc : helpers_changed(x, fi, hs, bs);
}

/* ---- op database ---- */

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The entry of `o` that stands for entry i of `a`: the same name and variant, the same rank
 * among the entries of that name and variant. */
static const struct scan_opinfo *counterpart_entry(const struct scan_file *a, size_t i,
						   const struct scan_file *o)
{
	const struct scan_opinfo *e = &a->opinfos[i];
	size_t rank = 0;
	for (size_t k = 0; k < i; k++)
		rank += same_text(a->opinfos[k].name, e->name) &&
			same_text(a->opinfos[k].variant_test_name, e->variant_test_name);
	for (size_t k = 0; o && k < o->n_opinfos; k++)
		if (same_text(o->opinfos[k].name, e->name) &&
		    same_text(o->opinfos[k].variant_test_name, e->variant_test_name) && rank-- == 0)
			return &o->opinfos[k];
	return NULL;
}

/* The ops whose entries of `a` differ from their counterparts in `o`, token by token, or have
 * none: an edit, an addition or a removal of the entry. Comments and formatting are no edit. */
static int entries_changed(struct ictx *x, const struct scan_file *a, const struct scan_file *o,
			   const char *why_missing)
{
	for (size_t i = 0; a && i < a->n_opinfos; i++) {
		const struct scan_opinfo *e = &a->opinfos[i];
		const struct scan_opinfo *other = counterpart_entry(a, i, o);
		if (!e->name || (other && other->hash == e->hash))
			continue;
		if (strmap_put(&x->ops, e->name,
			       (intptr_t)(other ? "op database entry edited" : why_missing)))
			return ERR_NOMEM;
	}
	return 0;
}

static int opdb_signal(struct ictx *x, const struct catalog_file *hf, const struct catalog_file *bf,
		       const struct file_change *fc)
{
	(void)fc;
	const struct scan_file *hs = hf ? hf->blob->scan : NULL, *bs = bf ? bf->blob->scan : NULL;
	int rc = entries_changed(x, hs, bs, "op database entry added");
	if (!rc)
		rc = entries_changed(x, bs, hs, "op database entry removed");
	if (rc || (hs && bs && hs->module_hash == bs->module_hash))
		return rc;
	/* code of the file outside its entries changed (its lists, constants, imports): any @ops
	 * test may run other ops now */
	const char *path = hf ? hf->path : bf->path;
	for (size_t i = 0; i < x->head->n_tests; i++)
		if (x->head->tests[i].opset != CATALOG_OPSET_NONE &&
		    (rc = impact__add(x, x->head->tests[i].id, IMPACT_OPDB, 0.5,
				      "module-level code of the op database %s changed outside "
				      "its entries",
				      path)))
			return rc;
	return 0;
}

/* ---- native code ---- */

static const struct catalog_native_op *native_find(const struct catalog_blob *b, const char *f)
{
	for (size_t i = 0; b && i < b->n_native_ops; i++)
		if (strcmp(b->native_ops[i].func, f) == 0)
			return &b->native_ops[i];
	return NULL;
}

static int native_yaml(struct ictx *x, const struct catalog_blob *hb, const struct catalog_blob *bb)
{
	for (int side = 0; side < 2; side++) {
		const struct catalog_blob *a = side ? bb : hb, *o = side ? hb : bb;
		for (size_t i = 0; a && i < a->n_native_ops; i++) {
			const struct catalog_native_op *e = native_find(o, a->native_ops[i].func);
			if (e && e->hash == a->native_ops[i].hash)
				continue;
			if (strmap_put(&x->ops, a->native_ops[i].op,
				       (intptr_t) "native_functions.yaml entry changed"))
				return ERR_NOMEM;
		}
	}
	return 0;
}

static int kernel_ops(struct ictx *x, const char *kernel)
{
	const struct catalog *cats[2] = { x->head, x->base };
	for (int c = 0; c < 2; c++) {
		const struct catalog_file *yf =
		    selector_catalog_file(cats[c], "aten/src/ATen/native/native_functions.yaml");
		const struct catalog_blob *b = yf ? yf->blob : NULL;
		for (size_t i = 0; b && i < b->n_native_ops; i++)
			for (size_t k = 0; k < b->native_ops[i].n_kernels; k++)
				if (strcmp(b->native_ops[i].kernels[k], kernel) == 0 &&
				    strmap_put(&x->ops, b->native_ops[i].op,
					       (intptr_t) "C++ kernel changed"))
					return ERR_NOMEM;
	}
	return 0;
}

static int native_cpp(struct ictx *x, const struct catalog_blob *hb, const struct catalog_blob *bb)
{
	for (int side = 0; side < 2; side++) {
		const struct catalog_blob *a = side ? bb : hb, *o = side ? hb : bb;
		for (size_t i = 0; a && i < a->n_kernels; i++) {
			bool same = false;
			for (size_t j = 0; o && j < o->n_kernels && !same; j++)
				same = strcmp(o->kernels[j].name, a->kernels[i].name) == 0 &&
				       o->kernels[j].hash == a->kernels[i].hash;
			int rc = same ? 0 : kernel_ops(x, a->kernels[i].name);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* The changed op (x->ops) a test's op list holds: an entry of that name or aten name; NULL
 * when none. A list that cannot be read holds them all. */
static const char *changed_op_in(struct ictx *x, const struct catalog *cat,
				 const struct catalog_test *t, int *rc)
{
	const struct catalog_op_list *l;
	if ((*rc = catalog__test_op_list(cat, t, &l)) != 0)
		return NULL;
	if (!l || l->status == 0) { /* unread: it may run any of them */
		for (size_t s = 0; s < x->ops.cap; s++)
			if (x->ops.slots[s].key)
				return x->ops.slots[s].key;
		return NULL;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct scan_opinfo *e = l->entries[i];
		if (strmap_get(&x->ops, e->name, NULL))
			return e->name;
		if (e->aten_name && strmap_get(&x->ops, e->aten_name, NULL))
			return e->aten_name;
	}
	return NULL;
}

/* Python reference entries (`PythonRefInfo("_refs.add", torch_opinfo_name="add")`) inherit
 * their entry's arguments, its sample function among them: when that entry's op changed, so
 * did theirs. */
static int ref_entries(struct ictx *x, const struct catalog *cat)
{
	for (size_t f = 0; cat && f < cat->n_files; f++) {
		const struct catalog_file *cf = &cat->files[f];
		const struct scan_file *sf = cf->opdb && cf->blob ? cf->blob->scan : NULL;
		for (size_t e = 0; sf && e < sf->n_opinfos; e++) {
			const struct scan_opinfo *o = &sf->opinfos[e];
			const struct scan_arg *ref = NULL;
			for (size_t a = 0; a < o->n_args && !ref; a++)
				if (o->args[a].keyword && o->args[a].kind == SCAN_ARG_STRING &&
				    !strcmp(o->args[a].keyword, "torch_opinfo_name"))
					ref = &o->args[a];
			intptr_t why;
			if (!ref || strmap_get(&x->ops, o->name, NULL) ||
			    !strmap_get(&x->ops, ref->value, &why))
				continue;
			if (strmap_put(&x->ops, o->name, why))
				return ERR_NOMEM;
		}
	}
	return 0;
}

/* The names and aten names of a catalog's op database entries into `out` (keys not owned). */
static int entry_names(const struct catalog *cat, struct strmap *out)
{
	for (size_t f = 0; cat && f < cat->n_files; f++) {
		const struct catalog_file *cf = &cat->files[f];
		const struct scan_file *sf = cf->opdb && cf->blob ? cf->blob->scan : NULL;
		for (size_t e = 0; sf && e < sf->n_opinfos; e++) {
			const struct scan_opinfo *o = &sf->opinfos[e];
			if ((o->name && strmap_put(out, o->name, 0)) ||
			    (o->aten_name && strmap_put(out, o->aten_name, 0)))
				return ERR_NOMEM;
		}
	}
	return 0;
}

/* Whether a changed op has an entry at the base and none at the head: then the tests that ran
 * it are found in the base's op lists (each evaluated again: only when needed). */
static int removed_at_head(struct ictx *x, bool *removed)
{
	*removed = false;
	if (!x->base)
		return 0;
	struct strmap head = { 0 }, base = { 0 };
	int err = entry_names(x->head, &head);
	if (!err)
		err = entry_names(x->base, &base);
	for (size_t s = 0; !err && s < x->ops.cap && !*removed; s++) {
		const char *k = x->ops.slots[s].key;
		*removed = k && strmap_get(&base, k, NULL) && !strmap_get(&head, k, NULL);
	}
	strmap_free(&head);
	strmap_free(&base);
	return err;
}

/* Changed ops -> the @ops tests whose op lists hold them, at the head or (an entry removed)
 * at the base (the symbol signal adds torch.op / .op users). An entry edited out of a list
 * (the test no longer runs it) does not make the test's run at the head different for it. */
static int ops_to_tests(struct ictx *x)
{
	if (!x->ops.n)
		return 0;
	int err = ref_entries(x, x->head);
	if (!err)
		err = ref_entries(x, x->base);
	bool removed = false;
	if (!err)
		err = removed_at_head(x, &removed);
	if (err)
		return err;
	for (size_t i = 0; i < x->head->n_tests; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		if (t->opset == CATALOG_OPSET_NONE)
			continue;
		int rc = 0;
		const char *op = changed_op_in(x, x->head, t, &rc);
		const struct catalog_test *bt =
		    !op && !rc && removed ? selector_catalog_test(x->base, t->id) : NULL;
		if (bt && bt->opset != CATALOG_OPSET_NONE)
			op = changed_op_in(x, x->base, bt, &rc);
		intptr_t why;
		if (!rc && op && strmap_get(&x->ops, op, &why))
			rc = impact__add(x, t->id, IMPACT_OPDB, 1.0, "@ops over %s: %s", op,
					 (const char *)why);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- path rules and coverage ---- */

static int rules_signal(struct ictx *x, const char *path)
{
	for (size_t r = 0; x->cfg && r < x->cfg->n_rules; r++) {
		const struct impact_path_rule *rule = &x->cfg->rules[r];
		if (fnmatch(rule->glob, path, 0) != 0)
			continue;
		for (size_t i = 0; i < x->head->n_tests; i++) {
			const char *id = x->head->tests[i].id;
			bool hit = rule->tests_glob && fnmatch(rule->tests_glob, id, 0) == 0;
			for (size_t k = 0; !hit && k < rule->n_test_ids; k++)
				hit = strcmp(rule->test_ids[k], id) == 0;
			int rc = hit ? impact__add(x, id, IMPACT_PATH_RULE, rule->score,
						   "path rule '%s' on %s", rule->glob, path)
				     : 0;
			if (rc)
				return rc;
		}
	}
	if (!x->coverage)
		return 0;
	json_t *arr = json_object_get(x->coverage, path);
	size_t k;
	json_t *v;
	json_array_foreach(arr, k, v)
	{
		const struct catalog_test *t =
		    json_is_string(v) ? selector_catalog_test(x->head, json_string_value(v)) : NULL;
		int rc = t ? impact__add(x, t->id, IMPACT_COVERAGE, 0.7, "covers %s", path) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the run ---- */

/* ---- test files imported by test files ---- */

/* Whether a test file's code differs beyond comments and formatting (or one side is missing). */
static bool test_code_differs(const struct scan_file *h, const struct scan_file *b)
{
	if (!h || !b || h->module_hash != b->module_hash || h->n_functions != b->n_functions ||
	    h->n_classes != b->n_classes)
		return true;
	for (size_t i = 0; i < h->n_functions; i++)
		if (h->functions[i].body_hash != b->functions[i].body_hash ||
		    strcmp(h->functions[i].qualname, b->functions[i].qualname) != 0)
			return true;
	for (size_t i = 0; i < h->n_classes; i++)
		if (h->classes[i].body_hash != b->classes[i].body_hash)
			return true;
	return false;
}

/* Whether sf imports the module of test file `path` under any name Python may know it by: its
 * dotted path from the root, or from any directory below it (PyTorch's inductor tests put
 * test/ on sys.path: `from inductor.test_torchinductor import ...`). */
/* The absolute dotted module of a relative import `level` dots up from test file `importer`
 * (".x" in test/a/t.py is test.a.x), into buf; false when it climbs out of the tree. */
static bool relative_module(const char *importer, int level, const char *mod, char *buf,
			    size_t size)
{
	char dir[PATH_TEXT_MAX];
	snprintf(dir, sizeof dir, "%s", importer);
	for (int up = 0; up < level; up++) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
	while (*mod == '.')
		mod++;
	int w = snprintf(buf, size, "%s%s%s", dir, *mod ? "." : "", mod);
	if (w < 0 || (size_t)w >= size)
		return false;
	for (char *c = buf; *c; c++)
		*c = *c == '/' ? '.' : *c;
	return true;
}

static bool imports_test_file(const struct scan_file *sf, const char *importer, const char *path)
{
	char dotted[PATH_TEXT_MAX];
	size_t n = strlen(path);
	if (n < 4 || n - 3 >= sizeof dotted || strcmp(path + n - 3, ".py") != 0)
		return false;
	memcpy(dotted, path, n - 3);
	dotted[n - 3] = '\0';
	size_t dl = strlen(dotted);
	if (dl > 9 && strcmp(dotted + dl - 9, "/__init__") == 0) /* a package: its own name */
		dotted[dl - 9] = '\0';
	for (char *c = dotted; *c; c++)
		*c = *c == '/' ? '.' : *c;
	for (size_t i = 0; i < sf->n_imports; i++) {
		const struct scan_import *im = &sf->imports[i];
		char rel[PATH_TEXT_MAX + 64];
		if (im->level > 0 || (im->module && im->module[0] == '.')) {
			/* from . import x / from .x import y: against the importer's package */
			if (!relative_module(importer, im->level > 0 ? im->level : 1,
					     im->module ? im->module : "", rel, sizeof rel))
				continue;
			size_t rl = strlen(rel);
			const char *nm = im->name ? im->name : "";
			if ((strncmp(dotted, rel, rl) == 0 &&
			     (!dotted[rl] || (dotted[rl] == '.' && !strcmp(dotted + rl + 1, nm)))))
				return true;
			continue;
		}
		for (const char *m = dotted; m; m = strchr(m, '.') ? strchr(m, '.') + 1 : NULL) {
			size_t ml = strlen(m);
			const char *t = im->target ? im->target : "";
			const char *mod = im->module ? im->module : "";
			/* `import M`, `from M import x`, `from P import M` (target P.M) */
			if ((strncmp(mod, m, ml) == 0 && (!mod[ml] || mod[ml] == '.')) ||
			    (strncmp(t, m, ml) == 0 && (!t[ml] || t[ml] == '.')))
				return true;
		}
	}
	return false;
}

/* Test file `path` changed: every test of each test file that imports it (and of those that
 * import those) is selected, file by file: what it takes (a helper, a base class, a whole
 * TestCase) is the file's own code. */
static int test_importers(struct ictx *x, const char *path)
{
	size_t nf = x->head->n_files;
	uint8_t *seen = calloc(nf + 1, 1);
	size_t *queue = calloc(nf + 1, sizeof *queue), qn = 0;
	if (!seen || !queue) {
		free(seen), free(queue);
		return err_set(ERR_NOMEM, "impact: importers of %s", path);
	}
	int rc = 0;
	const struct catalog_file *self = selector_catalog_file(x->head, path);
	if (self)
		seen[self - x->head->files] = 1;
	const char *cur = path;
	for (size_t q = 0;; q++) {
		for (size_t f = 0; !rc && f < nf; f++) {
			const struct catalog_file *cf = &x->head->files[f];
			if (seen[f] ||
			    (cf->kind != CATALOG_TEST && cf->kind != CATALOG_TEST_HELPER) ||
			    !cf->blob || !cf->blob->scan ||
			    !imports_test_file(cf->blob->scan, cf->path, cur))
				continue;
			seen[f] = 1;
			queue[qn++] = f;
			char why[2 * PATH_TEXT_MAX + 64];
			if (cur == path)
				snprintf(why, sizeof why, "imports %s (changed)", path);
			else
				snprintf(why, sizeof why, "imports %s, which imports %s (changed)",
					 cur, path);
			rc = file_tests_all(x, f, IMPACT_TEST_MODULE, 0.8, why);
		}
		if (rc || q >= qn)
			break;
		cur = x->head->files[queue[q]].path;
	}
	free(seen), free(queue);
	return rc;
}

static int file_signals(struct ictx *x, const struct file_change *fc)
{
	const struct catalog_file *hf = selector_catalog_file(x->head, fc->new_path.bytes);
	const struct catalog_file *bf = selector_catalog_file(x->base, fc->old_path.bytes);
	if (fc->status == CHANGE_DELETED)
		hf = NULL;
	if (fc->status == CHANGE_ADDED)
		bf = NULL;
	int rc = rules_signal(x, selector_file_change_path(fc)->bytes);
	const struct catalog_file *f = hf ? hf : bf;
	if (rc || !f)
		return rc;
	switch (f->kind) {
	case CATALOG_TEST:
		rc = hf ? test_file_signal(x, hf, bf) : 0;
		if (!rc && test_code_differs(hf && hf->blob ? hf->blob->scan : NULL,
					     bf && bf->blob ? bf->blob->scan : NULL))
			rc = test_importers(x, f->path);
		if (!rc && bf && hf && strcmp(bf->path, hf->path) != 0) /* renamed: the old name */
			rc = test_importers(x, bf->path);
		return rc;
	case CATALOG_TEST_HELPER: /* no tests of its own: the test files that import it */
		if (test_code_differs(hf && hf->blob ? hf->blob->scan : NULL,
				      bf && bf->blob ? bf->blob->scan : NULL))
			rc = test_importers(x, f->path);
		if (!rc && bf && hf && strcmp(bf->path, hf->path) != 0)
			rc = test_importers(x, bf->path);
		return rc;
	case CATALOG_SOURCE:
		if (f->opdb && (rc = opdb_signal(x, hf, bf, fc)))
			return rc;
		return impact__source_changed(x, hf, bf, fc);
	case CATALOG_YAML:
		return native_yaml(x, hf ? hf->blob : NULL, bf ? bf->blob : NULL);
	case CATALOG_CPP:
		return native_cpp(x, hf ? hf->blob : NULL, bf ? bf->blob : NULL);
	}
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	return strcmp(((const struct impact_candidate *)a)->id,
		      ((const struct impact_candidate *)b)->id);
}

static int run(struct ictx *x)
{
	char why[600];
	if (fallback_reason(x, why, sizeof(why)))
		return fallback_all(x, why);
	if (x->cfg && x->cfg->coverage_json) {
		json_error_t je;
		x->coverage = json_loads(x->cfg->coverage_json, 0, &je);
		if (!json_is_object(x->coverage))
			return err_set(ERR_INVAL, "coverage map:%d: %s", je.line,
				       x->coverage ? "not an object" : je.text);
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < x->cs->n_files; i++)
		if (!x->cs->files[i].binary)
			rc = file_signals(x, &x->cs->files[i]);
	if (!rc)
		rc = impact__symbols_to_tests(x);
	if (!rc)
		rc = ops_to_tests(x);
	if (!rc)
		rc = impact__messages_to_tests(x);
	return rc;
}

int selector_impact_run(struct impact_result **out, const struct change_set *changes,
			const struct catalog *base, const struct catalog *head,
			const struct impact_config *config)
{
	if (!out || !changes || !base || !head)
		return err_set(ERR_INVAL, "impact_run: NULL argument");
	struct ictx x = { .cs = changes, .base = base, .head = head, .cfg = config };
	if (!(x.res = calloc(1, sizeof(*x.res))))
		return err_set(ERR_NOMEM, "impact result");
	int rc = run(&x);
	impact__ctx_finish(&x);
	json_decref(x.coverage);
	if (rc) {
		selector_impact_result_destroy(x.res);
		return rc;
	}
	if (x.res->n_candidates)
		qsort(x.res->candidates, x.res->n_candidates, sizeof(*x.res->candidates), cmp_cand);
	*out = x.res;
	return 0;
}

void selector_impact_result_destroy(struct impact_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->n_candidates; i++) {
		for (size_t r = 0; r < res->candidates[i].n_reasons; r++)
			free(res->candidates[i].reasons[r].detail);
		free(res->candidates[i].reasons);
	}
	free(res->candidates);
	free(res->fallback_reason);
	for (size_t i = 0; i < res->n_owned; i++)
		free(res->owned_ids[i]);
	free(res->owned_ids);
	free(res);
}
