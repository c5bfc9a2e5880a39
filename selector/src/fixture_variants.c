/* test/test_op_variants.py: one test file holding every way PyTorch names the tests it
 * instantiates, with the ground truth of each test's variants (.ground_truth/variants.jsonl):
 *  - @ops over the generated op database: op_db, binary_ufuncs, unary_ufuncs, reduction_ops,
 *    list comprehensions and filter(lambda ...) over them, isinstance conditions, and an entry
 *    with a variant_test_name (one binary op has a second entry, as PyTorch's `add` has);
 *  - @dtypes suffixes, @parametrize inside a device-generic class and beside @ops;
 *  - @parametrize under instantiate_parametrized_tests: literal values (numbers, strings with
 *    a dot, None, dtypes), several names, name_fn, subtest(name=...), stacked decorators;
 *  - tests added at import time by setattr in a loop over a literal list.
 * The file is written with the first commit and never edited; the history never changes the op
 * database's names or classes, so the truth computed here holds at every commit. Nothing here
 * draws from the generator's random stream. The tests run nothing of torch/: their execution
 * truth (tests.jsonl) is empty. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "fixture_variants.h"

#define P(...)                                                                                     \
	do {                                                                                       \
		if (buf_appendf(&g->text, __VA_ARGS__))                                            \
			return err_set(ERR_LIMIT, "fixture: a rendered file is too large");        \
	} while (0)

#define VAR_PATH "test/test_op_variants.py"
#define VAR_VTN  "with_alpha" /* the variant_test_name of the second entry */

static const char *const generated_ops[] = { "__add__", "__mul__", "__and__", "__lshift__" };

uint32_t fixture__variant_op(const struct fx_gen *g)
{
	for (uint32_t i = 0; g->shapes_all && i < g->nops; i++)
		if (g->ops[i].has_info && g->ops[i].info_file == 0 &&
		    g->ops[i].kind == FX_OP_BINARY)
			return i;
	return FX_NONE;
}

/* The name of the k-th op of `kind` with an entry (FX_OP_OTHER: any), or a name of none. */
static const char *nth_op(const struct fx_gen *g, int kind, uint32_t k)
{
	for (uint32_t i = 0; i < g->nops; i++)
		if (g->ops[i].has_info && (kind == FX_OP_OTHER || g->ops[i].kind == kind) && !k--)
			return g->ops[i].name;
	return "no_such_op";
}

/* The tests of the file, each with how its variants are chosen. */
enum sel { S_NONE, S_ALL, S_UNARY, S_BINARY, S_REDUCTION, S_LISTED, S_FILTERED, S_NOVAR, S_ISINST };
struct vtest {
	const char *cls, *name;
	uint8_t device, sel;
	const char *params; /* suffixes crossed after the op variants, space-separated */
	const char *dtypes;
};

static const struct vtest vtests[] = {
	{ "TestOpVariants", "test_op_db", 1, S_ALL, NULL, NULL },
	{ "TestOpVariants", "test_binary", 1, S_BINARY, NULL, NULL },
	{ "TestOpVariants", "test_unary", 1, S_UNARY, NULL, NULL },
	{ "TestOpVariants", "test_reduction", 1, S_REDUCTION, NULL, NULL },
	{ "TestOpVariants", "test_listed", 1, S_LISTED, NULL, NULL },
	{ "TestOpVariants", "test_filtered", 1, S_FILTERED, NULL, NULL },
	{ "TestOpVariants", "test_no_variant", 1, S_NOVAR, NULL, NULL },
	{ "TestOpVariants", "test_isinstance", 1, S_ISINST, NULL, NULL },
	{ "TestOpVariants", "test_keepdim", 1, S_LISTED, "keepdim_True keepdim_False", NULL },
	{ "TestOpVariants", "test_dtyped", 1, S_NONE, NULL, "float32 float16" },
	{ "TestOpVariants", "test_fn_name", 1, S_NONE, "fn_name_amax fn_name_amin", NULL },
	{ "TestOpVariants", "test_device_plain", 1, S_NONE, NULL, NULL },
	{ "TestParams", "test_values", 0, S_NONE, "n_1 n_2_5 n_a_b n3", NULL },
	{ "TestParams", "test_pairs", 0, S_NONE, "x_1_y_a x_2_y_b", NULL },
	{ "TestParams", "test_named", 0, S_NONE, "reduce_sum reduce_mean", NULL },
	{ "TestParams", "test_subtests", 0, S_NONE, "zero one v_2", NULL },
	{ "TestParams", "test_dtype_values", 0, S_NONE, "float16 float32", NULL },
	{ "TestParams", "test_stacked", 0, S_NONE, "a_0_b_p a_0_b_q a_1_b_p a_1_b_q", NULL },
	{ "TestParams", "test_plain", 0, S_NONE, NULL, NULL },
	{ "TestGenerated", "test_base", 0, S_NONE, NULL, NULL },
};
#define N_VTESTS (sizeof vtests / sizeof *vtests)

