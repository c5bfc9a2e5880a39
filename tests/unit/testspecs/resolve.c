/* Golden decisions of the resolver, each written from the semantics (testspecs/resolve.h and
 * docs/specs.md) before running the code, with the reason beside it. Fixtures:
 * tests/fixtures/specs/golden/{a,b}.yaml (merged) and the real torch-spyre configs in
 * tests/fixtures/specs/real/. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define GOLDEN SPYRE_TEST_FIXTURES "/specs/golden"
#define REAL   SPYRE_TEST_FIXTURES "/specs/real"

#define MS   SPEC_MODE_MANDATORY_SUCCESS
#define XF   SPEC_MODE_XFAIL
#define XFS  SPEC_MODE_XFAIL_STRICT
#define SK   SPEC_MODE_SKIP
#define D(x) ((spec_dtype_mask)1 << SPEC_DTYPE_##x)
#define ANY  ((spec_dtype_mask)0xffffffffu) /* do not check dtypes */

#define B "test/test_binary_ufuncs.py::"
#define L "test/test_labels.py::"

struct golden {
	const char *id;
	const char *tier;
	bool eligible;
	enum spec_mode mode; /* checked when eligible, or when not UNSET */
	spec_dtype_mask dtypes;
	const char *why;
};

static const spec_dtype_mask GLOBAL = D(FLOAT16) | D(INT64) | D(FLOAT32);

