/* Kernel-case expansion (testspecs/src/cases.c): the precedence of the rules, dtypes, modes and
 * precision as the resolver gives them (cases.c has no formula of its own), unsupported cases
 * counted and kept, variant ids, regex entries through the probe, and deterministic ids and
 * seeds. The specs are YAML text loaded by the loader. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"
#include "spyre-emu/ops.h"
#include "testspecs/cases.h"
#include "testspecs/resolve.h"

/* float16 has a precision, float32 none (the default 1e-3), int64 is force_xfail; softmax runs
 * in float16 only, with its own precision; cumsum is an op the emulator lacks. */
static const char spec_text[] =
    "test_suite_config:\n"
    "  files:\n"
    "    - path: ${TORCH_ROOT}/test/x.py\n"
    "      tests:\n"
    "        - names: [TestX::test_k]\n"
    "          kernels:\n"
    "            - {op: softmax, inputs: [\"67x256\"], dtype: float16, atol: 0.25}\n"
    "            - {op: add, inputs: [\"4\", \"4\"], dtype: float64}\n"
    "          edits:\n"
    "            ops:\n"
    "              include:\n"
    "                - name: add\n"
    "                  sample_inputs_func: {args: [{tensor: {shape: [4], dtype: float16}}]}\n"
    "        - names: [TestX::test_s]\n"
    "          edits:\n"
    "            ops:\n"
    "              include:\n"
    "                - name: add\n"
    "                  sample_inputs_func:\n"
    "                    args:\n"
    "                      - {tensor: {shape: [67, 256], dtype: int64}}\n"
    "                      - {tensor: {shape: [67, 256], dtype: int64}}\n"
    "                - name: softmax\n"
    "                  sample_inputs_func: {args: [{tensor: {shape: [8], dtype: float32}}]}\n"
    "        - names: [TestX::test_y, TestX::test_z, \"TestX::test_re_.*\"]\n"
    "        - names: [TestX::test_excl]\n"
    "          edits: {ops: {exclude: [{name: add}, {name: nn.functional.gelu}]}}\n"
    "        - names: [TestX::test_dt]\n"
    "          edits:\n"
    "            dtypes:\n"
    "              include: [{name: float64, precision: {atol: 0.5, rtol: 0.5}}]\n"
    "              exclude: [{name: float16}]\n"
    "        - names: [TestX::test_skip]\n"
    "          mode: skip\n"
    "        - names: [TestX::test_tier]\n"
    "          labels: [trunk]\n"
    "  global:\n"
    "    supported_dtypes:\n"
    "      - {name: float16, precision: {atol: 0.1, rtol: 0.1}}\n"
    "      - {name: float32}\n"
    "      - {name: int64, force_xfail: true}\n"
    "    supported_ops:\n"
    "      - add\n"
    "      - name: softmax\n"
    "        dtypes: [{name: float16, precision: {atol: 0.005, rtol: 0.005}}]\n"
    "      - nn.functional.gelu\n"
    "      - cumsum\n"
    "    input_config: {seed: 123}\n";

static struct loaded L;
static struct spec_resolver *R;

static void load(const char *text)
{
	loaded_text(&L, text, true);
	cr_assert_eq(L.rc, 0, "%s", diags_text(&L.diags));
	cr_assert_eq(testspecs_resolver_create(&R, L.set), 0);
}

static void setup(void)
{
	load(spec_text);
}

static void teardown(void)
{
	testspecs_resolver_destroy(R);
	loaded_finish(&L);
}

TestSuite(cases, .init = setup, .fini = teardown);

static struct spec_case_test test_of(const char *method)
{
	static char ids[4][256]; /* a few tests alive at once */
	static unsigned next;
	char *id = ids[next++ % 4];
	snprintf(id, sizeof(ids[0]), "test/x.py::TestX::%s", method);
	return (struct spec_case_test){ .test_id = id };
}