static int render_ops_class(struct fx_gen *g)
{
	const char *u0 = nth_op(g, FX_OP_UNARY, 0), *b0 = nth_op(g, FX_OP_BINARY, 0);
	const char *b1 = nth_op(g, FX_OP_BINARY, 1);
	P("\n\nclass TestOpVariants(TestCase):\n");
	P("    @ops(op_db)\n    def test_op_db(self, device, dtype, op):\n"
	  "        self.assertIsNotNone(op.name)\n\n");
	P("    @ops(binary_ufuncs)\n    def test_binary(self, device, dtype, op):\n"
	  "        self.assertIsNotNone(op.name)\n\n");
	P("    @ops(unary_ufuncs)\n    def test_unary(self, device, dtype, op):\n"
	  "        self.assertIsNotNone(op.name)\n\n");
	P("    @ops(reduction_ops)\n    def test_reduction(self, device, dtype, op):\n"
	  "        self.assertIsNotNone(op.name)\n\n");
	P("    @ops([op for op in op_db if op.name in ('%s', '%s')])\n", b0, b1);
	P("    def test_listed(self, device, dtype, op):\n        self.assertIsNotNone(op)\n\n");
	P("    @ops(filter(lambda op: op.name not in ('%s',), unary_ufuncs))\n", u0);
	P("    def test_filtered(self, device, dtype, op):\n        self.assertIsNotNone(op)\n\n");
	P("    @ops([o for o in binary_ufuncs if o.variant_test_name == ''])\n");
	P("    def test_no_variant(self, device, dtype, op):\n        "
	  "self.assertIsNotNone(op)\n\n");
	P("    @ops(list(filter(lambda op: isinstance(op, ReductionOpInfo) or op.name == '%s',\n"
	  "                     op_db)))\n",
	  u0);
	P("    def test_isinstance(self, device, dtype, op):\n        "
	  "self.assertIsNotNone(op)\n\n");
	P("    @ops([op for op in op_db if op.name in ('%s', '%s')])\n", b0, b1);
	P("    @parametrize('keepdim', [True, False])\n");
	P("    def test_keepdim(self, device, dtype, op, keepdim):\n"
	  "        self.assertIsNotNone(keepdim)\n\n");
	P("    @dtypes(torch.float32, torch.float16)\n");
	P("    def test_dtyped(self, device, dtype):\n        self.assertIsNotNone(dtype)\n\n");
	P("    @parametrize(\"fn_name\", [\"amax\", \"amin\"])\n");
	P("    def test_fn_name(self, device, fn_name):\n        self.assertTrue(fn_name)\n\n");
	P("    def test_device_plain(self, device):\n        self.assertTrue(device)\n");
	P("\n\ninstantiate_device_type_tests(TestOpVariants, globals())\n");
	return 0;
}

static int render_params_class(struct fx_gen *g)
{
	P("\n\nclass TestParams(TestCase):\n");
	P("    @parametrize(\"n\", [1, 2.5, \"a.b\", None])\n");
	P("    def test_values(self, n):\n        self.assertTrue(n or n is None)\n\n");
	P("    @parametrize(\"x,y\", [(1, 'a'), (2, 'b')])\n");
	P("    def test_pairs(self, x, y):\n        self.assertTrue(x and y)\n\n");
	P("    @parametrize(\"mode\", [\"sum\", \"mean\"], name_fn=lambda m: f\"reduce_{m}\")\n");
	P("    def test_named(self, mode):\n        self.assertTrue(mode)\n\n");
	P("    @parametrize(\"v\", [subtest(0, name=\"zero\"), subtest(1, name=\"one\"), 2])\n");
	P("    def test_subtests(self, v):\n        self.assertIsNotNone(v)\n\n");
	P("    @parametrize(\"dt\", [torch.float16, torch.float32])\n");
	P("    def test_dtype_values(self, dt):\n        self.assertIsNotNone(dt)\n\n");
	P("    @parametrize(\"a\", [0, 1])\n    @parametrize(\"b\", [\"p\", \"q\"])\n");
	P("    def test_stacked(self, a, b):\n        self.assertTrue(b)\n\n");
	P("    def test_plain(self):\n        self.assertTrue(True)\n");
	P("\n\ninstantiate_parametrized_tests(TestParams)\n");
	return 0;
}

