/* The funnel tests' shared upstream and helpers (upstream.h). Criterion runs each test in a
 * process of its own, started afresh, so a static cache filled in a test (or in a suite's .init)
 * would generate the upstream once per test. It is generated once instead, in the runner before
 * the first test, and its directory handed to the tests' processes through the environment. */
#include "upstream.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "fixture/fixture.h"

#define UP_ENV "SPYRE_FUNNEL_TEST_UPSTREAM"

static char up_made[64]; /* in the runner: what to remove after the last test */

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	snprintf(up_made, sizeof up_made, "/tmp/funnel-up-XXXXXX");
	if (!mkdtemp(up_made)) {
		perror("funnel tests: mkdtemp");
		up_made[0] = '\0';
		return;
	}
	struct fixture_opts o = {
		.out = up_made, .scale = FIXTURE_SMALL, .seed = UP_SEED, .commits = UP_COMMITS
	};
	if (fixture_generate(&o, NULL) != 0) {
		fprintf(stderr, "funnel tests: generating the upstream: %s\n", err_last());
		return; /* up_dir() fails every test that needs it */
	}
	setenv(UP_ENV, up_made, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	(void)stats;
	if (up_made[0])
		fs_remove_tree(up_made);
}

const char *up_dir(void)
{
	const char *d = getenv(UP_ENV);
	cr_assert_not_null(d, "no generated upstream (see the runner's first lines)");
	return d;
}

void tmp_make(char *dir, size_t size, const char *tag)
{
	cr_assert_lt((size_t)snprintf(dir, size, "/tmp/funnel-%s-XXXXXX", tag), size);
	cr_assert_not_null(mkdtemp(dir), "mkdtemp %s", dir);
}

void tmp_remove(const char *dir)
{
	if (dir[0])
		fs_remove_tree(dir);
}

void tmp_write(char *path, size_t size, const char *dir, const char *name, const char *text)
{
	cr_assert_lt((size_t)snprintf(path, size, "%s/%s", dir, name), size);
	cr_assert_eq(fs_atomic_write(path, text, strlen(text), 0644), 0, "%s", err_last());
}

struct funnel_specs *up_specs(const char *path)
{
	char dflt[256];
	snprintf(dflt, sizeof dflt, "%s/spyre/specs", up_dir());
	const char *paths[] = { path ? path : dflt };
	struct funnel_specs_opts o = { .paths = paths, .n_paths = 1, .torch_root = up_dir() };
	struct funnel_specs *s = NULL;
	cr_assert_eq(funnel_specs_load(&s, &o), 0, "%s", err_last());
	return s;
}

void up_select(struct funnel_selection *sel, struct funnel_specs *specs, struct funnel_cache *cache,
	       const char *base, const char *head, const struct funnel_select_opts *o)
{
	struct funnel_change ch = { .repo = up_dir(), .base = base, .head = head };
	int rc = funnel_select(sel, &ch, specs, cache, o);
	cr_assert_eq(rc, 0, "%s..%s: %s", base ? base : "(empty)", head, err_last());
}

size_t scheduled_tests(const struct select_report *rep)
{
	size_t n = 0;
	for (size_t i = 0; i < rep->n_tests; i++)
		n += rep->tests[i].fate == SELECT_SCHEDULED;
	return n;
}

void expect_cases_follow_the_schedule(const struct funnel_selection *sel)
{
	const struct select_report *rep = &sel->rep;
	size_t k = 0, sum = 0, last_rank = 0;
	for (size_t i = 0; i < rep->n_tests; i++) {
		const struct select_test *t = &rep->tests[i];
		if (t->fate != SELECT_SCHEDULED)
			continue;
		cr_expect_gt(t->rank, last_rank, "%s: scheduled tests in rank order", t->id);
		last_rank = t->rank;
		sum += t->kernel_cases;
		for (size_t j = 0; j < t->kernel_cases; j++, k++) {
			cr_assert_lt(k, sel->n_cases, "%s: its cases are all there", t->id);
			cr_expect_eq(sel->cases[k], &rep->cases.v[t->case_first + j],
				     "case %zu is %s's case %zu, from the report", k, t->id, j);
			cr_expect_str_eq(sel->cases[k]->test_id, t->id);
		}
	}
	cr_expect_eq(k, sel->n_cases, "no case of a test that is not scheduled");
	cr_expect_eq(sel->n_cases, rep->kernel_cases);
	cr_expect_eq(sel->n_cases, sum);
}

static void expect_same_test(const struct select_test *a, const struct select_test *b,
			     const char *what)
{
	cr_expect_str_eq(a->id, b->id, "%s: test ids differ", what);
	cr_expect_eq(a->fate, b->fate, "%s: %s: fate %d and %d", what, a->id, a->fate, b->fate);
	cr_expect_eq(a->rank, b->rank, "%s: %s: rank", what, a->id);
	cr_expect_eq(a->kernel_cases, b->kernel_cases, "%s: %s: kernel cases %zu and %zu", what,
		     a->id, a->kernel_cases, b->kernel_cases);
	cr_assert_eq(a->n_reasons, b->n_reasons, "%s: %s: %zu and %zu reasons", what, a->id,
		     a->n_reasons, b->n_reasons);
	for (size_t r = 0; r < a->n_reasons; r++)
		cr_expect_str_eq(a->reasons[r].kind, b->reasons[r].kind, "%s: %s: reason %zu", what,
				 a->id, r);
}

void expect_same_selection(const struct funnel_selection *a, const struct funnel_selection *b,
			   const char *what)
{
	for (int s = 0; s < SELECT_STAGES; s++) {
		cr_expect_eq(a->rep.stages[s].in, b->rep.stages[s].in, "%s: stage %d in", what,
			     s + 1);
		cr_expect_eq(a->rep.stages[s].out, b->rep.stages[s].out, "%s: stage %d out", what,
			     s + 1);
	}
	cr_expect_eq(a->rep.fallback, b->rep.fallback, "%s: fallback", what);
	cr_expect_eq(a->rep.n_drift, b->rep.n_drift, "%s: drift", what);
	cr_assert_eq(a->rep.n_tests, b->rep.n_tests, "%s: %zu and %zu tests", what, a->rep.n_tests,
		     b->rep.n_tests);
	for (size_t i = 0; i < a->rep.n_tests; i++)
		expect_same_test(&a->rep.tests[i], &b->rep.tests[i], what);
	cr_assert_eq(a->n_cases, b->n_cases, "%s: %zu and %zu cases", what, a->n_cases, b->n_cases);
	for (size_t k = 0; k < a->n_cases; k++) {
		cr_expect_str_eq(a->cases[k]->id, b->cases[k]->id, "%s: case %zu", what, k);
		cr_expect_str_eq(a->cases[k]->test_id, b->cases[k]->test_id, "%s: case %zu", what,
				 k);
	}
}
