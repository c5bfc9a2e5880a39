/* The generator's test shapes: with every shape (the default), the tests of a small upstream
 * reach what they use through each of them, the test files and torch/__init__.py hold the
 * rendered forms (a helper, an aliased import, a re-export, a mixin, ...), and each affected test
 * of the truth carries the shapes it came through; with --shapes basic, none but direct calls. */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <criterion/criterion.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "fixture/fixture.h"

static const char *const shapes[] = {
	"direct",   "helper",        "internal_helper", "alias_from", "alias_module",
	"reexport", "helper_method", "decorator",       "partial",    "lambda_table",
	"nested",   "constant",      "computed_name",   "inherited",
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static char *gen(int basic)
{
	char *dir = strdup("/tmp/fixture-shapes-XXXXXX");
	cr_assert(dir && mkdtemp(dir));
	struct fixture_opts o = {
		.out = dir, .scale = FIXTURE_SMALL, .seed = 2, .shapes_basic = basic
	};
	cr_assert_eq(fixture_generate(&o, NULL), 0, "%s", err_last());
	return dir;
}

static char *slurp(const char *dir, const char *name)
{
	char path[256], *s = NULL;
	size_t n = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(fs_read_file(&s, &n, path, 64u << 20), 0, "%s", path);
	return s;
}

/* Bit k set when shape k names a test in tests.jsonl; counts lines in *n. */
static unsigned tests_shapes(const char *dir, size_t *n, int *other)
{
	char *s = slurp(dir, ".ground_truth/tests.jsonl");
	unsigned seen = 0;
	*n = 0;
	*other = 0;
	for (char *p = s, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = 0;
		json_t *o = json_loads(p, 0, NULL);
		cr_assert(o);
		json_t *a = json_object_get(o, "shapes");
		cr_assert(json_is_array(a), "a test without shapes: %s", p);
		for (size_t i = 0; i < json_array_size(a); i++) {
			const char *name = json_string_value(json_array_get(a, i));
			size_t k = 0;
			while (k < NSHAPES && strcmp(shapes[k], name))
				k++;
			if (k == NSHAPES)
				(*other)++;
			else
				seen |= 1u << k;
		}
		json_decref(o);
		(*n)++;
	}
	free(s);
	return seen;
}

Test(fixture_shapes, every_shape_is_written_and_labelled, .timeout = 120)
{
	char *dir = gen(0);
	size_t n;
	int other;
	unsigned seen = tests_shapes(dir, &n, &other);
	cr_assert_gt(n, 1000);
	cr_assert_eq(other, 0);
	for (size_t k = 0; k < NSHAPES; k++)
		cr_assert(seen & (1u << k), "no test reaches anything through %s", shapes[k]);
	/* the rendered forms */
	char *init = slurp(dir, "torch/__init__.py");
	cr_assert(strstr(init, " as api_"), "torch/__init__.py re-exports nothing");
	free(init);
	/* each affected test has a label made of known shapes */
	char *c = slurp(dir, ".ground_truth/commits.jsonl");
	size_t labelled = 0;
	for (char *p = c, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = 0;
		json_t *o = json_loads(p, 0, NULL);
		json_t *aff = json_object_get(o, "affected"),
		       *sh = json_object_get(o, "affected_shapes");
		cr_assert_eq(json_array_size(aff), json_array_size(sh), "%.60s", p);
		for (size_t i = 0; i < json_array_size(sh); i++) {
			cr_assert(strlen(json_string_value(json_array_get(sh, i))) > 0);
			labelled++;
		}
		json_decref(o);
	}
	free(c);
	cr_assert_gt(labelled, 100);
	nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

Test(fixture_shapes, basic_is_direct_calls_only, .timeout = 120)
{
	char *dir = gen(1);
	size_t n;
	int other;
	unsigned seen = tests_shapes(dir, &n, &other);
	cr_assert_gt(n, 1000);
	cr_assert_eq(other, 0);
	cr_assert_eq(seen, 1u, "basic wrote shapes %#x", seen);
	char *init = slurp(dir, "torch/__init__.py");
	cr_assert_null(strstr(init, " as api_"));
	free(init);
	nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS);
	free(dir);
}
