/* The catalog's variants against the generator's ground truth of them, test by test: a small
 * upstream's test/test_op_variants.py (every variant shape: @ops over the op database, its
 * families, comprehensions and filter(lambda ...) over them, a variant_test_name, @dtypes,
 * @parametrize with name_fn and subtest, import-time generated tests) and
 * .ground_truth/variants.jsonl. tests/cli/variants.sh checks the same truth by execution. */
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
#include "selector/catalog.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "a b c": the sorted names, space-separated. */
static void joined(const char **v, size_t n, char *out, size_t size)
{
	if (n > 1) /* v is NULL for a test without dtypes */
		qsort(v, n, sizeof *v, cmp_str);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(out);
		snprintf(out + k, size - k, "%s%s", i ? " " : "", v[i]);
	}
}

static void truth_names(json_t *arr, char *out, size_t size)
{
	const char *v[2048];
	size_t n = 0;
	for (size_t i = 0; i < json_array_size(arr) && n < 2048; i++)
		v[n++] = json_string_value(json_array_get(arr, i));
	joined(v, n, out, size);
}

static void check_seed(unsigned seed, size_t *tests, size_t *variants)
{
	char dir[] = "/tmp/fixture-variants-XXXXXX";
	cr_assert(mkdtemp(dir));
	struct fixture_opts o = { .out = dir, .scale = FIXTURE_SMALL, .seed = seed, .commits = 8 };
	cr_assert_eq(fixture_generate(&o, NULL), 0, "%s", err_last());
	struct catalog_cache *cache;
	struct catalog *cat = NULL;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	cr_assert_eq(selector_catalog_build(&cat, dir, "HEAD", cache), 0, "%s", err_last());
	char path[256], *s = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/.ground_truth/variants.jsonl", dir);
	cr_assert_eq(fs_read_file(&s, &len, path, 1u << 24), 0, "%s", path);
	static char want[1 << 16], got[1 << 16];
	for (char *p = s, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		json_t *j = json_loads(p, 0, NULL);
		cr_assert_not_null(j, "%s", p);
		const char *id = json_string_value(json_object_get(j, "id"));
		const struct catalog_test *ct = selector_catalog_test(cat, id);
		cr_expect_not_null(ct, "%s is not a catalog test", id);
		if (ct) {
			struct catalog_variants v;
			cr_assert_eq(selector_catalog_variants(&v, cat, ct), 0, "%s", err_last());
			cr_expect(!v.open && !v.approx, "%s: %s", id, v.why ? v.why : "");
			truth_names(json_object_get(j, "variants"), want, sizeof want);
			joined((const char **)v.names, v.n, got, sizeof got);
			cr_expect_str_eq(got, want, "%s", id);
			truth_names(json_object_get(j, "dtypes"), want, sizeof want);
			joined((const char **)v.dtypes, v.n_dtypes, got, sizeof got);
			cr_expect_str_eq(got, want, "%s: dtypes", id);
			cr_expect_eq(ct->device_generic, json_is_true(json_object_get(j, "device")),
				     "%s", id);
			*variants += v.n;
			selector_catalog_variants_finish(&v);
		}
		(*tests)++;
		json_decref(j);
	}
	free(s);
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(cache);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

Test(catalog_variants_truth, catalog_equals_the_truth_test_by_test)
{
	size_t tests = 0, variants = 0;
	for (unsigned seed = 1; seed <= 3; seed++)
		check_seed(seed, &tests, &variants);
	cr_expect_eq(tests, 3 * 24);
	cr_expect_gt(variants, 3 * 100, "%zu variants", variants);
}
