/* Kernel-case expansion (testspecs/src/cases.c): the precedence of the rules, the dtype
 * formula and precision, unsupported cases counted and kept, and deterministic ids and seeds.
 * The spec sets are built by hand so that these tests need no loader. */
#include <criterion/criterion.h>
#include <string.h>

#include "spyre-emu/ops.h"
#include "testspecs/cases.h"

/* ---- a small hand-built set ---- */

static struct spec_str str(const char *s)
{
	return (struct spec_str){ .s = s, .len = strlen(s), .loc = { "t.yaml", 1, 1 } };
}

static struct spec_dtype_item f16 = { .dtype = SPEC_DTYPE_FLOAT16,
				      .precision = { true, true, true, 0.1, 0.1 } };
static struct spec_dtype_item f32 = { .dtype = SPEC_DTYPE_FLOAT32 };
static struct spec_dtype_item i64 = { .dtype = SPEC_DTYPE_INT64, .force_xfail = SPEC_TRI_TRUE };

static struct spec_dtype_item g_dtypes[3];
static struct spec_op g_ops[4];
static struct spec_dtype_item softmax_f16;
static struct spec_set set;

static void setup(void)
{
	g_dtypes[0] = f16;
	g_dtypes[1] = f32;
	g_dtypes[2] = i64;
	memset(g_ops, 0, sizeof(g_ops));
	g_ops[0].name = str("add");
	g_ops[1].name = str("softmax");
	softmax_f16 = (struct spec_dtype_item){ .dtype = SPEC_DTYPE_FLOAT16,
						.precision = { true, true, true, 0.005, 0.005 } };
	g_ops[1].dtypes = (struct spec_dtype_items){ &softmax_f16, 1, { 0 } };
	g_ops[1].dtypes_present = true;
	g_ops[2].name = str("nn.functional.gelu");
	g_ops[3].name = str("cumsum"); /* the emulator lacks it */
	memset(&set, 0, sizeof(set));
	set.global.supported_dtypes = (struct spec_dtype_items){ g_dtypes, 3, { 0 } };
	set.global.has_supported_dtypes = true;
	set.global.supported_ops = g_ops;
	set.global.n_supported_ops = 4;
	set.global.has_supported_ops = true;
	set.global.has_seed = true;
	set.global.seed = 123;
}

TestSuite(cases, .init = setup);

static size_t samples_of(const char *emu)
{
	const struct spyre_op_info *op = spyre_op_find(emu);
	size_t n = 1;
	for (const char *p = op->samples; *p; p++)
		n += *p == ';';
	return n;
}

static struct spec_case_test plain_test(const struct spec_test *e)
{
	return (struct spec_case_test){ .test_id = "test/x.py::TestX::test_y",
					.entry = e,
					.mode = SPEC_MODE_MANDATORY_SUCCESS };
}

/* ---- the op table ---- */

Test(cases, opmap_rows_name_emulator_ops)
{
	for (size_t i = 0; i < testspecs_opmap_count; i++)
		cr_expect(spyre_op_find(testspecs_opmap[i].emu) != NULL, "%s -> %s",
			  testspecs_opmap[i].upstream, testspecs_opmap[i].emu);
	for (size_t i = 0; i < spyre_ops_count; i++) {
		const struct spec_op_map *m = testspecs_opmap_find(spyre_ops[i].name);
		cr_assert(m != NULL, "emulator op %s has no row", spyre_ops[i].name);
		cr_expect_str_eq(m->emu, spyre_ops[i].name);
	}
}

Test(cases, opmap_call_prefixes)
{
	cr_assert_str_eq(testspecs_opmap_find("nn.functional.gelu")->emu, "gelu");
	cr_assert_str_eq(testspecs_opmap_find("F.gelu")->emu, "gelu");
	cr_assert_str_eq(testspecs_opmap_find("torch.nn.functional.softmax")->emu, "softmax");
	cr_assert_str_eq(testspecs_opmap_find("torch.add")->emu, "add");
	cr_assert_str_eq(testspecs_opmap_find("amax")->emu, "max");
	cr_assert_null(testspecs_opmap_find("torch.cumsum"));
	cr_assert_null(testspecs_opmap_find(""));
	cr_assert_eq(testspecs_family_for_path("${TORCH_ROOT}/test/test_binary_ufuncs.py"),
		     SPEC_FAMILY_BINARY_UFUNC);
	cr_assert_eq(testspecs_family_for_path("test/test_ops.py"), SPEC_FAMILY_ANY);
}

/* ---- rule 1: kernels: wins over everything ---- */