static int expand(struct spec_case_list *l, const struct spec_case_test *t,
		  struct spec_expand_result *r)
{
	return testspecs_cases_expand(l, R, L.set, t, r);
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

/* ---- rule 1: kernels: wins over everything; the resolver's dtypes still bound it ---- */

Test(cases, kernels_extension_wins)
{
	struct spec_case_test t = test_of("test_k");
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert(r.eligible);
	cr_assert_eq(r.rule, SPEC_RULE_KERNELS);
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq(l.v[0].emu_op, "softmax");
	cr_assert_eq(l.v[0].dtype, SPEC_DTYPE_FLOAT16);
	cr_assert_float_eq(l.v[0].atol, 0.25, 1e-12, "the kernel's atol");
	cr_assert_float_eq(l.v[0].rtol, 0.005, 1e-12, "softmax's float16 rtol");
	cr_assert_eq(l.v[0].ndims[0], 2);
	cr_assert_eq(l.v[0].shapes[0][1], 256);
	cr_assert_not(l.v[0].unsupported, "%s", l.v[0].why);
	/* float64 is no effective dtype of add here: listed, unsupported, with the reason */
	cr_assert_eq(l.v[1].dtype, SPEC_DTYPE_FLOAT64);
	cr_assert(l.v[1].unsupported);
	cr_assert(strstr(l.v[1].why, "effective dtype") != NULL, "%s", l.v[1].why);
	cr_assert_eq(r.n_unsupported, 1);
	testspecs_cases_finish(&l);
}

/* ---- rule 2: sample_inputs_func before @ops ---- */

Test(cases, sample_inputs_before_opinfo)
{
	struct spec_case_test t = test_of("test_s");
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_SAMPLE_INPUTS);
	/* the tensors' dtype (the schema requires one): add in int64, force_xfail'd; softmax
	 * in float32, which its supported_ops entry does not give: listed, unsupported */
	cr_assert_eq(l.n, 2);
	cr_assert_eq(l.v[0].dtype, SPEC_DTYPE_INT64);
	cr_assert_eq(l.v[0].mode, SPEC_MODE_XFAIL, "force_xfail on int64");
	cr_assert_eq(l.v[0].nin, 2);
	cr_assert_not(l.v[0].unsupported, "%s", l.v[0].why);
	cr_assert_str_eq(l.v[1].op, "softmax");
	cr_assert(l.v[1].unsupported);
	cr_assert(strstr(l.v[1].why, "effective dtype") != NULL, "%s", l.v[1].why);
	testspecs_cases_finish(&l);
}

/* ---- rule 3: @ops tests: supported ops of the family, default samples, unsupported kept ---- */

Test(cases, opinfo_expands_supported_ops_and_counts_unsupported)
{
	struct spec_case_test t = test_of("test_y");
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(expand(&l, &t, &r), 0);
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

Test(cases, opinfo_family_and_exclude)
{
	/* excluded ops have no variant: the resolver gives them no row */
	struct spec_case_test t = test_of("test_excl");
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_eq(l.n, samples_of("softmax") + 3);
	for (size_t i = 0; i < l.n; i++)
		cr_expect(strcmp(l.v[i].op, "add") && strcmp(l.v[i].op, "nn.functional.gelu"), "%s",
			  l.v[i].op);
	testspecs_cases_finish(&l);

	/* the binary-ufunc family admits add only (softmax, gelu are not binary ufuncs; cumsum
	 * is unknown and stays, unsupported) */
	t = test_of("test_y");
	t.opinfo = true;
	t.family = SPEC_FAMILY_BINARY_UFUNC;
	testspecs_cases_init(&l);
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_eq(l.n, samples_of("add") * 3 + 3);
	testspecs_cases_finish(&l);
}

/* A device-generic variant id expands only its op and dtype. */
Test(cases, variant_id_expands_its_op_and_dtype)
{
	struct spec_case_test t = { .test_id =
					"test/x.py::TestXPRIVATEUSE1::test_y_add_spyre_float32",
				    .opinfo = true };
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert(r.eligible);
	cr_assert_eq(l.n, samples_of("add"));
	for (size_t i = 0; i < l.n; i++) {
		cr_expect_str_eq(l.v[i].op, "add");
		cr_expect_eq(l.v[i].dtype, SPEC_DTYPE_FLOAT32);
	}
	testspecs_cases_finish(&l);
}

/* ---- rule 4 and 5; tests the resolver refuses ---- */

Test(cases, body_ops_then_not_mappable)
{
	const char *calls[] = { "torch.add", "F.gelu", "torch.cumprod" };
	struct spec_case_test t = test_of("test_y");
	t.body_ops = calls;
	t.n_body_ops = 3;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_BODY_OPS);
	cr_assert_eq(l.n, samples_of("add") * 3 + samples_of("gelu") * 3);
	testspecs_cases_finish(&l);

	const char *none[] = { "torch.cumprod" };
	t.body_ops = none;
	t.n_body_ops = 1;
	testspecs_cases_init(&l);
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_eq(r.rule, SPEC_RULE_NONE);
	cr_assert_eq(l.n, 0);
	cr_assert(strstr(r.why, "supported op") != NULL, "%s", r.why);
	testspecs_cases_finish(&l);
}