static int render_generated(struct fx_gen *g)
{
	P("\n\nclass TestGenerated(TestCase):\n    def test_base(self):\n"
	  "        self.assertTrue(True)\n\n\n");
	P("def generate_not_implemented_tests(cls):\n    def make(op):\n"
	  "        def test(self):\n            self.assertTrue(op)\n\n        return test\n\n");
	P("    for op in [");
	for (size_t i = 0; i < sizeof generated_ops / sizeof *generated_ops; i++)
		P("%s'%s'", i ? ", " : "", generated_ops[i]);
	P("]:\n        name = 'test_{}_not_implemented'.format(op)\n"
	  "        setattr(cls, name, make(op))\n\n\n");
	P("generate_not_implemented_tests(TestGenerated)\n");
	P("\n\nif __name__ == '__main__':\n    run_tests()\n");
	return 0;
}

int fixture__write_variants_file(struct fx_gen *g)
{
	if (!g->shapes_all)
		return 0;
	buf_reset(&g->text);
	P("\"\"\"Test variants: each way PyTorch names the tests it instantiates "
	  "(generated).\"\"\"\n");
	P("import torch\nfrom torch.testing._internal.common_device_type import (\n"
	  "    dtypes,\n    instantiate_device_type_tests,\n    ops,\n)\n");
	P("from torch.testing._internal.common_methods_invocations import (\n"
	  "    binary_ufuncs,\n    op_db,\n    reduction_ops,\n    unary_ufuncs,\n)\n");
	P("from torch.testing._internal.common_utils import (\n    TestCase,\n"
	  "    instantiate_parametrized_tests,\n    parametrize,\n    run_tests,\n    "
	  "subtest,\n)\n");
	P("from torch.testing._internal.opinfo.core import ReductionOpInfo\n");
	int rc = render_ops_class(g);
	rc = rc ? rc : render_params_class(g);
	rc = rc ? rc : render_generated(g);
	return rc ? rc : fixture__file_set_text(g, VAR_PATH);
}

int fixture__render_variant_entry(struct fx_gen *g, uint32_t file)
{
	uint32_t vo = fixture__variant_op(g);
	if (file != 0 || vo == FX_NONE)
		return 0;
	const struct fx_op *o = &g->ops[vo];
	const char *dexpr, *dtruth;
	fixture__op_dtypes(vo, &dexpr, &dtruth);
	P("    BinaryUfuncInfo(\n        '%s',\n        variant_test_name='" VAR_VTN "',\n",
	  o->name);
	P("        ref=np.%s,\n        dtypes=%s,\n", o->name, dexpr);
	P("        sample_inputs_func=sample_inputs_%s,\n", o->name);
	P("        decorators=(toleranceOverride({torch.float16: tol(atol=%ue-3, rtol=0)}),),\n",
	  o->v_info);
	P("        supports_autograd=True,\n    ),\n");
	return 0;
}

/* Whether op entry (op i, with or without the variant name) is selected by `sel`. */
static bool selected(const struct fx_gen *g, uint8_t sel, uint32_t i, bool variant)
{
	const struct fx_op *o = &g->ops[i];
	switch (sel) {
	case S_ALL:
		return true;
	case S_UNARY:
		return o->kind == FX_OP_UNARY;
	case S_BINARY:
		return o->kind == FX_OP_BINARY;
	case S_REDUCTION:
		return o->kind == FX_OP_REDUCTION;
	case S_LISTED:
		return strcmp(o->name, nth_op(g, FX_OP_BINARY, 0)) == 0 ||
		       strcmp(o->name, nth_op(g, FX_OP_BINARY, 1)) == 0;
	case S_FILTERED:
		return o->kind == FX_OP_UNARY && strcmp(o->name, nth_op(g, FX_OP_UNARY, 0)) != 0;
	case S_NOVAR:
		return o->kind == FX_OP_BINARY && !variant;
	case S_ISINST:
		return o->kind == FX_OP_REDUCTION ||
		       strcmp(o->name, nth_op(g, FX_OP_UNARY, 0)) == 0;
	default:
		return false;
	}
}

/* Appends `"pre_s"` for each space-separated s of `list` (pre may be empty). */
static int append_crossed(struct buf *b, const char *pre, const char *list, bool *first)
{
	int rc = 0;
	if (!list) {
		rc = buf_appendf(b, "%s\"%s\"", *first ? "" : ",", pre);
		*first = false;
		return rc;
	}
	for (const char *s = list; !rc && *s;) {
		size_t n = strcspn(s, " ");
		rc = buf_appendf(b, "%s\"%s%s%.*s\"", *first ? "" : ",", pre, *pre ? "_" : "",
				 (int)n, s);
		*first = false;
		s += n + (s[n] == ' ');
	}
	return rc;
}

