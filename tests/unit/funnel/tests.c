/* funnel_tests_expand: the tests of one revision taken straight to stage 3 give each test the
 * cases a selection gives it (the same ids, in the same order), the ids asked for come in the
 * order asked with the absent ones set apart, is_test answers from the revision's tests, and
 * bad revisions and directories are bad input. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "funnel/funnel.h"
#include "selector/catalog.h"
#include "upstream.h"

static const struct select_test *find(const struct select_report *rep, const char *id)
{
	for (size_t i = 0; i < rep->n_tests; i++)
		if (strcmp(rep->tests[i].id, id) == 0)
			return &rep->tests[i];
	return NULL;
}

/* The same fate and the same case ids, in the same order, for one test of two reports. */
static void expect_same_cases(const struct select_report *a, const struct select_test *ta,
			      const struct select_report *b, const struct select_test *tb)
{
	cr_expect_eq(ta->fate >= SELECT_ELIGIBLE, tb->fate >= SELECT_ELIGIBLE, "%s: eligible",
		     ta->id);
	cr_assert_eq(ta->kernel_cases, tb->kernel_cases, "%s: %zu cases, %zu", ta->id,
		     ta->kernel_cases, tb->kernel_cases);
	for (size_t k = 0; k < ta->kernel_cases; k++)
		cr_expect_str_eq(a->cases.v[ta->case_first + k].id,
				 b->cases.v[tb->case_first + k].id, "%s: case %zu", ta->id, k);
}

Test(funnel_tests, every_test_gets_the_cases_a_selection_gives_it)
{
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_selection sel;
	up_select(&sel, specs, NULL, NULL, "HEAD", NULL); /* every test is new: a candidate */
	struct funnel_expansion x;
	struct funnel_tests t = { .repo = up_dir() };
	cr_assert_eq(funnel_tests_expand(&x, &t, specs, NULL), 0, "%s", err_last());
	cr_expect_eq(x.rep.n_tests, x.catalog->n_tests, "every test of HEAD");
	cr_expect_eq(x.n_absent, 0);
	size_t with_cases = 0, opinfo = 0;
	for (size_t i = 0; i < sel.rep.n_tests; i++) {
		const struct select_test *ts = &sel.rep.tests[i];
		const struct select_test *tx = find(&x.rep, ts->id);
		cr_assert(tx, "%s: in the expansion", ts->id);
		expect_same_cases(&sel.rep, ts, &x.rep, tx);
		with_cases += ts->kernel_cases > 0;
		opinfo += ts->kernel_cases > 0 && strcmp(ts->case_rule, "opinfo") == 0;
	}
	cr_expect_gt(with_cases, 2, "tests with cases to compare");
	cr_expect_gt(opinfo, 0, "an @ops test among them");
	funnel_expansion_finish(&x);
	funnel_selection_finish(&sel);
	funnel_specs_destroy(specs);
}

Test(funnel_tests, ids_come_in_the_order_asked_and_absent_ones_apart)
{
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0);
	struct funnel_expansion all;
	struct funnel_tests t = { .repo = up_dir(), .rev = "HEAD~1" };
	cr_assert_eq(funnel_tests_expand(&all, &t, specs, cache), 0, "%s", err_last());
	cr_assert_gt(all.catalog->n_tests, 2);
	const char *ids[] = { all.catalog->tests[2].id, "test/test_nope.py::TestNope::test_nope",
			      all.catalog->tests[0].id };
	struct funnel_expansion x;
	t.ids = ids;
	t.n_ids = 3;
	cr_assert_eq(funnel_tests_expand(&x, &t, specs, cache), 0, "%s", err_last());
	cr_assert_eq(x.rep.n_tests, 2);
	cr_expect_str_eq(x.rep.tests[0].id, ids[0]);
	cr_expect_str_eq(x.rep.tests[1].id, ids[2]);
	cr_assert_eq(x.n_absent, 1);
	cr_expect_eq(x.absent[0], ids[1], "the caller's pointer");
	for (size_t i = 0; i < 2; i++)
		expect_same_cases(&x.rep, &x.rep.tests[i], &all.rep,
				  find(&all.rep, x.rep.tests[i].id));
	cr_expect(funnel_expansion_is_test(&x, ids[0]));
	cr_expect(!funnel_expansion_is_test(&x, ids[1]));
	funnel_expansion_finish(&x);
	funnel_expansion_finish(&all);
	funnel_cache_destroy(cache); /* after the catalogs built with it */
	funnel_specs_destroy(specs);
}

Test(funnel_tests, a_bad_revision_or_directory_is_bad_input)
{
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_expansion x;
	struct funnel_tests t = { .repo = up_dir(), .rev = "no-such-rev" };
	cr_expect_eq(funnel_tests_expand(&x, &t, specs, NULL), ERR_NOTFOUND, "%s", err_last());
	cr_expect(strstr(err_last(), "no-such-rev"), "names it: %s", err_last());
	cr_expect_eq(x.rep.n_tests, 0);
	funnel_expansion_finish(&x);
	char dir[64];
	tmp_make(dir, sizeof dir, "norepo");
	t = (struct funnel_tests){ .repo = dir };
	int rc = funnel_tests_expand(&x, &t, specs, NULL);
	cr_expect(rc == ERR_NOTFOUND || rc == ERR_INVAL, "%d: %s", rc, err_last());
	funnel_expansion_finish(&x);
	tmp_remove(dir);
	funnel_specs_destroy(specs);
}
