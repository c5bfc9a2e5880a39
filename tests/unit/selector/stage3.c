/* Stage 3: hand-made candidates resolved against a small spec set: skip drops, xfail and
 * mandatory_success keep, the smoke label is seen, kernel cases are counted, and drift names
 * new tests under an unlisted mode and plain entries that the head catalog no longer has. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "select_helpers.h"

static const char SPECS[] = "test_suite_config:\n"
			    "  files:\n"
			    "    - path: ${TORCH_ROOT}/test/test_a.py\n"
			    "      unlisted_test_mode: xfail\n"
			    "      tests:\n"
			    "        - names: [TestA::test_one]\n"
			    "          labels: [smoke]\n"
			    "        - names: [TestA::test_skipped]\n"
			    "          mode: skip\n"
			    "        - names: [TestA::test_gone, TestA::test_also_gone]\n"
			    "        - names: ['TestA::test_re\\w*']\n"
			    "          mode: xfail\n"
			    "        - names: [TestA::test_kern]\n"
			    "          kernels:\n"
			    "            - op: add\n"
			    "              inputs: ['4x4', '4x4']\n"
			    "              dtype: float16\n"
			    "            - op: softmax\n"
			    "              inputs: ['67x256']\n"
			    "              dtype: float16\n"
			    "    - path: ${TORCH_ROOT}/test/test_b.py\n"
			    "      unlisted_test_mode: skip\n"
			    "      tests:\n"
			    "        - names: [TestB::test_listed]\n";

struct fixture {
	struct spec_set *set;
	struct spec_resolver *res;
	struct select_report rep;
};

static void setup(struct fixture *f)
{
	f->set = specs_from_text(SPECS);
	cr_assert_eq(testspecs_resolver_create(&f->res, f->set), 0);
	selector_report_init(&f->rep);
}

static void teardown(struct fixture *f)
{
	selector_report_finish(&f->rep);
	testspecs_resolver_destroy(f->res);
	testspecs_set_destroy(f->set);
}

static const struct select_reason edited = { "test-edited", 1.0, (char *)"test function edited" };

#define CAND(id_, added_)                                                                          \
	{                                                                                          \
		.id = (id_), .reasons = &edited, .n_reasons = 1, .added = (added_)                 \
	}

static const struct select_candidate cands[] = {
	CAND("test/test_a.py::TestA::test_one", false),
	CAND("test/test_a.py::TestA::test_skipped", false),
	CAND("test/test_a.py::TestA::test_new", true),   /* unlisted -> xfail: eligible, drift */
	CAND("test/test_a.py::TestA::test_regex", true), /* listed by a regex: no drift */
	CAND("test/test_a.py::TestA::test_kern", false),
	CAND("test/test_b.py::TestB::test_new_b", true), /* unlisted -> skip: dropped, drift */
	CAND("test/test_c.py::TestC::test_x", true),     /* no file entry: dropped, no drift */
	CAND("not a test id ::", false),
};
#define N_CANDS (sizeof cands / sizeof cands[0])

Test(stage3, eligibility_modes_and_cases)
{
	struct fixture f;
	setup(&f);
	cr_assert_eq(selector_stage3_run(&f.rep, f.set, f.res, cands, N_CANDS, NULL), 0, "%s",
		     err_last());
	cr_assert_eq(f.rep.n_tests, N_CANDS);
	cr_assert_eq(f.rep.stages[2].in, N_CANDS);
	cr_assert_eq(f.rep.stages[2].out, 4);
	cr_assert_eq(f.rep.stages[3].in, 4);
	const struct select_test *t = selector_report_find(&f.rep, cands[0].id);
	cr_assert_eq(t->fate, SELECT_ELIGIBLE);
	cr_assert_eq(t->mode, SPEC_MODE_MANDATORY_SUCCESS);
	cr_assert(t->listed);
	cr_assert(t->smoke);
	cr_assert_str_eq(t->spec_entry, "s.yaml:6");
	cr_assert_eq(t->n_reasons, 1);
	cr_assert_str_eq(t->reasons[0].text, "test function edited");
	t = selector_report_find(&f.rep, cands[1].id);
	cr_assert_eq(t->fate, SELECT_IMPACTED);
	cr_assert_eq(t->mode, SPEC_MODE_SKIP);
	t = selector_report_find(&f.rep, cands[2].id);
	cr_assert_eq(t->fate, SELECT_ELIGIBLE);
	cr_assert_eq(t->mode, SPEC_MODE_XFAIL);
	cr_assert(!t->listed);
	cr_assert(!t->smoke);
	t = selector_report_find(&f.rep, cands[3].id);
	cr_assert_eq(t->mode, SPEC_MODE_XFAIL);
	cr_assert(t->listed);
	t = selector_report_find(&f.rep, cands[4].id);
	cr_assert_eq(t->fate, SELECT_ELIGIBLE);
	cr_assert_eq(t->kernel_cases, 2);
	cr_assert_str_eq(t->case_rule, "kernels");
	cr_assert_eq(selector_report_find(&f.rep, cands[5].id)->fate, SELECT_IMPACTED);
	cr_assert_eq(selector_report_find(&f.rep, cands[6].id)->fate, SELECT_IMPACTED);
	t = selector_report_find(&f.rep, cands[7].id);
	cr_assert_eq(t->fate, SELECT_IMPACTED);
	cr_assert_str_eq(t->spec_why, "the id does not parse as a test id");
	teardown(&f);
}

