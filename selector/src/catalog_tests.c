/* The tests of a catalog's test files: test_* methods of classes deriving (directly or through
 * other test classes of the same file) from a TestCase-like base, the test methods such a class
 * inherits from the classes of the same file it derives from, module-level test_ functions,
 * device-generic and parametrized classes, and the ops an @ops(...) decorator runs over. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"

#define CLASSES_MAX 4096
/* Inherited tests: base classes followed from one test class (its whole ancestry, each class
 * once), and how deep a chain of bases is followed. */
#define INHERIT_CLASSES_MAX 64
#define INHERIT_DEPTH_MAX   16

static bool testcase_base(const char *name)
{
	const char *last = strrchr(name, '.');
	last = last ? last + 1 : name;
	size_t n = strlen(last);
	return n >= 8 && strcmp(last + n - 8, "TestCase") == 0;
}

/* Marks is_test[c] for the top-level classes that are test classes. */
static void test_classes(const struct scan_file *sf, bool *is_test)
{
	for (int round = 0; round < 16; round++) {
		bool changed = false;
		for (size_t c = 0; c < sf->n_classes && c < CLASSES_MAX; c++) {
			const struct scan_class *k = &sf->classes[c];
			if (is_test[c] || k->parent_class >= 0 || k->parent_function >= 0)
				continue;
			for (size_t b = 0; b < k->n_bases && !is_test[c]; b++) {
				const char *bn = k->bases[b].value;
				if (k->bases[b].keyword || k->bases[b].kind != SCAN_ARG_NAME || !bn)
					continue;
				if (testcase_base(bn))
					is_test[c] = true;
				for (size_t o = 0; o < sf->n_classes && o < CLASSES_MAX; o++)
					if (is_test[o] && strcmp(sf->classes[o].name, bn) == 0)
						is_test[c] = true;
			}
			changed |= is_test[c];
		}
		if (!changed)
			break;
	}
}

/* String literals of an @ops argument text: 'a', "b". */
static int op_names(struct catalog_test *t, struct arena *a, const char *text)
{
	const char *names[256];
	size_t n = 0;
	for (const char *p = text; *p && n < 256; p++) {
		if (*p != '\'' && *p != '"')
			continue;
		const char *e = strchr(p + 1, *p);
		if (!e)
			break;
		if (!(names[n++] = scan__strndup(a, p + 1, (size_t)(e - p - 1))))
			return err_set(ERR_NOMEM, "op names");
		p = e;
	}
	t->op_names = scan__alloc(a, sizeof(char *) * (n + 1));
	if (!t->op_names)
		return err_set(ERR_NOMEM, "op names");
	memcpy(t->op_names, names, sizeof(char *) * n);
	t->n_op_names = n;
	t->opset = CATALOG_OPSET_NAMES;
	return 0;
}

bool catalog__ops_decorator(const struct scan_file *sf, const struct scan_decorator *d,
			    const char **partial)
{
	const char *last = strrchr(d->name, '.');
	last = last ? last + 1 : d->name;
	if (partial)
		*partial = NULL;
	if (!d->called)
		return false;
	if (strcmp(last, "ops") == 0)
		return true;
	const char *v = NULL;
	for (size_t b = 0; sf && b < sf->n_bindings; b++)
		if (sf->bindings[b].class_index < 0 && strcmp(sf->bindings[b].name, d->name) == 0)
			v = sf->bindings[b].value;
	if (!v)
		return false;
	if (strncmp(v, "functools.", 10) == 0)
		v += 10;
	if (strncmp(v, "partial(ops", 11) != 0 || (v[11] != ',' && v[11] != ')'))
		return false;
	if (partial)
		*partial = v;
	return true;
}