static const struct golden golden[] = {
	/* Class::method, plain */
	{ B "TestBinaryUfuncs::test_add", NULL, true, MS, GLOBAL,
	  "listed with mode mandatory_success; dtypes: the union of the supported ops' rows, "
	  "global {f16,i64,f32} (mm's {f16} adds nothing)" },
	{ B "TestBinaryUfuncs::test_div_rounding", NULL, true, XFS, GLOBAL, "listed xfail_strict" },
	{ B "TestBinaryUfuncs::test_pow", NULL, true, MS, GLOBAL,
	  "listed without mode: the default of a listed test is mandatory_success (torch-spyre "
	  "TestEntry.mode), not the file's unlisted mode" },
	{ B "TestBinaryUfuncs::test_skipped", NULL, false, SK, ANY, "listed with mode skip" },
	/* method-only names and regexes */
	{ B "TestBinaryUfuncs::test_contig_vs_transposed", NULL, true, MS, GLOBAL,
	  "method-only regex test_contig_.* matches the whole method" },
	{ B "TestOtherClass::test_contig_abc", NULL, true, MS, GLOBAL,
	  "a method-only name matches in any class of the file" },
	{ B "TestBinaryUfuncs::test_contig", NULL, false, SK, ANY,
	  "test_contig_.* needs the '_' after test_contig: unlisted, the file says skip" },
	{ B "TestBinaryUfuncs::test_mul_foo", NULL, true, XF, GLOBAL,
	  "Class::regex entry test_(mul|sub)_.* is xfail" },
	{ B "TestBinaryUfuncs::test_sub_bar", NULL, true, XF, GLOBAL, "the other alternative" },
	{ B "TestOtherClass::test_mul_foo", NULL, false, SK, ANY,
	  "the class part TestBinaryUfuncs is plain: another class is unlisted, skip" },
	{ B "TestBinaryUfuncs::test_first", NULL, true, XF, GLOBAL,
	  "two entries match; the first in document order (xfail) decides over the later regex" },
	{ B "TestBinaryUfuncs::test_firstly", NULL, true, MS, GLOBAL,
	  "only the regex TestBinary.*::test_fir.* matches" },
	{ B "TestBinaryUfuncs::test_unlisted", NULL, false, SK, ANY, "unlisted: skip" },
	/* the four unlisted modes, and the default */
	{ "test/test_reductions.py::TestReductions::test_sum", NULL, true, MS, GLOBAL,
	  "unlisted_test_mode mandatory_success" },
	{ "test/test_strict.py::T::test_x", NULL, true, XFS, GLOBAL,
	  "unlisted_test_mode xfail_strict" },
	{ "test/test_xf.py::T::test_x", NULL, true, XF, GLOBAL, "unlisted_test_mode xfail" },
	{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_other", NULL, true, XF, GLOBAL,
	  "no unlisted_test_mode: torch-spyre's default is xfail" },
	{ "test/test_unary_ufuncs.py::TestUnaryUfuncs::test_abs", NULL, true, MS, GLOBAL,
	  "plain method-only name test_abs" },
	/* files */
	{ "test/test_not_listed.py::T::test_add", NULL, false, SPEC_MODE_UNSET, ANY,
	  "a test in no listed file is not eligible" },
	{ "TestBinaryUfuncs::test_add", NULL, true, MS, GLOBAL,
	  "no path: looked up in every file; an entry lists it" },
	{ "TestNothing::test_nothing", NULL, false, SPEC_MODE_UNSET, ANY,
	  "no path and no entry lists it" },
	/* device-generic names: PRIVATEUSE1 class, _spyre_<dtype> method */
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_add_spyre_float16", NULL, true, MS, GLOBAL,
	  "base class TestBinaryUfuncs, base method test_add; float16 is supported" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_add_spyre_float32", NULL, true, XF, GLOBAL,
	  "float32 has force_xfail in global.supported_dtypes: mandatory_success -> xfail" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_add_spyre_bfloat16", NULL, false, SPEC_MODE_UNSET,
	  ANY, "bfloat16 is not a supported dtype and this entry does not include it" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_div_rounding_spyre_float32", NULL, true, XFS, GLOBAL,
	  "force_xfail only turns mandatory_success into xfail: xfail_strict stays" },
	/* ops-parametrised: test_scalar_support_<op>_spyre_<dtype> */
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_add_spyre_float16", NULL, true, MS,
	  D(FLOAT16) | D(FLOAT32) | D(BFLOAT16),
	  "op add; dtypes = global {f16,i64,f32} + include bf16 - exclude i64" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_mul_spyre_float16", NULL, true, XF,
	  D(FLOAT16) | D(FLOAT32) | D(BFLOAT16), "op mul has force_xfail: xfail" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_sub_spyre_float16", NULL, false,
	  SPEC_MODE_UNSET, ANY, "edits.ops.exclude sub" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_sub_inplace_spyre_float16", NULL,
	  false, SPEC_MODE_UNSET, ANY,
	  "exclude sub also removes the op sub_inplace (prefix sub_)" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_add_spyre_int64", NULL, false,
	  SPEC_MODE_UNSET, ANY, "edits.dtypes.exclude int64" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_add_spyre_bfloat16", NULL, true, MS,
	  D(FLOAT16) | D(FLOAT32) | D(BFLOAT16),
	  "edits.dtypes.include bfloat16, not a global dtype so no force_xfail" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_mm_spyre_float32", NULL, false,
	  SPEC_MODE_UNSET, ANY, "mm's dtypes are {f16}: global ∩ {f16} + bf16 leaves no float32" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_mm_spyre_float16", NULL, true, MS,
	  D(FLOAT16) | D(BFLOAT16), "mm: (global ∩ {f16}) + bf16 - i64" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_gcd_spyre_float16", NULL, false,
	  SPEC_MODE_UNSET, ANY,
	  "gcd is only in b.yaml's supported_ops: a config's global decides only its own files "
	  "(torch-spyre runs one config at a time)" },
	{ B "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_foo_spyre_float16", NULL, false,
	  SPEC_MODE_UNSET, ANY, "op foo is not a supported op" },
	{ "test/test_reductions.py::TestReductionsPRIVATEUSE1::test_sum_mul_spyre_float16", NULL,
	  true, XF, GLOBAL,
	  "unlisted mandatory_success; the name ends in supported op mul, which has force_xfail" },
	{ "test/test_reductions.py::TestReductionsPRIVATEUSE1::test_sum_spyre_float32", NULL, true,
	  XF, GLOBAL, "unlisted mandatory_success; float32 force_xfail" },
	{ "test/test_strict.py::TPRIVATEUSE1::test_x_spyre_float32", NULL, true, XFS, GLOBAL,
	  "unlisted xfail_strict is not touched by force_xfail" },
	/* labels and tiers */
	{ L "T::test_smoke_only", "smoke", true, MS, GLOBAL, "entry labels [smoke], tier smoke" },
	{ L "T::test_smoke_only", "trunk", false, SPEC_MODE_UNSET, ANY,
	  "the only entry is for smoke: not eligible in trunk (not the unlisted mode)" },
	{ L "T::test_smoke_only", NULL, true, MS, GLOBAL,
	  "no tier requested: every entry applies" },
	{ L "T::test_trunk", "regression", true, XF, GLOBAL, "labels [trunk, regression]" },
	{ L "T::test_both", "trunk", true, MS, GLOBAL,
	  "the first entry (smoke, xfail) does not apply in trunk; the regex entry does" },
	{ L "T::test_both", "smoke", true, XF, GLOBAL, "in smoke the first entry applies" },
	{ L "T::test_none", "smoke", false, SK, ANY, "unlisted in this file: skip" },
	/* merged files */
	{ B "TestBinaryUfuncs::test_from_b", NULL, true, XF, SPEC_DTYPE_MASK_ALL,
	  "b.yaml's entry for the same path is merged into the file; b.yaml's global has no "
	  "supported_dtypes, and a.yaml's do not reach b.yaml's entries: every dtype" },
	{ "test/test_trunk_only.py::T::test_x", NULL, true, MS, SPEC_DTYPE_MASK_ALL,
	  "b.yaml's file, unlisted mandatory_success, under b.yaml's global (no dtypes)" },
	{ "test/test_trunk_only.py::T::test_x", "smoke", false, SPEC_MODE_UNSET, ANY,
	  "b.yaml's document is labelled [trunk]: its file does not apply in smoke" },
	{ "test/test_trunk_only.py::T::test_x", "trunk", true, MS, SPEC_DTYPE_MASK_ALL,
	  "and applies in trunk" },
};

