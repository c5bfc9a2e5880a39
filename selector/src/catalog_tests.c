/* The tests of a catalog's test files: test_* methods of classes deriving (directly or through
 * other test classes of the same file) from a TestCase-like base, module-level test_ functions,
 * device-generic and parametrized classes, and the ops an @ops(...) decorator runs over. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"

#define CLASSES_MAX 4096

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

static int test_opset(struct catalog_test *t, struct arena *a, const struct scan_function *fn)
{
	for (size_t d = 0; d < fn->n_decorators; d++) {
		const struct scan_decorator *dec = &fn->decorators[d];
		const char *last = strrchr(dec->name, '.');
		last = last ? last + 1 : dec->name;
		if (strcmp(last, "ops") != 0 || !dec->called)
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

static int add_test(struct catalog *cat, size_t *cap, struct arena *a, size_t file, int fi,
		    const char *class_name, bool device, bool param)
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
	size_t ln = strlen(fn->name);
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
	memcpy(o + 2, fn->name, ln + 1);
	t->id = id;
	int rc = test_opset(t, a, fn);
	if (!rc)
		cat->n_tests++;
	return rc;
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

static int file_tests(struct catalog *cat, size_t *cap, struct arena *a, size_t file)
{
	const struct scan_file *sf = cat->files[file].blob->scan;
	bool is_test[CLASSES_MAX] = { 0 };
	test_classes(sf, is_test);
	for (size_t i = 0; i < sf->n_functions; i++) {
		const struct scan_function *fn = &sf->functions[i];
		if (fn->parent_function >= 0 || strncmp(fn->name, "test", 4) != 0)
			continue;
		int rc = 0;
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
	return 0;
}

static int cmp_test(const void *a, const void *b)
{
	return strcmp((*(const struct catalog_test *const *)a)->id,
		      (*(const struct catalog_test *const *)b)->id);
}

int catalog__extract_tests(struct catalog *cat, struct catalog_priv *priv);
int catalog__extract_tests(struct catalog *cat, struct catalog_priv *priv)
{
	size_t cap = 0;
	for (size_t f = 0; f < cat->n_files; f++) {
		const struct catalog_file *cf = &cat->files[f];
		if (!cf->blob->scan || cf->blob->scan->skipped)
			continue;
		if (cf->kind == CATALOG_TEST) {
			int rc = file_tests(cat, &cap, &priv->arena, f);
			if (rc)
				return rc;
		} else if (cf->opdb) {
			const struct scan_file *sf = cf->blob->scan;
			for (size_t i = 0; i < sf->n_opinfos; i++)
				if (sf->opinfos[i].name &&
				    strmap_put(&priv->op_kinds, sf->opinfos[i].name,
					       (intptr_t)sf->opinfos[i].kind))
					return ERR_NOMEM;
		}
	}
	priv->by_id = malloc(sizeof(*priv->by_id) * (cat->n_tests + 1));
	if (!priv->by_id)
		return err_set(ERR_NOMEM, "test index");
	for (size_t i = 0; i < cat->n_tests; i++)
		priv->by_id[i] = &cat->tests[i];
	if (cat->n_tests)
		qsort(priv->by_id, cat->n_tests, sizeof(*priv->by_id), cmp_test);
	return 0;
}