static int test_opset(struct catalog_test *t, struct arena *a, const struct scan_file *sf,
		      const struct scan_function *fn)
{
	for (size_t d = 0; d < fn->n_decorators; d++) {
		const struct scan_decorator *dec = &fn->decorators[d];
		if (!catalog__ops_decorator(sf, dec, NULL))
			continue;
		const char *args = dec->args ? dec->args : "";
		if (strchr(args, '\'') || strchr(args, '"'))
			return op_names(t, a, args);
		if (strstr(args, "unary_ufuncs"))
			t->opset = CATALOG_OPSET_UNARY;
		else if (strstr(args, "binary_ufuncs"))
			t->opset = CATALOG_OPSET_BINARY;
		else if (strstr(args, "reduction_ops"))
			t->opset = CATALOG_OPSET_REDUCTION;
		else
			t->opset = CATALOG_OPSET_ALL;
		return 0;
	}
	return 0;
}

/* `name`: the test's name when it is not the function's (a generated test); else NULL. */
static int add_test_named(struct catalog *cat, size_t *cap, struct arena *a, size_t file, int fi,
			  const char *class_name, bool device, bool param, const char *name)
{
	const struct catalog_file *f = &cat->files[file];
	const struct scan_function *fn = &f->blob->scan->functions[fi];
	void *p = scan__grow(cat->tests, cat->n_tests, cap, sizeof(*cat->tests));
	if (!p)
		return err_set(ERR_NOMEM, "catalog tests");
	cat->tests = p;
	struct catalog_test *t = &cat->tests[cat->n_tests];
	*t = (struct catalog_test){ .file = file,
				    .function = fi,
				    .class_name = class_name,
				    .device_generic = device,
				    .parametrized = param,
				    .body_hash = fn->body_hash };
	/* "path::Class::name" or "path::name", by memcpy (60,000 ids a catalog). */
	size_t lp = strlen(f->path), lc = class_name ? strlen(class_name) : 0;
	const char *tn = name ? name : fn->name;
	size_t ln = strlen(tn);
	char *id = scan__alloc(a, lp + lc + ln + 8), *o = id;
	if (!id)
		return err_set(ERR_NOMEM, "test id");
	memcpy(o, f->path, lp);
	o += lp;
	if (class_name) {
		memcpy(o, "::", 2);
		memcpy(o + 2, class_name, lc);
		o += lc + 2;
	}
	memcpy(o, "::", 2);
	memcpy(o + 2, tn, ln + 1);
	t->id = id;
	int rc = name ? 0 : test_opset(t, a, f->blob->scan, fn);
	if (!rc)
		cat->n_tests++;
	return rc;
}

static int add_test(struct catalog *cat, size_t *cap, struct arena *a, size_t file, int fi,
		    const char *class_name, bool device, bool param)
{
	return add_test_named(cat, cap, a, file, fi, class_name, device, param, NULL);
}

static bool instantiated(const struct scan_file *sf, const char *cls,
			 enum scan_instantiate_kind kind)
{
	for (size_t i = 0; i < sf->n_instantiates; i++)
		if (sf->instantiates[i].kind == kind && sf->instantiates[i].class_name &&
		    strcmp(sf->instantiates[i].class_name, cls) == 0)
			return true;
	return false;
}

/* The class of this file a base name of class `c` stands for: the last top-level class of that
 * name defined before `c` (a later one does not exist yet when `c` is defined), or -1. Dotted
 * names (another module's classes) are not followed. */
static int base_class(const struct scan_file *sf, size_t c, const char *name)
{
	int found = -1;
	for (size_t o = 0; o < sf->n_classes && o < CLASSES_MAX; o++) {
		const struct scan_class *k = &sf->classes[o];
		if (k->parent_class >= 0 || k->parent_function >= 0 ||
		    k->first_line >= sf->classes[c].first_line || strcmp(k->name, name) != 0)
			continue;
		found = (int)o;
	}
	return found;
}

struct inherit {
	const struct scan_file *sf;
	int order[INHERIT_CLASSES_MAX]; /* the ancestry, depth first and left to right */
	size_t n;
};