static struct spec_set *load(const char *dir)
{
	struct spec_set *set;
	cr_assert_eq(testspecs_set_create(&set), 0);
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_load_opts o = { .diags = &diags };
	int rc = testspecs_load_dir(set, dir, &o);
	char line[512] = "";
	if (diags.n)
		testspecs_diag_format(&diags.v[0], line, sizeof line);
	cr_assert_eq(rc, 0, "load %s: %s %s", dir, err_last(), line);
	testspecs_diags_finish(&diags);
	return set;
}

static void check(const struct spec_resolver *r, const struct golden *g,
		  const struct spec_resolve_opts *base)
{
	struct spec_resolve_opts o = base ? *base : (struct spec_resolve_opts){ 0 };
	o.tier = g->tier;
	struct spec_decision *d = malloc(sizeof *d);
	cr_assert_not_null(d);
	cr_assert_eq(testspecs_resolver_resolve(r, g->id, &o, d), 0, "%s: %s", g->id, err_last());
	cr_assert_eq(d->eligible, g->eligible, "%s [%s]: eligible %d, want %d (%s) -- %s", g->id,
		     g->tier ? g->tier : "-", d->eligible, g->eligible, d->reason, g->why);
	if (g->mode != SPEC_MODE_UNSET)
		cr_assert_eq(d->mode, g->mode, "%s: mode %d, want %d (%s) -- %s", g->id, d->mode,
			     g->mode, d->reason, g->why);
	if (g->eligible && g->dtypes != ANY)
		cr_assert_eq(d->dtypes, g->dtypes, "%s: dtypes %#x, want %#x (%s) -- %s", g->id,
			     d->dtypes, g->dtypes, d->reason, g->why);
	free(d);
}

Test(resolve, golden_decisions)
{
	struct spec_set *set = load(GOLDEN);
	struct spec_resolver *r;
	cr_assert_eq(testspecs_resolver_create(&r, set), 0, "%s", err_last());
	size_t n = sizeof golden / sizeof golden[0];
	cr_assert_geq(n, 40);
	for (size_t i = 0; i < n; i++)
		check(r, &golden[i], NULL);
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
}

