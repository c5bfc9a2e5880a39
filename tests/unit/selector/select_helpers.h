/* Shared helpers of the stage 3, stage 4 and report tests: a spec set from text, hand-made
 * candidates, and a report with eligible tests made by hand (no specs) for stage 4. */
#ifndef TESTS_UNIT_SELECTOR_SELECT_HELPERS_H
#define TESTS_UNIT_SELECTOR_SELECT_HELPERS_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "selector/select.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

static inline struct spec_set *specs_from_text(const char *text)
{
	static const struct spec_roots roots = { "/src/pytorch", "/src/torch-spyre" };
	struct spec_set *set = NULL;
	cr_assert_eq(testspecs_set_create(&set), 0);
	struct spec_load_opts o = { .roots = &roots };
	cr_assert_eq(testspecs_load_text(set, "s.yaml", text, strlen(text), &o), 0);
	return set;
}

/* An eligible test with one reason, as stage 3 would leave it. */
static inline void add_eligible(struct select_report *rep, const char *id, const char *kind,
				double score, size_t cases, bool smoke)
{
	struct select_reason r = { .score = score, .text = (char *)"hand-made" };
	snprintf(r.kind, sizeof r.kind, "%s", kind);
	if (rep->n_tests == rep->cap_tests) {
		rep->cap_tests = rep->cap_tests ? 2 * rep->cap_tests : 16;
		rep->tests = realloc(rep->tests, rep->cap_tests * sizeof *rep->tests);
		cr_assert_not_null(rep->tests);
	}
	struct select_test *t = &rep->tests[rep->n_tests++];
	memset(t, 0, sizeof *t);
	t->id = strdup(id);
	t->reasons = calloc(1, sizeof *t->reasons);
	t->reasons[0] = r;
	t->reasons[0].text = strdup(r.text);
	t->n_reasons = 1;
	t->fate = SELECT_ELIGIBLE;
	t->kernel_cases = cases;
	t->smoke = smoke;
	t->shard = -1;
	t->case_rule = "kernels";
	t->why4 = "";
}

#endif