Test(cases, refused_tests_expand_nothing)
{
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	struct spec_case_test t = test_of("test_skip");
	t.opinfo = true;
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_not(r.eligible);
	cr_assert_eq(r.mode, SPEC_MODE_SKIP);
	cr_assert_eq(l.n, 0);
	cr_assert(
	    strncmp(r.why, "the test is skipped: listed by 'TestX::test_skip' at t.yaml:", 60) == 0,
	    "%s", r.why);
	/* a tier the entry is not labelled for */
	t = test_of("test_tier");
	t.opinfo = true;
	t.tier = "smoke";
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_not(r.eligible);
	cr_assert(strstr(r.why, "other tiers") != NULL, "%s", r.why);
	t.tier = "trunk";
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert(r.eligible);
	cr_assert_gt(l.n, 0);
	testspecs_cases_finish(&l);
	/* a file no entry covers */
	t.test_id = "test/other.py::TestX::test_y";
	testspecs_cases_init(&l);
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert_not(r.eligible);
	cr_assert(strstr(r.why, "no file entry") != NULL, "%s", r.why);
	/* unlisted in a listed file: the default unlisted mode, xfail */
	t = test_of("test_unlisted");
	t.opinfo = true;
	cr_assert_eq(expand(&l, &t, &r), 0);
	cr_assert(r.eligible);
	cr_assert_null(r.entry);
	cr_assert_eq(r.mode, SPEC_MODE_XFAIL);
	for (size_t i = 0; i < l.n; i++)
		cr_expect_eq(l.v[i].mode, SPEC_MODE_XFAIL);
	testspecs_cases_finish(&l);
}

/* ---- dtypes: the resolver's formula, include and exclude ---- */

Test(cases, dtype_edits_reach_the_cases)
{
	struct spec_case_test t = test_of("test_dt");
	t.opinfo = true;
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(expand(&l, &t, &r), 0);
	/* add: f32, i64, f64 (included with its precision), not f16 (excluded) */
	size_t f64 = 0;
	for (size_t i = 0; i < l.n; i++) {
		cr_expect_neq(l.v[i].dtype, SPEC_DTYPE_FLOAT16, "%s", l.v[i].op);
		if (strcmp(l.v[i].op, "add") == 0 && l.v[i].dtype == SPEC_DTYPE_FLOAT64) {
			f64++;
			cr_expect_float_eq(l.v[i].atol, 0.5, 1e-12);
		}
	}
	cr_assert_eq(f64, samples_of("add"));
	testspecs_cases_finish(&l);
}

/* ---- regex entries: the probe decides as for a test the entry alone lists ---- */

Test(cases, regex_entry_through_the_probe)
{
	const struct spec_file *f = &L.set->files[0];
	const struct spec_test *k = &f->tests[0];
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result r;
	cr_assert_eq(
	    testspecs_cases_expand_entry(&l, L.set, f, k, "test/x.py::TestX::test_k.*", NULL, &r),
	    0);
	cr_assert(r.eligible);
	cr_assert_eq(r.entry, k);
	cr_assert_eq(r.rule, SPEC_RULE_KERNELS);
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq(l.v[0].test_id, "test/x.py::TestX::test_k.*");
	cr_assert_eq(l.v[0].kernel, &k->kernels[0]);
	cr_assert_float_eq(l.v[0].rtol, 0.005, 1e-12);
	testspecs_cases_finish(&l);
	/* the tier entry in another tier: refused */
	testspecs_cases_init(&l);
	cr_assert_eq(testspecs_cases_expand_entry(&l, L.set, f, &f->tests[5], "x", "smoke", &r), 0);
	cr_assert_not(r.eligible);
	cr_assert_eq(l.n, 0);
	testspecs_cases_finish(&l);
}

/* ---- determinism ---- */

Test(cases, ids_and_seeds_are_stable_and_distinct)
{
	struct spec_case_test t = test_of("test_y");
	t.opinfo = true;
	struct spec_case_list a, b;
	testspecs_cases_init(&a);
	testspecs_cases_init(&b);
	struct spec_expand_result r;
	cr_assert_eq(expand(&a, &t, &r), 0);
	cr_assert_eq(expand(&b, &t, &r), 0);
	cr_assert_eq(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		cr_assert_str_eq(a.v[i].id, b.v[i].id);
		cr_assert_eq(a.v[i].seed, b.v[i].seed);
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(a.v[i].id, a.v[j].id, "cases %zu and %zu", i, j);
	}
	/* another test id, another seed; another global seed, same id but another seed */
	struct spec_case_test t2 = test_of("test_z");
	t2.opinfo = true;
	struct spec_case_list c;
	testspecs_cases_init(&c);
	cr_assert_eq(expand(&c, &t2, &r), 0);
	cr_assert_str_neq(c.v[0].id, a.v[0].id);
	cr_assert_neq(c.v[0].seed, a.v[0].seed);
	testspecs_cases_finish(&c);
	teardown();
	char other[sizeof(spec_text)];
	memcpy(other, spec_text, sizeof(spec_text));
	char *seed = strstr(other, "seed: 123");
	cr_assert_not_null(seed);
	seed[8] = '4';
	load(other);
	testspecs_cases_init(&c);
	cr_assert_eq(expand(&c, &t, &r), 0);
	cr_assert_str_eq(c.v[0].id, a.v[0].id);
	cr_assert_neq(c.v[0].seed, a.v[0].seed);
	testspecs_cases_finish(&c);
	testspecs_cases_finish(&a);
	testspecs_cases_finish(&b);
}
