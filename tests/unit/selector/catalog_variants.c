/* The catalog's variants and generated tests against the ground truth written beside each test
 * of tests/fixtures/python/variant_shapes.py (a "# suffix suffix" comment above its
 * decorators: "open" when not static, "none" when the test has no variants), and the generated
 * tests of generated_tests.py as catalog ids. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "truth_comment.h"

static struct catalog *catalog_of(struct test_repo *t, struct catalog_cache **cache)
{
	char *shapes = read_fixture("variant_shapes.py"), *gen = read_fixture("generated_tests.py");
	test_repo_create(t);
	struct test_edit e[] = { { "test/test_shapes.py", 0100644, shapes, 0 },
				 { "test/test_gen.py", 0100644, gen, 0 } };
	char c[41];
	test_repo_commit(t, c, NULL, "c", NULL, 0, e, 2);
	free(shapes);
	free(gen);
	cr_assert_eq(selector_catalog_cache_create(cache, 0), 0);
	struct catalog *cat = NULL;
	cr_assert_eq(selector_catalog_build(&cat, t->dir, c, *cache), 0, "%s", err_last());
	return cat;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

Test(catalog_variants, equal_the_ground_truth_test_by_test)
{
	struct test_repo t;
	struct catalog_cache *cache;
	struct catalog *cat = catalog_of(&t, &cache);
	char *text = read_fixture("variant_shapes.py");
	size_t checked = 0;
	for (size_t i = 0; i < cat->n_tests; i++) {
		const struct catalog_test *ct = &cat->tests[i];
		if (strncmp(ct->id, "test/test_shapes.py::", 21) != 0)
			continue;
		const char *name = strrchr(ct->id, ':') + 1;
		char want[512], got[512] = "";
		truth_of(text, name, want, sizeof want);
		struct catalog_variants v;
		cr_assert_eq(selector_catalog_variants(&v, cat, ct), 0, "%s", err_last());
		if (v.open)
			snprintf(got, sizeof got, "open");
		else if (!v.n)
			snprintf(got, sizeof got, "none");
		for (size_t k = 0; k < v.n; k++) {
			size_t n = strlen(got);
			snprintf(got + n, sizeof got - n, "%s%s", k ? " " : "", v.names[k]);
		}
		cr_expect_str_eq(got, want, "%s", ct->id);
		selector_catalog_variants_finish(&v);
		checked++;
	}
	cr_expect_eq(checked, 8);
	free(text);
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&t);
}

Test(catalog_variants, generated_tests_are_catalog_tests)
{
	struct test_repo t;
	struct catalog_cache *cache;
	struct catalog *cat = catalog_of(&t, &cache);
	static const char *const want[] = { "test___add___not_supported", "test_layout_sparse",
					    "test_count_three", "test_plain" };
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char id[256];
		snprintf(id, sizeof id, "test/test_gen.py::TestGen::%s", want[i]);
		const struct catalog_test *ct = selector_catalog_test(cat, id);
		cr_expect_not_null(ct, "%s", id);
		if (ct)
			cr_expect(ct->device_generic, "%s", id);
	}
	size_t n = 0;
	for (size_t i = 0; i < cat->n_tests; i++)
		n += strncmp(cat->tests[i].id, "test/test_gen.py::", 18) == 0;
	cr_expect_eq(n, 9, "test_plain and the 8 named generated tests");
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&t);
}

/* @ops over an op database, in the shapes of PyTorch's test_reductions.py and
 * test_binary_ufuncs.py: each test's variants (sorted) equal the comment above it, "approx"
 * first when the list is over-approximated (and then said why). */
Test(catalog_variants, ops_over_the_op_database)
{
	char *db = read_fixture("opdb_shapes_db.py"), *tests = read_fixture("opdb_shapes_test.py");
	struct test_repo t;
	test_repo_create(&t);
	struct test_edit e[] = { { "torch/testing/_internal/common_methods_invocations.py", 0100644,
				   db, 0 },
				 { "test/test_opdb.py", 0100644, tests, 0 } };
	char c[41];
	test_repo_commit(&t, c, NULL, "c", NULL, 0, e, 2);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *cat = NULL;
	cr_assert_eq(selector_catalog_build(&cat, t.dir, c, cache), 0, "%s", err_last());
	size_t checked = 0;
	for (size_t i = 0; i < cat->n_tests; i++) {
		const struct catalog_test *ct = &cat->tests[i];
		if (strncmp(ct->id, "test/test_opdb.py::", 19) != 0)
			continue;
		char want[512], got[512] = "";
		truth_of(tests, strrchr(ct->id, ':') + 1, want, sizeof want);
		struct catalog_variants v;
		cr_assert_eq(selector_catalog_variants(&v, cat, ct), 0, "%s", err_last());
		cr_expect(!v.open, "%s: %s", ct->id, v.why ? v.why : "");
		cr_expect(!v.approx || v.why, "%s: over-approximated without a reason", ct->id);
		const char **names = calloc(v.n + 1, sizeof *names);
		for (size_t k = 0; k < v.n; k++)
			names[k] = v.names[k];
		qsort(names, v.n, sizeof *names, cmp_str);
		snprintf(got, sizeof got, "%s", v.approx ? "approx" : "");
		for (size_t k = 0; k < v.n; k++) {
			size_t n = strlen(got);
			snprintf(got + n, sizeof got - n, "%s%s", n ? " " : "", names[k]);
		}
		free(names);
		cr_expect_str_eq(got, want, "%s", ct->id);
		selector_catalog_variants_finish(&v);
		checked++;
	}
	cr_expect_eq(checked, 7);
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&t);
	free(db);
	free(tests);
}
