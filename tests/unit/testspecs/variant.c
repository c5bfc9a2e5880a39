/* Spec entries at variant granularity and per-config global sections, on configs shaped like
 * torch-spyre's real ones (tests/fixtures/specs/variants/): a variant listed with a run mode
 * makes its test run although the file's unlisted mode is skip; a variant belongs to the
 * longest collectable test its name starts with; a config's global decides only its files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testspecs/cases.h"
#include "testspecs/lint_upstream.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define DIR SPYRE_TEST_FIXTURES "/specs/variants"
#define R   "test/test_reductions.py::TestReductions::"
#define RG  "test/test_reductions.py::TestReductionsPRIVATEUSE1::"
#define BG  "test/test_binary_ufuncs.py::TestBinaryUfuncsPRIVATEUSE1::"

static struct spec_set *set;
static struct spec_resolver *resolver;

static void setup(void)
{
	struct spec_roots roots = { "/torch", NULL };
	struct spec_load_opts lo = { .roots = &roots };
	cr_assert_eq(testspecs_set_create(&set), 0);
	cr_assert_eq(testspecs_load_file(set, DIR "/reductions.yaml", &lo), 0);
	cr_assert_eq(testspecs_load_file(set, DIR "/binary.yaml", &lo), 0);
	cr_assert_eq(testspecs_resolver_create(&resolver, set), 0);
}

static void teardown(void)
{
	testspecs_resolver_destroy(resolver);
	testspecs_set_destroy(set);
}

/* The collectable tests of the mirrored reductions file. */
static int is_test(void *ctx, const char *id)
{
	(void)ctx;
	static const char *const tests[] = { R "test_dim_default", R "test_dim_default_keepdim",
					     R "test_dim_reduction", R "test_dim_reduction_fns",
					     R "test_dim_reduction_lastdim" };
	for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
		if (strcmp(id, tests[i]) == 0)
			return 1;
	return 0;
}

static struct spec_decision *decide(const char *id, bool with_tests)
{
	static struct spec_decision d;
	struct spec_resolve_opts o = { .is_test = with_tests ? is_test : NULL };
	cr_assert_eq(testspecs_resolver_resolve(resolver, id, &o, &d), 0, "%s", id);
	return &d;
}

TestSuite(variant, .init = setup, .fini = teardown);

Test(variant, listed_variant_with_run_mode_runs_its_test)
{
	struct spec_decision *d = decide(R "test_dim_default", true);
	cr_expect(d->eligible, "%s", d->reason);
	cr_expect_eq(d->mode, SPEC_MODE_MANDATORY_SUCCESS);
	cr_expect_str_eq(d->variant, "test_dim_default_mean");
	cr_expect_str_eq(d->variant_suffix, "mean");
	cr_expect_eq(d->n_variants, 1, "test_dim_default_keepdim_mean is the keepdim test's");
	cr_expect_eq(d->n_variants_eligible, 1);
	cr_expect(strstr(d->reason, "variant test_dim_default_mean") != NULL, "%s", d->reason);
	d = decide(R "test_dim_default", false);
	cr_expect_eq(d->n_variants, 2, "without the test list: every `<test>_` name");
}

Test(variant, skipped_variants_leave_the_test_out)
{
	struct spec_decision *d = decide(R "test_dim_default_keepdim", true);
	cr_expect_not(d->eligible);
	cr_expect_eq(d->n_variants, 1);
	cr_expect_eq(d->n_variants_eligible, 0);
}

Test(variant, parametrize_variant_decides_with_its_mode)
{
	struct spec_decision *d = decide(R "test_dim_reduction_fns", true);
	cr_expect(d->eligible, "%s", d->reason);
	cr_expect_eq(d->mode, SPEC_MODE_XFAIL);
	cr_expect_eq(d->n_variants, 2);
	cr_expect_str_eq(d->variant_suffix, "fn_name_sum");
}