Test(stage3, drift_unlisted_new_tests)
{
	struct fixture f;
	setup(&f);
	cr_assert_eq(selector_stage3_run(&f.rep, f.set, f.res, cands, N_CANDS, NULL), 0);
	cr_assert_eq(f.rep.n_drift, 2);
	cr_assert_eq(f.rep.drift[0].kind, SELECT_DRIFT_UNLISTED);
	cr_assert_str_eq(f.rep.drift[0].test, "test/test_a.py::TestA::test_new");
	cr_assert_eq(f.rep.drift[0].mode, SPEC_MODE_XFAIL);
	cr_assert_str_eq(f.rep.drift[0].where, "s.yaml:3");
	cr_assert_str_eq(f.rep.drift[1].test, "test/test_b.py::TestB::test_new_b");
	cr_assert_eq(f.rep.drift[1].mode, SPEC_MODE_SKIP);
	teardown(&f);
}

Test(stage3, drift_stale_entries)
{
	static const char *const catalog[] = {
		"test/test_a.py::TestA::test_one",    "test/test_a.py::TestA::test_skipped",
		"test/test_a.py::TestA::test_kern",   "test/test_a.py::TestA::test_regex",
		"test/test_b.py::TestB::test_listed",
	};
	struct select_stage3_opts o = { .catalog_ids = catalog, .n_catalog = 5 };
	struct fixture f;
	setup(&f);
	cr_assert_eq(selector_stage3_run(&f.rep, f.set, f.res, cands, 1, &o), 0, "%s", err_last());
	cr_assert_eq(f.rep.n_drift, 2);
	cr_assert_eq(f.rep.drift[0].kind, SELECT_DRIFT_STALE);
	cr_assert_str_eq(f.rep.drift[0].test, "TestA::test_gone");
	cr_assert_str_eq(f.rep.drift[0].where, "s.yaml:10");
	cr_assert_str_eq(f.rep.drift[1].test, "TestA::test_also_gone");
	teardown(&f);
}

/* The drift memo answers from what earlier runs resolved, a file's ids at a time: the same
 * stale entries, the ids resolved once; a file whose ids changed (a test gone) is resolved
 * again and answered right; a memo bound to other specs is not used. */
