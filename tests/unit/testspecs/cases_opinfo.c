/* Rule 3's cases from the op database (testspecs/src/cases_opinfo.c): an op's OpInfo shapes at
 * its OpInfo dtypes within the effective ones, the default samples at the OpInfo's dtypes when
 * it names no shapes, the default samples alone when no entry is known; each case says which,
 * and what the emulator cannot take is listed unsupported with its reason. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"
#include "spyre-emu/ops.h"
#include "testspecs/cases.h"
#include "testspecs/resolve.h"

static const char spec_text[] =
    "test_suite_config:\n"
    "  files:\n"
    "    - path: ${TORCH_ROOT}/test/x.py\n"
    "      tests:\n"
    "        - names: [TestX::test_ops]\n"
    "        - names: [TestX::test_excl]\n"
    "          edits: {ops: {exclude: [{name: add}], include: [{name: mean}]}}\n"
    "  global:\n"
    "    supported_dtypes: [{name: float16}, {name: float32}, {name: int64}]\n"
    "    supported_ops:\n"
    "      - add\n"
    "      - name: softmax\n"
    "        dtypes: [{name: float16}]\n"
    "      - nn.functional.gelu\n"
    "      - mm\n";

static struct loaded L;
static struct spec_resolver *R;

static void setup(void)
{
	loaded_text(&L, spec_text, true);
	cr_assert_eq(L.rc, 0, "%s", diags_text(&L.diags));
	cr_assert_eq(testspecs_resolver_create(&R, L.set), 0);
}

static void teardown(void)
{
	testspecs_resolver_destroy(R);
	loaded_finish(&L);
}

TestSuite(cases_opinfo, .init = setup, .fini = teardown);

/* The op database of these tests: add with shapes and dtypes (int64 not among them), softmax
 * with dtypes that miss its only effective one, mm with shapes its inner sizes refuse, mean
 * (included by an entry) with shapes; gelu has no entry. */
static int opinfo_of(void *ctx, const char *op, struct spec_opinfo *out)
{
	(void)ctx;
	if (strcmp(op, "add") == 0)
		*out =
		    (struct spec_opinfo){ "BinaryUfuncInfo", "float16,bfloat16,float32,bool",
					  "(5, 10);(5,);(0, 3)", "sample_inputs_add", "db.py:3" };
	else if (strcmp(op, "softmax") == 0)
		*out = (struct spec_opinfo){ "OpInfo", "float32,float64", NULL, NULL, NULL };
	else if (strcmp(op, "mm") == 0)
		*out = (struct spec_opinfo){ "OpInfo", "float16,float32", "(5, 10);(10, 10)", "s",
					     NULL };
	else if (strcmp(op, "mean") == 0)
		*out = (struct spec_opinfo){ "ReductionOpInfo", NULL, "(3, 4, 5)", "s", NULL };
	else
		return 0;
	return 1;
}

static void expand(const char *method, struct spec_case_list *l, struct spec_expand_result *r,
		   bool with_db)
{
	char id[256];
	snprintf(id, sizeof id, "test/x.py::TestX::%s", method);
	struct spec_case_test t = { .test_id = id, .opinfo = true };
	if (with_db)
		t.opinfo_of = opinfo_of;
	testspecs_cases_init(l);
	cr_assert_eq(testspecs_cases_expand(l, R, L.set, &t, r), 0);
	cr_assert_eq(r->rule, SPEC_RULE_OPINFO);
}

static size_t count(const struct spec_case_list *l, const char *op, enum spec_case_source s,
		    bool unsupported)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += strcmp(l->v[i].op, op) == 0 && l->v[i].source == s &&
		     l->v[i].unsupported == unsupported;
	return n;
}