Test(resolve, test_own_dtypes_and_ops)
{
	struct spec_set *set = load(GOLDEN);
	struct spec_resolver *r;
	cr_assert_eq(testspecs_resolver_create(&r, set), 0, "%s", err_last());
	const char *ops[] = { "add" };
	struct spec_resolve_opts o = { .dtypes = D(FLOAT16) | D(FLOAT64), .ops = ops, .n_ops = 1 };
	/* global {f16,i64,f32} ∩ the test's own {f16,f64} = {f16} */
	struct golden g1 = { B "TestBinaryUfuncs::test_pow", NULL, true, MS, D(FLOAT16), "own" };
	check(r, &g1, &o);
	/* {f64} alone leaves nothing: no variant, not eligible */
	o.dtypes = D(FLOAT64);
	struct golden g2 = {
		B "TestBinaryUfuncs::test_pow", NULL, false, SPEC_MODE_UNSET, ANY, "empty"
	};
	check(r, &g2, &o);
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
}

Test(resolve, entries_and_precision)
{
	struct spec_set *set = load(GOLDEN);
	struct spec_decision *d = malloc(sizeof *d);
	cr_assert_not_null(d);
	cr_assert_eq(testspecs_resolve(set,
				       B
				       "TestBinaryUfuncsPRIVATEUSE1::test_scalar_support_mm_spyre_"
				       "float16",
				       NULL, d),
		     0);
	cr_assert(d->listed);
	cr_assert_eq(d->n_ops, 1);
	cr_assert_str_eq(d->ops[0].name, "mm");
	/* (mm, f16): the op's precision 0.1; (mm, bf16): the include's 0.01/0.02 */
	cr_assert_float_eq(d->ops[0].precision[SPEC_DTYPE_FLOAT16].atol, 0.1, 1e-12);
	cr_assert_float_eq(d->ops[0].precision[SPEC_DTYPE_BFLOAT16].rtol, 0.02, 1e-12);
	cr_assert_geq(d->n_entries, 2);
	cr_assert_eq(d->entries[0].role, SPEC_ROLE_FILE);
	cr_assert_eq(d->entries[1].role, SPEC_ROLE_ENTRY);
	cr_assert_str_eq(d->entries[1].what, "TestBinaryUfuncs::test_scalar_support");
	cr_assert(strstr(d->entries[1].loc.file, "a.yaml"), "%s", d->entries[1].loc.file);
	cr_assert_eq(d->entries[1].loc.line, 16);
	/* the first-match rule lists the later entry as shadowed */
	cr_assert_eq(testspecs_resolve(set, B "TestBinaryUfuncs::test_first", NULL, d), 0);
	int shadowed = 0;
	for (size_t i = 0; i < d->n_entries; i++)
		shadowed += d->entries[i].role == SPEC_ROLE_SHADOWED;
	cr_assert_eq(shadowed, 1);
	free(d);
	testspecs_set_destroy(set);
}

Test(resolve, real_configs)
{
	struct spec_set *set = load(REAL);
	struct spec_resolver *r;
	cr_assert_eq(testspecs_resolver_create(&r, set), 0, "%s", err_last());
	const char *lx = "${TORCH_DEVICE_ROOT}/tests/inductor/test_inductor_ops_lx_planning.py::";
	const char *bb = "${TORCH_DEVICE_ROOT}/tests/inductor/test_building_blocks.py::";
	char id[3][512];
	snprintf(id[0], sizeof id[0],
		 "%sLxPlanningTwoOpPointwiseAdditionTest::"
		 "test_mm_mm_55x2_2x99_lx_planning_pointwise",
		 lx);
	snprintf(id[1], sizeof id[1],
		 "%sLxPlanningTwoOpReductionTest::"
		 "test_mm_mm_55x2_2x99_lx_planning_reduction",
		 lx);
	snprintf(id[2], sizeof id[2],
		 "%sLxPlanningTwoOpReductionTest::test_softmax_lx_planning_"
		 "reduction",
		 lx);
	char bbid[512];
	snprintf(bbid, sizeof bbid, "%sTestBuildingBlocks::test_anything", bb);
	const struct golden real[] = {
		{ "test/test_torch.py::TestTorch::test_RNGState", NULL, true, MS, ANY,
		  "listed in test_torch.yaml without mode" },
		{ "test/test_torch.py::TestTorch::test_no_such_test_here", NULL, false, SK, ANY,
		  "test_torch.yaml: unlisted_test_mode skip" },
		{ id[0], NULL, true, XF, ANY,
		  "in the LX xfail list (pointwise only); the broad mandatory regex comes later" },
		{ id[1], NULL, true, MS, ANY,
		  "mm_mm is xfail only for pointwise: the reduction wrap falls to the mandatory "
		  "regex" },
		{ id[2], NULL, false, SK, ANY,
		  "softmax is not in the matmul shard: unlisted skip" },
		{ bbid, NULL, true, MS, ANY, "building blocks: unlisted mandatory_success" },
		{ bbid, "smoke", false, SPEC_MODE_UNSET, ANY,
		  "building blocks' document is labelled [unit, regression, trunk]" },
	};
	for (size_t i = 0; i < sizeof real / sizeof real[0]; i++)
		check(r, &real[i], NULL);
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
}

