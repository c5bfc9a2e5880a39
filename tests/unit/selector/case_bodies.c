/* Kernel cases from what an @ops test really runs, against the ground truth written above each
 * test of tests/fixtures/python/opdb_bodies_test.py: a body that runs its op gets the cases of
 * its list's entries at the dtypes PyTorch instantiates (the entry's own, a Python reference's
 * inherited ones, the @ops dtype mode, allowed_dtypes); a body that runs no op, or only expects
 * it to raise, and an OpDTypes.unsupported test get none, with the reason. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "gitrepo.h"
#include "select_helpers.h"
#include "selector/catalog.h"
#include "testspecs/cases.h"
#include "truth_comment.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char specs[] =
    "test_suite_config:\n  files:\n"
    "    - path: ${TORCH_ROOT}/test/test_bodies.py\n"
    "      unlisted_test_mode: mandatory_success\n"
    "  global:\n"
    "    supported_dtypes: [{name: float16}, {name: float32}, {name: bfloat16}, {name: bool}]\n";

struct bodies {
	char *db, *tests;
	struct test_repo t;
	struct catalog_cache *cache;
	struct catalog *cat;
	struct spec_set *set;
	struct spec_resolver *r;
};

/* The two fixture files committed to a repository, its catalog, and specs from `text`. */
static void bodies_open(struct bodies *b, const char *text)
{
	b->db = read_fixture("opdb_bodies_db.py");
	b->tests = read_fixture("opdb_bodies_test.py");
	test_repo_create(&b->t);
	struct test_edit e[] = { { "torch/testing/_internal/common_methods_invocations.py", 0100644,
				   b->db, 0 },
				 { "test/test_bodies.py", 0100644, b->tests, 0 } };
	char c[41];
	test_repo_commit(&b->t, c, NULL, "c", NULL, 0, e, 2);
	cr_assert_eq(selector_catalog_cache_create(&b->cache, 0), 0);
	b->cat = NULL;
	cr_assert_eq(selector_catalog_build(&b->cat, b->t.dir, c, b->cache), 0, "%s", err_last());
	b->set = specs_from_text(text);
	cr_assert_eq(testspecs_resolver_create(&b->r, b->set), 0);
}

static void bodies_close(struct bodies *b)
{
	testspecs_resolver_destroy(b->r);
	testspecs_set_destroy(b->set);
	selector_catalog_destroy(b->cat);
	selector_catalog_cache_destroy(b->cache);
	test_repo_destroy(&b->t);
	free(b->db);
	free(b->tests);
}

/* The kernel cases of test `id` as every command expands them (selector_case_test_init). */
static void bodies_expand(struct bodies *b, const char *id, struct spec_case_list *l,
			  struct spec_expand_result *res)
{
	struct spec_decision *d = calloc(1, sizeof *d);
	struct spec_resolve_opts o = { 0 };
	cr_assert_eq(testspecs_resolver_resolve(b->r, id, &o, d), 0, "%s", err_last());
	struct selector_case_test x;
	cr_assert_eq(selector_case_test_init(&x, id, b->cat, NULL, d, &o), 0);
	testspecs_cases_init(l);
	cr_assert_eq(testspecs_cases_expand(l, b->r, b->set, &x.ct, res), 0, "%s", err_last());
	selector_case_test_finish(&x);
	free(d);
}

Test(case_bodies, cases_follow_what_the_test_runs)
{
	struct bodies b;
	bodies_open(&b, specs);
	size_t checked = 0;
	for (size_t i = 0; i < b.cat->n_tests; i++) {
		const char *id = b.cat->tests[i].id;
		if (strncmp(id, "test/test_bodies.py::", 21) != 0)
			continue;
		char want[512], got[512] = "";
		truth_of(b.tests, strrchr(id, ':') + 1, want, sizeof want);
		struct spec_case_list l;
		struct spec_expand_result res;
		bodies_expand(&b, id, &l, &res);
		cr_expect(res.eligible, "%s", id);
		const char **names = calloc(l.n + 1, sizeof *names);
		char(*buf)[96] = calloc(l.n + 1, sizeof *buf);
		for (size_t k = 0; k < l.n; k++) {
			snprintf(buf[k], sizeof buf[k], "%s:%s", l.v[k].op,
				 testspecs_dtype_name(l.v[k].dtype));
			names[k] = buf[k];
		}
		qsort(names, l.n, sizeof *names, cmp_str);
		for (size_t k = 0; k < l.n; k++) { /* each op:dtype once (a case per shape) */
			size_t n = strlen(got);
			if (k == 0 || strcmp(names[k], names[k - 1]) != 0)
				snprintf(got + n, sizeof got - n, "%s%s", n ? " " : "", names[k]);
			for (size_t m = 0; m < k; m++) /* one identity per case */
				cr_expect_str_neq(l.v[m].id, l.v[k].id, "%s: %s", id, names[k]);
		}
		if (!l.n) { /* none: the reason's telling word */
			cr_expect_not_null(res.why, "%s", id);
			const char *word = strchr(want, ' ') ? strchr(want, ' ') + 1 : want;
			cr_expect(res.why && strstr(res.why, word), "%s: '%s' lacks '%s'", id,
				  res.why ? res.why : "", word);
			snprintf(got, sizeof got, "none: %.60s", word);
		}
		cr_expect_str_eq(got, want, "%s", id);
		/* never tighter than assert_close's default for the dtype */
		for (size_t k = 0; k < l.n; k++) {
			double pa, pr;
			testspecs_pytorch_tolerance(l.v[k].dtype, &pa, &pr);
			cr_expect(l.v[k].atol >= pa && l.v[k].rtol >= pr, "%s: %s", id, names[k]);
		}
		free(names);
		free(buf);
		testspecs_cases_finish(&l);
		checked++;
	}
	cr_expect_eq(checked, 13);
	bodies_close(&b);
}