Test(stage3, drift_memo_resolves_each_id_once)
{
	static const char *const catalog[] = {
		"test/test_b.py::TestB::test_listed",
		"test/test_a.py::TestA::test_one",
		"test/test_a.py::TestA::test_skipped",
		"test/test_a.py::TestA::test_kern",
		"test/test_a.py::TestA::test_regex",
		"test/test_a.py::TestA::test_gone",
		"not an id",
	};
	struct fixture f;
	setup(&f);
	struct select_drift_memo *m;
	cr_assert_eq(selector_drift_memo_create(&m, f.set, f.res), 0);
	struct select_stage3_opts o = { .catalog_ids = catalog, .n_catalog = 7, .drift_memo = m };
	size_t resolved, hits;
	static const size_t want_resolved[3] = { 7, 7, 11 }, want_hits[3] = { 0, 7, 8 };
	for (int run = 0; run < 3; run++) {
		/* Runs 0 and 1 see test_gone, run 2 does not (it was removed upstream). */
		o.n_catalog = run < 2 ? 7 : 5;
		struct select_report rep;
		selector_report_init(&rep);
		cr_assert_eq(selector_stage3_run(&rep, f.set, f.res, cands, 1, &o), 0, "%s",
			     err_last());
		size_t stale = 0;
		bool gone_stale = false;
		for (size_t i = 0; i < rep.n_drift; i++) {
			if (rep.drift[i].kind != SELECT_DRIFT_STALE)
				continue;
			stale++;
			gone_stale |= strcmp(rep.drift[i].test, "TestA::test_gone") == 0;
		}
		cr_assert_eq(stale, run < 2 ? 1 : 2, "run %d: %zu stale", run, stale);
		cr_assert_eq(gone_stale, run == 2, "run %d", run);
		selector_report_finish(&rep);
		selector_drift_memo_counts(m, &resolved, &hits);
		cr_assert_eq(resolved, want_resolved[run], "run %d: %zu ids resolved", run,
			     resolved);
		cr_assert_eq(hits, want_hits[run], "run %d: %zu hits", run, hits);
	}
	selector_drift_memo_destroy(m);

	/* Bound to another resolver: ignored, never consulted. */
	cr_assert_eq(selector_drift_memo_create(&m, f.set, (const struct spec_resolver *)&o), 0);
	o.drift_memo = m;
	o.n_catalog = 7;
	struct select_report rep;
	selector_report_init(&rep);
	cr_assert_eq(selector_stage3_run(&rep, f.set, f.res, cands, 1, &o), 0);
	selector_drift_memo_counts(m, &resolved, &hits);
	cr_assert_eq(resolved + hits, 0);
	selector_report_finish(&rep);
	selector_drift_memo_destroy(m);
	teardown(&f);
}

Test(stage3, tier_drops_labelled_entries)
{
	struct select_stage3_opts o = { .tier = "regression" };
	struct fixture f;
	setup(&f);
	cr_assert_eq(selector_stage3_run(&f.rep, f.set, f.res, cands, 1, &o), 0);
	cr_assert_eq(f.rep.tests[0].fate, SELECT_IMPACTED, "%s", f.rep.tests[0].spec_why);
	cr_assert_eq(f.rep.stages[2].out, 0);
	teardown(&f);
}

/* Variant entries (torch-spyre's rule: a collectable test's name plus `_`) are live, and one
 * listed with a run mode makes its test eligible under unlisted skip; a name that only starts
 * like a test, without the `_`, is still stale. */
Test(stage3, variant_entries_live_and_run)
{
	static const char specs[] =
	    "test_suite_config:\n"
	    "  files:\n"
	    "    - path: ${TORCH_ROOT}/test/test_r.py\n"
	    "      unlisted_test_mode: skip\n"
	    "      tests:\n"
	    "        - names: [TestR::test_dim_default_mean, TestR::test_dead]\n"
	    "        - names: [TestR::test_fns_fn_name_amax, TestR::test_fnsx]\n"
	    "          mode: skip\n";
	static const char *const catalog[] = { "test/test_r.py::TestR::test_dim",
					       "test/test_r.py::TestR::test_dim_default",
					       "test/test_r.py::TestR::test_fns" };
	struct select_candidate c[] = { CAND("test/test_r.py::TestR::test_dim_default", false),
					CAND("test/test_r.py::TestR::test_fns", false),
					CAND("test/test_r.py::TestR::test_dim", false) };
	struct fixture f;
	f.set = specs_from_text(specs);
	cr_assert_eq(testspecs_resolver_create(&f.res, f.set), 0);
	selector_report_init(&f.rep);
	struct select_stage3_opts o = { .catalog_ids = catalog, .n_catalog = 3 };
	cr_assert_eq(selector_stage3_run(&f.rep, f.set, f.res, c, 3, &o), 0, "%s", err_last());
	cr_expect_eq(f.rep.tests[0].fate, SELECT_ELIGIBLE, "%s", f.rep.tests[0].spec_why);
	cr_expect_eq(f.rep.tests[0].mode, SPEC_MODE_MANDATORY_SUCCESS);
	cr_expect_neq(f.rep.tests[1].fate, SELECT_ELIGIBLE, "its only variant entry is skip");
	cr_expect_neq(f.rep.tests[2].fate, SELECT_ELIGIBLE,
		      "test_dim_default_mean belongs to test_dim_default, a test of the catalog");
	cr_assert_eq(f.rep.n_drift, 2);
	cr_expect_str_eq(f.rep.drift[0].test, "TestR::test_dead");
	cr_expect_str_eq(f.rep.drift[1].test, "TestR::test_fnsx");
	teardown(&f);
}