Test(variant, a_longer_test_owns_its_names)
{
	struct spec_decision *d = decide(R "test_dim_reduction", true);
	cr_expect_not(d->eligible, "lastdim and fns_* are other tests' names: %s", d->reason);
	cr_expect_eq(d->n_variants, 0);
	d = decide(R "test_dim_reduction_lastdim", true);
	cr_expect(d->eligible);
	cr_expect_null(d->variant, "its own entry decides");
}

Test(variant, instantiated_variant_ids_resolve_as_before)
{
	struct spec_decision *d = decide(RG "test_dim_default_mean_spyre_float16", true);
	cr_expect(d->eligible, "%s", d->reason);
	cr_expect_eq(d->mode, SPEC_MODE_MANDATORY_SUCCESS);
	d = decide(RG "test_dim_default_sum_spyre_float16", true);
	cr_expect_not(d->eligible, "unlisted, skip; an instantiated id has no finer variants");
	cr_expect_eq(d->n_variants, 0);
}

Test(variant, a_configs_global_decides_only_its_files)
{
	struct spec_decision *d = decide(BG "test_scalar_support_add_spyre_float16", false);
	cr_expect(d->eligible, "%s", d->reason);
	cr_expect_eq(d->mode, SPEC_MODE_XFAIL);
	d = decide(BG "test_scalar_support_add_spyre_float32", false);
	cr_expect_not(d->eligible, "float32 is only in the reductions config's global");
	d = decide(RG "test_dim_default_mean_spyre_float32", false);
	cr_expect(d->eligible, "the reductions config allows float32: %s", d->reason);
}

static void count_name(void *ctx, const struct spec_str *name)
{
	(void)name;
	(*(int *)ctx)++;
}

Test(variant, variant_names_for_drift)
{
	int n = 0;
	cr_expect_eq(testspecs_resolver_variant_names(resolver, R "test_dim_reduction", NULL,
						      count_name, &n),
		     3);
	cr_expect_eq(n, 3, "lastdim, fns_fn_name_amax, fns_fn_name_sum: live by the prefix rule");
	n = 0;
	cr_expect_eq(
	    testspecs_resolver_variant_names(resolver, R "test_dim_default", NULL, count_name, &n),
	    2);
	cr_expect_eq(
	    testspecs_resolver_variant_names(resolver, R "test_mean", NULL, count_name, &n), 0);
}

Test(variant, cases_of_a_variant_run_its_op_only)
{
	struct spec_case_list list;
	struct spec_expand_result res;
	testspecs_cases_init(&list);
	struct spec_case_test ct = { .test_id = R "test_dim_default", .opinfo = true };
	cr_assert_eq(testspecs_cases_expand(&list, resolver, set, &ct, &res), 0);
	cr_expect(res.eligible, "%s", res.reason);
	cr_expect_gt(res.n_cases, 0, "rule %s: %s", testspecs_rule_name(res.rule),
		     res.why ? res.why : "");
	for (size_t i = 0; i < list.n; i++)
		cr_expect_str_eq(list.v[i].op, "mean");
	testspecs_cases_finish(&list);
}

/* An @ops test whose config lists no supported ops runs the ops its entry includes. */
Test(variant, included_op_of_an_ops_test_has_cases)
{
	struct spec_case_list list;
	struct spec_expand_result res;
	testspecs_cases_init(&list);
	struct spec_case_test ct = {
		.test_id = "test/test_binary_ufuncs.py::TestBinaryUfuncs::test_scalar_support",
		.opinfo = true,
		.family = testspecs_family_for_path("test/test_binary_ufuncs.py"),
	};
	cr_assert_eq(testspecs_cases_expand(&list, resolver, set, &ct, &res), 0);
	cr_expect(res.eligible, "%s", res.reason);
	cr_expect_eq(res.rule, SPEC_RULE_OPINFO);
	cr_expect_gt(res.n_cases, 0, "%s", res.why ? res.why : "");
	for (size_t i = 0; i < list.n; i++) {
		cr_expect_str_eq(list.v[i].op, "add");
		cr_expect_eq(list.v[i].dtype, SPEC_DTYPE_FLOAT16,
			     "the binary config's global only");
	}
	testspecs_cases_finish(&list);
}