/* Appends the bases of class `c` (and theirs) to x->order, each class once: Python's method
 * resolution order for the single and the usual multiple inheritance (C3 differs from this
 * depth-first walk only for diamonds whose shared base is listed first). */
static void ancestry(struct inherit *x, size_t c, int depth)
{
	const struct scan_class *k = &x->sf->classes[c];
	for (size_t b = 0; b < k->n_bases && depth < INHERIT_DEPTH_MAX; b++) {
		if (k->bases[b].keyword || k->bases[b].kind != SCAN_ARG_NAME || !k->bases[b].value)
			continue;
		int o = base_class(x->sf, c, k->bases[b].value);
		bool seen = o < 0;
		for (size_t i = 0; i < x->n && !seen; i++)
			seen = x->order[i] == o;
		if (seen || x->n >= INHERIT_CLASSES_MAX)
			continue;
		x->order[x->n++] = o;
		ancestry(x, (size_t)o, depth + 1);
	}
}

/* True when class `c` or a class before index `upto` of the ancestry defines a method `name`. */
static bool defined_before(const struct inherit *x, size_t c, size_t upto, const char *name)
{
	const struct scan_file *sf = x->sf;
	for (size_t i = 0; i < sf->n_functions; i++) {
		int owner = sf->functions[i].class_index;
		bool earlier = owner == (int)c;
		for (size_t a = 0; a < upto && !earlier; a++)
			earlier = owner == x->order[a];
		if (earlier && strcmp(sf->functions[i].name, name) == 0)
			return true;
	}
	return false;
}

/* The test methods test class `c` inherits from the classes of its file: each test* method of
 * an ancestor that neither `c` nor an ancestor earlier in the resolution order defines (the
 * last definition when a class defines a name twice), listed as path::C::name with the body,
 * hash and decorators of the method it inherits and the flags of `c`. */