Test(cases_opinfo, shapes_and_dtypes_from_the_entry)
{
	struct spec_case_list l;
	struct spec_expand_result r;
	expand("test_ops", &l, &r, true);
	/* add: 3 shapes x {float16, float32} (int64 is no OpInfo dtype); (0, 3) is empty */
	cr_assert_eq(count(&l, "add", SPEC_SOURCE_OPINFO_SAMPLES, false), 4);
	cr_assert_eq(count(&l, "add", SPEC_SOURCE_OPINFO_SAMPLES, true), 2);
	for (size_t i = 0; i < l.n; i++) {
		const struct spec_case *c = &l.v[i];
		if (strcmp(c->op, "add") != 0)
			continue;
		cr_expect(c->dtype == SPEC_DTYPE_FLOAT16 || c->dtype == SPEC_DTYPE_FLOAT32);
		cr_assert_eq(c->nin, 2);
		cr_expect_eq(c->ndims[0], c->ndims[1]);
		cr_expect_eq(c->shapes[0][0], c->shapes[1][0]);
		if (c->ndims[0] == 2 && c->shapes[0][0] == 0)
			cr_expect(strstr(c->why, "empty tensor") != NULL, "%s", c->why);
		if (c->ndims[0] == 2 && c->shapes[0][0] == 5)
			cr_expect_eq(c->shapes[0][1], 10);
	}
	/* softmax: its only effective dtype (float16) is no OpInfo dtype: listed, unsupported */
	cr_assert_eq(count(&l, "softmax", SPEC_SOURCE_OPINFO_DTYPES, true), samples_of("softmax"));
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.v[i].op, "softmax") == 0)
			cr_expect(strstr(l.v[i].why, "OpInfo's dtypes") != NULL, "%s", l.v[i].why);
	/* mm: (5, 10) @ (5, 10) does not fit, (10, 10) @ (10, 10) does */
	cr_assert_eq(count(&l, "mm", SPEC_SOURCE_OPINFO_SAMPLES, true), 2);
	cr_assert_eq(count(&l, "mm", SPEC_SOURCE_OPINFO_SAMPLES, false), 2);
	/* gelu: no entry, the default samples at every effective dtype */
	size_t gelu = count(&l, "nn.functional.gelu", SPEC_SOURCE_DEFAULT, false) +
		      count(&l, "nn.functional.gelu", SPEC_SOURCE_DEFAULT, true);
	cr_assert_eq(gelu, samples_of("gelu") * 3);
	cr_assert_eq(r.n_by_source[SPEC_SOURCE_OPINFO_SAMPLES], 10);
	cr_assert_eq(r.n_by_source[SPEC_SOURCE_OPINFO_DTYPES], samples_of("softmax"));
	cr_assert_eq(r.n_by_source[SPEC_SOURCE_DEFAULT], gelu);
	cr_assert_eq(r.n_cases, l.n);
	cr_assert_str_eq(testspecs_source_name(SPEC_SOURCE_OPINFO_SAMPLES),
			 "OpInfo sample_inputs_func shapes");
	cr_assert_str_eq(testspecs_source_name(SPEC_SOURCE_OPINFO_DTYPES), "OpInfo dtypes");
	cr_assert_str_eq(testspecs_source_name(SPEC_SOURCE_DEFAULT), "the op's default samples");
	testspecs_cases_finish(&l);
}

/* The entry's edits: an excluded op has no cases, an included one gets its OpInfo shapes. */
Test(cases_opinfo, entry_edits_include_and_exclude)
{
	struct spec_case_list l;
	struct spec_expand_result r;
	expand("test_excl", &l, &r, true);
	cr_assert_eq(count(&l, "add", SPEC_SOURCE_OPINFO_SAMPLES, false), 0);
	/* mean: one shape, no OpInfo dtypes: the three effective dtypes */
	cr_assert_eq(count(&l, "mean", SPEC_SOURCE_OPINFO_SAMPLES, false) +
			 count(&l, "mean", SPEC_SOURCE_OPINFO_SAMPLES, true),
		     3);
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.v[i].op, "mean") == 0)
			cr_expect(l.v[i].nin == 1 && l.v[i].ndims[0] == 3 &&
				  l.v[i].shapes[0][2] == 5);
	testspecs_cases_finish(&l);
}

/* Without an op database every rule-3 case is the default samples' and says so; the ids of
 * those cases do not change with the source. */
Test(cases_opinfo, no_database_is_default_samples)
{
	struct spec_case_list a, b;
	struct spec_expand_result ra, rb;
	expand("test_ops", &a, &ra, false);
	cr_assert_eq(ra.n_by_source[SPEC_SOURCE_DEFAULT], a.n);
	cr_assert(a.n > 0);
	expand("test_ops", &b, &rb, true);
	size_t same = 0;
	for (size_t i = 0; i < a.n; i++)
		for (size_t j = 0; j < b.n; j++)
			same += strcmp(a.v[i].id, b.v[j].id) == 0;
	cr_assert_eq(same, count(&b, "nn.functional.gelu", SPEC_SOURCE_DEFAULT, false) +
			       count(&b, "nn.functional.gelu", SPEC_SOURCE_DEFAULT, true));
	testspecs_cases_finish(&a);
	testspecs_cases_finish(&b);
}