/* A test whose calls the emulator lacks says which, leaving out the input factories. */
Test(variant, calls_the_emulator_lacks_are_named)
{
	static const char *const calls[] = { "torch.argmax", "torch.argmin", "torch.randn",
					     ".contiguous" };
	struct spec_case_list list;
	struct spec_expand_result res;
	testspecs_cases_init(&list);
	struct spec_case_test ct = { .test_id = R "test_dim_reduction_lastdim",
				     .body_ops = calls,
				     .n_body_ops = 4 };
	cr_assert_eq(testspecs_cases_expand(&list, resolver, set, &ct, &res), 0);
	cr_expect(res.eligible);
	cr_expect_eq(res.n_cases, 0);
	cr_assert_not_null(res.why);
	cr_expect(strstr(res.why, "argmax (the emulator lacks it)") != NULL, "%s", res.why);
	cr_expect(strstr(res.why, "argmin") != NULL, "%s", res.why);
	cr_expect(strstr(res.why, "randn") == NULL, "%s", res.why);
	testspecs_cases_finish(&list);
}

/* torch-spyre's three checks on the mirrored configs, each config on its own: variant names
 * live, a name of no test dead, a test decided by both configs, and tests no config names. */
Test(variant, lint_upstream_three_checks)
{
	static const char *const ids[] = {
		R "test_dim_default",
		R "test_dim_default_keepdim",
		R "test_dim_reduction",
		R "test_dim_reduction_fns",
		R "test_dim_reduction_lastdim",
		R "test_sum_out",
		"test/test_binary_ufuncs.py::TestBinaryUfuncs::test_scalar_support",
		"test/test_binary_ufuncs.py::TestBinaryUfuncs::test___add___not_implemented",
		"test/test_binary_ufuncs.py::TestBinaryUfuncs::test_div",
	};
	struct spec_roots roots = { "/torch", NULL };
	struct spec_load_opts lo = { .roots = &roots };
	struct spec_set *cfg[3];
	const char *files[3] = { DIR "/reductions.yaml", DIR "/binary.yaml", DIR "/dup.yaml" };
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(testspecs_set_create(&cfg[i]), 0);
		cr_assert_eq(testspecs_load_file(cfg[i], files[i], &lo), 0, "%s", files[i]);
	}
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_upstream_counts n;
	cr_assert_eq(testspecs_lint_upstream(cfg, 3, ids, 9, &diags, &n), 0);
	cr_expect_eq(n.tests, 9);
	cr_expect_eq(n.names, 10);
	cr_expect_eq(n.dead, 1, "dup.yaml's test_gone");
	cr_expect_eq(n.live, 9);
	cr_expect_eq(n.duplicates, 1, "test_dim_reduction_lastdim in reductions.yaml and dup.yaml");
	cr_expect_eq(n.uncovered, 2, "test_sum_out and test_div");
	char line[1024];
	bool saw_dead = false, saw_dup = false;
	for (size_t i = 0; i < diags.n; i++) {
		testspecs_diag_format(&diags.v[i], line, sizeof line);
		saw_dead |=
		    strstr(line, "dup.yaml:9:15: warning: dead: 'TestReductions::test_gone'") !=
		    NULL;
		saw_dup |= strstr(line, "dup.yaml:8:15: warning: '" R "test_dim_reduction_lastdim' "
					"is also decided by") != NULL;
	}
	cr_expect(saw_dead);
	cr_expect(saw_dup);
	testspecs_diags_finish(&diags);
	for (size_t i = 0; i < 3; i++)
		testspecs_set_destroy(cfg[i]);
}