static int inherited_tests(struct catalog *cat, size_t *cap, struct arena *a, size_t file, size_t c)
{
	const struct scan_file *sf = cat->files[file].blob->scan;
	struct inherit x = { .sf = sf };
	ancestry(&x, c, 0);
	const char *cls = sf->classes[c].name;
	bool dev = instantiated(sf, cls, SCAN_INSTANTIATE_DEVICE_TYPE);
	bool par = instantiated(sf, cls, SCAN_INSTANTIATE_PARAMETRIZED);
	for (size_t o = 0; o < x.n; o++) {
		for (size_t i = 0; i < sf->n_functions; i++) {
			const struct scan_function *fn = &sf->functions[i];
			if (fn->class_index != x.order[o] || strncmp(fn->name, "test", 4) != 0)
				continue;
			bool later = false; /* a second definition in the same class wins */
			for (size_t j = i + 1; j < sf->n_functions && !later; j++)
				later = sf->functions[j].class_index == x.order[o] &&
					strcmp(sf->functions[j].name, fn->name) == 0;
			if (later || defined_before(&x, c, o, fn->name))
				continue;
			int rc = add_test(cat, cap, a, file, (int)i, cls, dev, par);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Inherited tests of the test classes [*next, ...) that end before `line`, after their own. */
static int classes_ended(struct catalog *cat, size_t *cap, struct arena *a, size_t file,
			 const bool *is_test, size_t *next, uint32_t line)
{
	const struct scan_file *sf = cat->files[file].blob->scan;
	for (; *next < sf->n_classes && *next < CLASSES_MAX; (*next)++) {
		size_t c = *next;
		if (sf->classes[c].last_line >= line)
			break;
		int rc = is_test[c] && sf->classes[c].n_bases
			     ? inherited_tests(cat, cap, a, file, c)
			     : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_test_def(const void *a, const void *b)
{
	const struct catalog_test *x = *(const struct catalog_test *const *)a;
	const struct catalog_test *y = *(const struct catalog_test *const *)b;
	int c = strcmp(x->id, y->id);
	if (!c)
		c = (x->function > y->function) - (x->function < y->function);
	return c ? c : (x > y) - (x < y); /* then by position: the last one stays */
}

/* A name defined twice in a class (or at module level) is one test, the last definition: drops
 * the earlier ones of tests [from, n_tests), keeping the order of the others. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* True when two of tests [from, to) may share an id: their ids' hashes, sorted, repeat. Spares
 * the sort of the ids themselves for the files without (nearly all). */
static int may_repeat(const struct catalog *cat, size_t from, size_t to, bool *out)
{
	uint64_t *h = malloc(sizeof(*h) * (to - from));
	if (!h)
		return err_set(ERR_NOMEM, "catalog: %zu tests", to - from);
	for (size_t i = from; i < to; i++)
		h[i - from] =
		    catalog__hash(cat->tests[i].id, strlen(cat->tests[i].id), CATALOG_HASH_SEED);
	qsort(h, to - from, sizeof(*h), cmp_u64);
	*out = false;
	for (size_t i = 0; i + 1 < to - from && !*out; i++)
		*out = h[i] == h[i + 1];
	free(h);
	return 0;
}

static int drop_redefined(struct catalog *cat, size_t from)
{
	size_t k = cat->n_tests - from;
	bool repeat = false;
	if (k < 2)
		return 0;
	int rc = may_repeat(cat, from, cat->n_tests, &repeat);
	if (rc || !repeat)
		return rc;
	struct catalog_test **v = malloc(sizeof(*v) * k);
	if (!v)
		return err_set(ERR_NOMEM, "catalog: %zu tests", k);
	for (size_t i = 0; i < k; i++)
		v[i] = &cat->tests[from + i];
	qsort(v, k, sizeof(*v), cmp_test_def);
	size_t dropped = 0;
	for (size_t i = 0; i + 1 < k; i++)
		if (strcmp(v[i]->id, v[i + 1]->id) == 0) {
			v[i]->id = NULL; /* an earlier definition of the same test */
			dropped++;
		}
	free(v);
	if (!dropped)
		return 0;
	size_t o = from;
	for (size_t i = from; i < cat->n_tests; i++)
		if (cat->tests[i].id)
			cat->tests[o++] = cat->tests[i];
	cat->n_tests = o;
	return 0;
}

/* Tests the file adds at import time to its test classes (scan_generated.c), listed under
 * their generator function: an edit of it selects them. */
static int generated_tests(struct catalog *cat, size_t *cap, struct arena *a, size_t file,
			   const bool *is_test)
{
	const struct scan_file *sf = cat->files[file].blob->scan;
	for (size_t g = 0; g < sf->n_generated; g++) {
		const struct scan_generated *gt = &sf->generated[g];
		int fi = -1, ci = -1;
		for (size_t i = 0; i < sf->n_functions && fi < 0; i++)
			if (sf->functions[i].class_index < 0 &&
			    sf->functions[i].parent_function < 0 &&
			    strcmp(sf->functions[i].name, gt->generator) == 0)
				fi = (int)i;
		for (size_t c = 0; c < sf->n_classes && c < CLASSES_MAX; c++)
			if (is_test[c] && strcmp(sf->classes[c].name, gt->class_name) == 0)
				ci = (int)c;
		if (fi < 0 || ci < 0 || !gt->name)
			continue;
		const char *cls = sf->classes[ci].name;
		int rc = add_test_named(
		    cat, cap, a, file, fi, cls, instantiated(sf, cls, SCAN_INSTANTIATE_DEVICE_TYPE),
		    instantiated(sf, cls, SCAN_INSTANTIATE_PARAMETRIZED), gt->name);
		if (rc)
			return rc;
	}
	return 0;
}

/* The tests of one test file, in source order; a class's inherited tests follow its own. */
int catalog__file_tests(struct catalog *cat, size_t *cap, struct arena *a, size_t file)
{
	const struct scan_file *sf = cat->files[file].blob->scan;
	bool is_test[CLASSES_MAX] = { 0 };
	test_classes(sf, is_test);
	size_t next = 0, from = cat->n_tests;
	for (size_t i = 0; i < sf->n_functions; i++) {
		const struct scan_function *fn = &sf->functions[i];
		if (fn->parent_function >= 0 || strncmp(fn->name, "test", 4) != 0)
			continue;
		int rc = classes_ended(cat, cap, a, file, is_test, &next, fn->first_line);
		if (rc)
			return rc;
		if (fn->class_index < 0) {
			if (strncmp(fn->name, "test_", 5) == 0)
				rc = add_test(cat, cap, a, file, (int)i, NULL, false, false);
		} else if (fn->class_index < CLASSES_MAX && is_test[fn->class_index]) {
			const char *cls = sf->classes[fn->class_index].name;
			rc = add_test(cat, cap, a, file, (int)i, cls,
				      instantiated(sf, cls, SCAN_INSTANTIATE_DEVICE_TYPE),
				      instantiated(sf, cls, SCAN_INSTANTIATE_PARAMETRIZED));
		}
		if (rc)
			return rc;
	}
	int rc = classes_ended(cat, cap, a, file, is_test, &next, UINT32_MAX);
	if (!rc)
		rc = generated_tests(cat, cap, a, file, is_test);
	return rc ? rc : drop_redefined(cat, from);
}

static int cmp_test(const void *a, const void *b)
{
	return strcmp((*(const struct catalog_test *const *)a)->id,
		      (*(const struct catalog_test *const *)b)->id);
}

/* by_id from each file's tests in id order: files are in path order, so the concatenation is
 * sorted unless a path is a proper prefix of another's ("t.py" and "t.py/test_x.py"): checked
 * at every file boundary, and sorted whole then. */
static int index_tests(struct catalog *cat, struct catalog_priv *priv, const size_t *start,
		       const uint32_t *const *order, size_t n_files)
{
	priv->by_id = malloc(sizeof(*priv->by_id) * (cat->n_tests + 1));
	if (!priv->by_id)
		return err_set(ERR_NOMEM, "test index");
	size_t k = 0;
	bool sorted = true;
	for (size_t f = 0; f < n_files; f++) {
		size_t n = (f + 1 < n_files ? start[f + 1] : cat->n_tests) - start[f];
		if (!n)
			continue;
		const struct catalog_test *first = &cat->tests[start[f] + order[f][0]];
		if (k && strcmp(priv->by_id[k - 1]->id, first->id) >= 0)
			sorted = false;
		for (size_t i = 0; i < n; i++)
			priv->by_id[k++] = &cat->tests[start[f] + order[f][i]];
	}
	if (!sorted && cat->n_tests)
		qsort(priv->by_id, cat->n_tests, sizeof(*priv->by_id), cmp_test);
	return 0;
}

int catalog__extract_tests(struct catalog *cat, struct catalog_priv *priv)
{
	size_t cap = 0, n_test_files = 0;
	size_t *start = malloc(sizeof(*start) * (cat->n_files + 1));
	const uint32_t **order = malloc(sizeof(*order) * (cat->n_files + 1));
	int rc = start && order ? 0 : err_set(ERR_NOMEM, "test index");
	for (size_t f = 0; !rc && f < cat->n_files; f++) {
		const struct catalog_file *cf = &cat->files[f];
		if (!cf->blob->scan || cf->blob->scan->skipped)
			continue;
		if (cf->kind == CATALOG_TEST) {
			start[n_test_files] = cat->n_tests;
			rc = catalog__cached_file_tests(cat, &cap, f, &order[n_test_files]);
			n_test_files++;
		} else if (cf->opdb) {
			rc = catalog__index_opinfos(cat, cf);
		}
	}
	if (!rc)
		rc = index_tests(cat, priv, start, order, n_test_files);
	free(start);
	free(order);
	return rc;
}