Test(cases, kernels_extension_wins)
{
	int64_t dims[2] = { 67, 256 };
	struct spec_kernel_input in = { .shape = { dims, 2, true, { 0 } } };
	struct spec_kernel k = { .op = str("softmax"),
				 .inputs = &in,
				 .n_inputs = 1,
				 .dtype = SPEC_DTYPE_FLOAT32,
				 .has_atol = true,
				 .atol = 0.25 };
	struct spec_op_include inc = { .name = str("add"), .sample_inputs = { .present = true } };
	struct spec_test e = { .kernels = &k, .n_kernels = 1 };
	e.edits.ops_include = &inc;
	e.edits.n_ops_include = 1;
	struct spec_case_test t = plain_test(&e);
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(testspecs_cases_expand(&l, &set, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_KERNELS);
	cr_assert_eq(l.n, 1);
	cr_assert_str_eq(l.v[0].emu_op, "softmax");
	cr_assert_eq(l.v[0].dtype, SPEC_DTYPE_FLOAT32);
	cr_assert_float_eq(l.v[0].atol, 0.25, 1e-12);
	cr_assert_float_eq(l.v[0].rtol, SPEC_PRECISION_DEFAULT, 1e-12);
	cr_assert_eq(l.v[0].ndims[0], 2);
	cr_assert_eq(l.v[0].shapes[0][1], 256);
	cr_assert_not(l.v[0].unsupported);
	testspecs_cases_finish(&l);
}

/* ---- rule 2: sample_inputs_func before @ops ---- */

Test(cases, sample_inputs_before_opinfo)
{
	int64_t a[2] = { 67, 256 };
	struct spec_arg args[2] = {
		{ .kind = SPEC_ARG_TENSOR, .tensor = { .shape = { a, 2, true, { 0 } } } },
		{ .kind = SPEC_ARG_TENSOR, .tensor = { .shape = { a, 2, true, { 0 } } } },
	};
	struct spec_op_include inc = {
		.name = str("add"), .sample_inputs = { .present = true, .args = args, .n_args = 2 }
	};
	struct spec_test e = { 0 };
	e.edits.ops_include = &inc;
	e.edits.n_ops_include = 1;
	struct spec_case_test t = plain_test(&e);
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(testspecs_cases_expand(&l, &set, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_SAMPLE_INPUTS);
	/* crossed with add's effective dtypes: float16, float32, int64 */
	cr_assert_eq(l.n, 3);
	cr_assert_eq(l.v[0].dtype, SPEC_DTYPE_FLOAT16);
	cr_assert_float_eq(l.v[0].atol, 0.1, 1e-12);
	cr_assert_eq(l.v[2].dtype, SPEC_DTYPE_INT64);
	cr_assert_eq(l.v[2].mode, SPEC_MODE_XFAIL, "force_xfail on int64");
	cr_assert_eq(l.v[0].mode, SPEC_MODE_MANDATORY_SUCCESS);
	testspecs_cases_finish(&l);
}

/* ---- rule 3: @ops tests: supported ops of the family, default samples, unsupported kept ---- */

Test(cases, opinfo_expands_supported_ops_and_counts_unsupported)
{
	struct spec_case_test t = plain_test(NULL);
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(testspecs_cases_expand(&l, &set, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_OPINFO);
	size_t add = samples_of("add") * 3;         /* f16, f32, i64 */
	size_t softmax = samples_of("softmax") * 1; /* its dtypes: f16 only */
	size_t gelu = samples_of("gelu") * 3;       /* i64 unsupported by the emulator */
	size_t cumsum = 3;                          /* one shapeless case per dtype */
	cr_assert_eq(l.n, add + softmax + gelu + cumsum);
	cr_assert_eq(r.n_unsupported, samples_of("gelu") + cumsum);
	cr_assert_eq(l.n_unsupported, r.n_unsupported);
	size_t seen_cumsum = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (strcmp(l.v[i].op, "cumsum") == 0) {
			seen_cumsum++;
			cr_expect(l.v[i].unsupported);
			cr_expect_null(l.v[i].emu_op);
			cr_expect(strstr(l.v[i].why, "no emulator op") != NULL, "%s", l.v[i].why);
		}
		if (strcmp(l.v[i].op, "softmax") == 0)
			cr_expect_float_eq(l.v[i].atol, 0.005, 1e-12);
	}
	cr_assert_eq(seen_cumsum, 3);
	testspecs_cases_finish(&l);
}

Test(cases, opinfo_family_and_exclude_by_prefix)
{
	struct spec_named ex = { .name = str("nn.functional") };
	struct spec_test e = { 0 };
	e.edits.ops_exclude = (struct spec_nameds){ &ex, 1, { 0 } };
	cr_assert(testspecs_op_excluded(&e, "nn.functional.gelu"));
	cr_assert_not(testspecs_op_excluded(&e, "add"));
	struct spec_named ex2 = { .name = str("div") };
	e.edits.ops_exclude.v = &ex2;
	cr_assert(testspecs_op_excluded(&e, "div.no_rounding_mode"));
	cr_assert(testspecs_op_excluded(&e, "div"));
	cr_assert_not(testspecs_op_excluded(&e, "divx"));

	/* the binary-ufunc family admits add only (softmax, gelu are not binary ufuncs; cumsum
	 * is unknown and stays, unsupported) */
	struct spec_case_test t = plain_test(NULL);
	t.opinfo = true;
	t.family = SPEC_FAMILY_BINARY_UFUNC;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(testspecs_cases_expand(&l, &set, &t, &r), 0);
	cr_assert_eq(l.n, samples_of("add") * 3 + 3);
	testspecs_cases_finish(&l);
}

/* ---- rule 4 and 5 ---- */

Test(cases, body_ops_then_not_mappable)
{
	const char *calls[] = { "torch.add", "F.gelu", "torch.cumprod" };
	struct spec_case_test t = plain_test(NULL);
	t.body_ops = calls;
	t.n_body_ops = 3;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(testspecs_cases_expand(&l, &set, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_BODY_OPS);
	cr_assert_eq(l.n, samples_of("add") * 3 + samples_of("gelu") * 3);
	testspecs_cases_finish(&l);

	const char *none[] = { "torch.cumprod" };
	t.body_ops = none;
	t.n_body_ops = 1;
	testspecs_cases_init(&l);
	cr_assert_eq(testspecs_cases_expand(&l, &set, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_NONE);
	cr_assert_eq(l.n, 0);
	cr_assert(strstr(r.why, "supported op") != NULL, "%s", r.why);
	t.mode = SPEC_MODE_SKIP;
	cr_assert_eq(testspecs_cases_expand(&l, &set, &t, &r), 0);
	cr_assert_str_eq(r.why, "the test is skipped");
	testspecs_cases_finish(&l);
}

/* ---- dtypes ---- */

Test(cases, effective_dtypes_formula)
{
	enum spec_dtype d[SPEC_DTYPE_COUNT];
	cr_assert_eq(testspecs_effective_dtypes(&set, NULL, "add", d, SPEC_DTYPE_COUNT), 3);
	cr_assert_eq(testspecs_effective_dtypes(&set, NULL, "softmax", d, SPEC_DTYPE_COUNT), 1);
	cr_assert_eq(d[0], SPEC_DTYPE_FLOAT16);
	struct spec_dtype_item inc = { .dtype = SPEC_DTYPE_FLOAT64 };
	struct spec_dtype_item exc[2] = { { .dtype = SPEC_DTYPE_FLOAT16 },
					  { .dtype = SPEC_DTYPE_FLOAT64 } };
	struct spec_test e = { 0 };
	e.edits.dtypes_include = (struct spec_dtype_items){ &inc, 1, { 0 } };
	size_t n = testspecs_effective_dtypes(&set, &e, "add", d, SPEC_DTYPE_COUNT);
	cr_assert_eq(n, 4);
	cr_assert_eq(d[2], SPEC_DTYPE_FLOAT64);
	/* exclude wins over include */
	e.edits.dtypes_exclude = (struct spec_dtype_items){ exc, 2, { 0 } };
	n = testspecs_effective_dtypes(&set, &e, "add", d, SPEC_DTYPE_COUNT);
	cr_assert_eq(n, 2);
	cr_assert_eq(d[0], SPEC_DTYPE_FLOAT32);
	cr_assert_eq(d[1], SPEC_DTYPE_INT64);
}

/* ---- determinism ---- */

Test(cases, ids_and_seeds_are_stable_and_distinct)
{
	struct spec_case_test t = plain_test(NULL);
	t.opinfo = true;
	struct spec_case_list a, b;
	testspecs_cases_init(&a);
	testspecs_cases_init(&b);
	struct spec_expand_result r;
	cr_assert_eq(testspecs_cases_expand(&a, &set, &t, &r), 0);
	cr_assert_eq(testspecs_cases_expand(&b, &set, &t, &r), 0);
	cr_assert_eq(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		cr_assert_str_eq(a.v[i].id, b.v[i].id);
		cr_assert_eq(a.v[i].seed, b.v[i].seed);
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(a.v[i].id, a.v[j].id, "cases %zu and %zu", i, j);
	}
	/* another test id, another seed; another global seed, same id but another seed */
	struct spec_case_test t2 = t;
	t2.test_id = "test/x.py::TestX::test_z";
	struct spec_case_list c;
	testspecs_cases_init(&c);
	cr_assert_eq(testspecs_cases_expand(&c, &set, &t2, &r), 0);
	cr_assert_str_neq(c.v[0].id, a.v[0].id);
	cr_assert_neq(c.v[0].seed, a.v[0].seed);
	testspecs_cases_finish(&c);
	set.global.seed = 124;
	testspecs_cases_init(&c);
	cr_assert_eq(testspecs_cases_expand(&c, &set, &t, &r), 0);
	cr_assert_str_eq(c.v[0].id, a.v[0].id);
	cr_assert_neq(c.v[0].seed, a.v[0].seed);
	testspecs_cases_finish(&c);
	testspecs_cases_finish(&a);
	testspecs_cases_finish(&b);
}