Test(resolve, bad_regex_fails_resolver_creation_with_location)
{
	struct spec_set *set;
	cr_assert_eq(testspecs_set_create(&set), 0);
	const char *text = "test_suite_config:\n"
			   "  files:\n"
			   "    - path: ${TORCH_ROOT}/test/x.py\n"
			   "      tests:\n"
			   "        - names: [\"T::test_(add\"]\n";
	int rc = testspecs_load_text(set, "bad.yaml", text, strlen(text), NULL);
	if (rc == 0) {
		struct spec_resolver *r = NULL;
		cr_assert_eq(testspecs_resolver_create(&r, set), ERR_INVAL);
		cr_assert_null(r);
		cr_assert(strstr(err_last(), "bad.yaml:5:"), "%s", err_last());
		cr_assert(strstr(err_last(), "missing closing parenthesis"), "%s", err_last());
	}
	testspecs_set_destroy(set);
}

/* Two findings of the CLI tests: an overload's '.' is '_' in test names, and '**' in a file
 * path spans any number of directories, none included. */
static const char dotted_yaml[] =
    "test_suite_config:\n"
    "  files:\n"
    "    - path: test/**/test_*.py\n"
    "      unlisted_test_mode: skip\n"
    "      tests:\n"
    "        - names: [TestBinaryUfuncs::test_reference_numerics]\n"
    "          edits:\n"
    "            ops: {exclude: [{name: sub}]}\n"
    "  global:\n"
    "    supported_dtypes: [{name: float16}]\n"
    "    supported_ops: [{name: div.no_rounding_mode}, {name: sub.Tensor}, {name: mul}]\n";

Test(resolve, dotted_ops_and_double_star_globs)
{
	struct spec_set *set;
	cr_assert_eq(testspecs_set_create(&set), 0);
	struct spec_load_opts lo = { 0 };
	cr_assert_eq(
	    testspecs_load_text(set, "dotted.yaml", dotted_yaml, sizeof dotted_yaml - 1, &lo), 0,
	    "%s", err_last());
	struct spec_decision *d = malloc(sizeof *d);
	cr_assert_not_null(d);
	static const char *const pre[] = { "test/test_binary_ufuncs.py", "test/a/test_x.py",
					   "test/a/b/test_x.py" };
	for (size_t i = 0; i < 3; i++) {
		char id[256];
		snprintf(id, sizeof id,
			 "%s::TestBinaryUfuncsPRIVATEUSE1::test_reference_numerics_div_no_rounding_"
			 "mode_spyre_float16",
			 pre[i]);
		cr_assert_eq(testspecs_resolve(set, id, NULL, d), 0);
		cr_expect(d->eligible, "%s: %s", id, d->reason);
		cr_expect_eq(d->mode, SPEC_MODE_MANDATORY_SUCCESS, "%s", id);
	}
	/* excluding `sub` removes the overload `sub.Tensor` (name or prefix `sub_`) */
	cr_assert_eq(testspecs_resolve(set,
				       "test/test_binary_ufuncs.py::TestBinaryUfuncsPRIVATEUSE1::"
				       "test_reference_numerics_sub_Tensor_spyre_float16",
				       NULL, d),
		     0);
	cr_expect(!d->eligible, "%s", d->reason);
	/* a file no glob covers */
	cr_assert_eq(testspecs_resolve(set, "bench/test_x.py::T::test_a", NULL, d), 0);
	cr_expect(!d->eligible);
	free(d);
	testspecs_set_destroy(set);
}