static int truth_line(struct fx_gen *g, const struct vtest *t, struct buf *b)
{
	int rc = buf_appendf(b, "{\"id\":\"" VAR_PATH "::%s::%s\",\"device\":%s,\"variants\":[",
			     t->cls, t->name, t->device ? "true" : "false");
	bool first = true;
	uint32_t vo = fixture__variant_op(g);
	for (uint32_t i = 0; !rc && t->sel != S_NONE && i < g->nops; i++) {
		if (!g->ops[i].has_info)
			continue;
		for (int v = 0; !rc && v < 1 + (i == vo); v++) {
			if (!selected(g, t->sel, i, v))
				continue;
			char pre[FX_NAME_MAX + 16];
			snprintf(pre, sizeof pre, "%s%s", g->ops[i].name, v ? "_" VAR_VTN : "");
			rc = append_crossed(b, pre, t->params, &first);
		}
	}
	if (!rc && t->sel == S_NONE && t->params)
		rc = append_crossed(b, "", t->params, &first);
	rc = rc ? rc : buf_append_str(b, "],\"dtypes\":[");
	first = true;
	if (!rc && t->dtypes)
		rc = append_crossed(b, "", t->dtypes, &first);
	return rc ? rc : buf_append_str(b, "]}\n");
}

/* The generated tests: ids only, no variants. */
static int generated_line(struct buf *b, const char *op)
{
	return buf_appendf(b,
			   "{\"id\":\"" VAR_PATH "::TestGenerated::test_%s_not_implemented\","
			   "\"device\":false,\"variants\":[],\"dtypes\":[],\"generated\":true}\n",
			   op);
}

static int write_lines(struct fx_gen *g, const char *path, const char *mode, bool tests_jsonl)
{
	FILE *f = fopen(path, mode);
	if (!f)
		return err_set_errno(ERR_IO, "fixture: cannot open %s", path);
	struct buf b;
	buf_init(&b, 1 * MIB);
	int rc = 0;
	size_t ng = sizeof generated_ops / sizeof *generated_ops;
	for (size_t i = 0; !rc && i < N_VTESTS + ng; i++) {
		const char *cls = i < N_VTESTS ? vtests[i].cls : "TestGenerated";
		if (tests_jsonl && i < N_VTESTS)
			rc = buf_appendf(
			    &b,
			    "{\"id\":\"" VAR_PATH "::%s::%s\",\"kind\":\"%s\",\"uses\":[],"
			    "\"functions\":[],\"ops\":[],\"opset\":null,\"shapes\":[]}\n",
			    cls, vtests[i].name, vtests[i].device ? "device" : "plain");
		else if (tests_jsonl)
			rc = buf_appendf(
			    &b,
			    "{\"id\":\"" VAR_PATH "::%s::test_%s_not_implemented\","
			    "\"kind\":\"plain\",\"uses\":[],\"functions\":[],\"ops\":[],"
			    "\"opset\":null,\"shapes\":[]}\n",
			    cls, generated_ops[i - N_VTESTS]);
		else if (i < N_VTESTS)
			rc = truth_line(g, &vtests[i], &b);
		else
			rc = generated_line(&b, generated_ops[i - N_VTESTS]);
	}
	if (rc)
		rc = err_set(rc, "fixture: a variants line is too long");
	else if (fwrite(b.data, 1, b.len, f) != b.len)
		rc = err_set_errno(ERR_IO, "fixture: writing %s", path);
	if (fclose(f) && !rc)
		rc = err_set_errno(ERR_IO, "fixture: closing %s", path);
	buf_finish(&b);
	return rc;
}

uint32_t fixture__variants_tests(const struct fx_gen *g)
{
	return g->shapes_all ? (uint32_t)(N_VTESTS + sizeof generated_ops / sizeof *generated_ops)
			     : 0;
}

int fixture__write_variants_truth(struct fx_gen *g, const char *dir)
{
	if (!g->shapes_all)
		return 0;
	char path[PATH_TEXT_MAX];
	snprintf(path, sizeof path, "%s/.ground_truth/variants.jsonl", dir);
	int rc = write_lines(g, path, "w", false);
	snprintf(path, sizeof path, "%s/.ground_truth/tests.jsonl", dir);
	return rc ? rc : write_lines(g, path, "a", true);
}

int fixture__write_opinfos_truth(struct fx_gen *g, const char *dir)
{
	return fixture__write_opinfo_truth(g, dir, fixture__variant_op(g), VAR_VTN);
}