/* Specs that bound the ops: a test runs those of its list only (add and sub of binary_ufuncs,
 * not neg, which the specs also support), and a test whose body runs no op still gets none. */
Test(case_bodies, bounded_ops_are_the_lists_ones)
{
	struct bodies b;
	bodies_open(&b, "test_suite_config:\n  files:\n"
			"    - path: ${TORCH_ROOT}/test/test_bodies.py\n"
			"      unlisted_test_mode: mandatory_success\n"
			"  global:\n"
			"    supported_dtypes: [{name: float16}]\n"
			"    supported_ops: [{name: add}, {name: neg}]\n");
	const struct {
		const char *test;
		size_t n_add, n_neg;
	} want[] = { { "test_runs", 1, 0 }, { "test_helper", 0, 1 }, { "test_metadata", 0, 0 } };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char id[128];
		snprintf(id, sizeof id, "test/test_bodies.py::TestBodies::%s", want[i].test);
		struct spec_case_list l;
		struct spec_expand_result res;
		bodies_expand(&b, id, &l, &res);
		size_t add = 0, neg = 0;
		for (size_t k = 0; k < l.n; k++) {
			cr_expect(strcmp(l.v[k].op, "add") == 0 || strcmp(l.v[k].op, "neg") == 0,
				  "%s: %s", id, l.v[k].op);
			add += strcmp(l.v[k].op, "add") == 0;
			neg += strcmp(l.v[k].op, "neg") == 0;
		}
		cr_expect_eq(add > 0, want[i].n_add > 0, "%s: add", id);
		cr_expect_eq(neg > 0, want[i].n_neg > 0, "%s: neg", id);
		testspecs_cases_finish(&l);
	}
	bodies_close(&b);
}

/* What the upstream test itself does with an op: its entry's DecorateInfos for the test (a skip
 * at bool, an expected failure at bfloat16, tolerances; not those of another device, another
 * test or a host condition) and the test's own toleranceOverride; assert_close's default
 * where nothing is given, never below the framework's 1e-3. */
Test(case_bodies, what_the_test_does_with_its_op)
{
	struct bodies b;
	bodies_open(&b, specs);
	const struct {
		const char *test, *op;
		enum spec_dtype dtype;
		bool skipped;
		enum spec_mode mode;
		double atol, rtol;
	} want[] = {
		{ "test_runs", "add", SPEC_DTYPE_BOOL, true, SPEC_MODE_MANDATORY_SUCCESS, 1e-3,
		  1e-3 },
		{ "test_runs", "add", SPEC_DTYPE_BFLOAT16, false, SPEC_MODE_XFAIL, 5e-2, 1.6e-2 },
		{ "test_runs", "add", SPEC_DTYPE_FLOAT16, false, SPEC_MODE_MANDATORY_SUCCESS, 1e-2,
		  2e-2 },
		{ "test_runs", "add", SPEC_DTYPE_FLOAT32, false, SPEC_MODE_MANDATORY_SUCCESS, 1e-3,
		  1e-3 },
		{ "test_runs", "sub", SPEC_DTYPE_BFLOAT16, false, SPEC_MODE_MANDATORY_SUCCESS, 1e-3,
		  1.6e-2 },
		{ "test_helper", "neg", SPEC_DTYPE_FLOAT16, false, SPEC_MODE_MANDATORY_SUCCESS,
		  3e-3, 4e-3 },
		{ "test_no_dtype", "add", SPEC_DTYPE_FLOAT32, false, SPEC_MODE_MANDATORY_SUCCESS,
		  1e-3, 1e-3 }, /* the entry's DecorateInfo is test_runs's only */
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char id[128];
		snprintf(id, sizeof id, "test/test_bodies.py::TestBodies::%s", want[i].test);
		struct spec_case_list l;
		struct spec_expand_result res;
		bodies_expand(&b, id, &l, &res);
		size_t found = 0;
		for (size_t k = 0; k < l.n; k++) {
			const struct spec_case *sc = &l.v[k];
			if (strcmp(sc->op, want[i].op) != 0 || sc->dtype != want[i].dtype)
				continue;
			found++;
			bool skipped = sc->unsupported && strstr(sc->why, "the test skips this op");
			cr_expect_eq(skipped, want[i].skipped, "%s %s: %s", id, sc->op, sc->why);
			cr_expect_eq(sc->mode, want[i].mode, "%s %s", id, sc->op);
			cr_expect_float_eq(sc->atol, want[i].atol, 1e-12, "%s %s: atol %g", id,
					   sc->op, sc->atol);
			cr_expect_float_eq(sc->rtol, want[i].rtol, 1e-12, "%s %s: rtol %g", id,
					   sc->op, sc->rtol);
		}
		cr_expect_gt(found, 0, "%s: no %s case", id, want[i].op);
		testspecs_cases_finish(&l);
	}
	bodies_close(&b);
}
