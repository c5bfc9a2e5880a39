/* Golden checks of the Python scanner on files written in PyTorch's style (a device-generic
 * test file, an op database, a decompositions file), the normalization of the body and module
 * hashes, the line lookups, the limits, and a large generated file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "selector/scan.h"

static struct scan_file *load(const char *name, const char *module)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/python/%s", SELECTOR_TEST_FIXTURES, name);
	char *data = NULL;
	size_t len = 0;
	cr_assert_eq(fs_read_file(&data, &len, path, PYTHON_FILE_MAX), 0, "%s", err_last());
	struct scan_file *f = NULL;
	cr_assert_eq(selector_scan(&f, name, module, data, len), 0, "%s", err_last());
	free(data);
	cr_assert_eq(f->n_warnings, 0, "%s: %s", name, f->n_warnings ? f->warnings[0].message : "");
	return f;
}

static struct scan_file *text(const char *s)
{
	struct scan_file *f = NULL;
	cr_assert_eq(selector_scan(&f, "t.py", "t", s, strlen(s)), 0, "%s", err_last());
	return f;
}

static char *joined_uses(const struct scan_function *fn)
{
	static char buf[2048];
	buf[0] = '\0';
	for (size_t k = 0; k < fn->n_uses; k++) {
		if (k)
			strcat(buf, " ");
		strncat(buf, fn->uses[k], sizeof(buf) - strlen(buf) - 2);
	}
	return buf;
}

Test(scan_golden, test_file_in_pytorch_style)
{
	struct scan_file *f = load("test_style_ops.py", "test_style_ops");
	cr_assert_eq(f->n_classes, 3);
	cr_assert_str_eq(f->classes[0].name, "TestUnaryStyle");
	cr_assert_eq(f->classes[0].first_line, 23);
	cr_assert_eq(f->classes[0].last_line, 49);
	cr_assert_str_eq(f->classes[0].bases[0].value, "TestCase");
	cr_assert_str_eq(f->classes[2].qualname, "TestParam.Inner");
	cr_assert_eq(f->n_functions, 7);
	const struct scan_function *r = &f->functions[0];
	cr_assert_str_eq(r->qualname, "TestUnaryStyle.test_reference");
	cr_assert_eq(r->deco_line, 26);
	cr_assert_eq(r->first_line, 27);
	cr_assert_eq(r->last_line, 30);
	cr_assert_str_eq(r->decorators[0].name, "ops");
	cr_assert_str_eq(r->decorators[0].argv[0].value, "op_db");
	cr_assert_str_eq(joined_uses(r), ".args .assertEqual .input .sample_inputs torch.mm "
					 "torch.testing._internal.common_device_type.ops");
	const struct scan_function *s = &f->functions[1];
	cr_assert_eq(s->decorators[0].argc, 2);
	cr_assert_eq(s->decorators[0].argv[0].kind, SCAN_ARG_OTHER);
	cr_assert_str_eq(s->decorators[0].argv[1].keyword, "dtypes");
	cr_assert_str_eq(joined_uses(s),
			 ".add .assertTrue .sum torch.nn.functional.gelu torch.ones "
			 "torch.testing._internal.common_device_type.ops");
	const struct scan_function *d = &f->functions[2];
	cr_assert_str_eq(d->decorators[0].args, "torch.float16, torch.float32");
	cr_assert_str_eq(joined_uses(d), "torch.nn.functional.softmax torch.randn "
					 "torch.testing._internal.common_device_type.dtypes");
	const struct scan_function *a = &f->functions[3];
	cr_assert(a->is_async);
	cr_assert_str_eq(a->decorators[0].name, "onlyCUDA");
	cr_assert(!a->decorators[0].called);
	cr_assert_str_eq(joined_uses(&f->functions[4]),
			 "functools.partial torch.nn.functional.relu");
	const struct scan_function *p = &f->functions[5];
	cr_assert_str_eq(p->decorators[1].argv[0].value, "y");
	cr_assert_str_eq(p->decorators[1].argv[1].text, "[\"a\", \"b\"]");
	cr_assert_eq(f->functions[6].class_index, 2);
	cr_assert_eq(f->n_instantiates, 2);
	cr_assert_eq(f->instantiates[0].kind, SCAN_INSTANTIATE_DEVICE_TYPE);
	cr_assert_str_eq(f->instantiates[0].class_name, "TestUnaryStyle");
	cr_assert_str_eq(f->instantiates[0].argv[2].keyword, "only_for");
	cr_assert_eq(f->instantiates[1].kind, SCAN_INSTANTIATE_PARAMETRIZED);
	cr_assert_str_eq(f->instantiates[1].class_name, "TestParam");
	cr_assert_eq(f->n_imports, 13);
	cr_assert_str_eq(f->imports[3].local, "F");
	cr_assert_str_eq(f->imports[3].target, "torch.nn.functional");
	cr_assert_eq(selector_scan_function_at(f, 26), 0, "a decorator line maps to its def");
	cr_assert_eq(selector_scan_function_at(f, 24), -1);
	cr_assert_eq(selector_scan_class_at(f, 59), 2);
	scan_file_destroy(f);
}

Test(scan_golden, op_database)
{
	struct scan_file *f = load("opdb_style.py", "torch.testing._internal.opdb_style");
	static const struct {
		const char *kind, *name, *aten, *variant;
		uint32_t first, last;
	} want[] = {
		{ "UnaryUfuncInfo", "abs", NULL, NULL, 19, 23 },
		{ "BinaryUfuncInfo", "add", NULL, NULL, 24, 28 },
		{ "OpInfo", "mm", "mm", NULL, 29, 33 },
		{ "ReductionOpInfo", "sum", NULL, "dim", 34, 34 },
		{ "OpInfo", "nn.functional.gelu", "gelu", NULL, 35, 36 },
		{ "PythonRefInfo", "_refs.add", NULL, NULL, 37, 37 },
	};
	cr_assert_eq(f->n_opinfos, 6,
		     "DecorateInfo, class lines and nameless calls are no entries");
	for (size_t k = 0; k < 6; k++) {
		const struct scan_opinfo *o = &f->opinfos[k];
		cr_assert_str_eq(o->kind, want[k].kind);
		cr_assert_str_eq(o->name, want[k].name);
		cr_assert_eq(o->aten_name == NULL, want[k].aten == NULL);
		if (want[k].aten)
			cr_assert_str_eq(o->aten_name, want[k].aten);
		cr_assert_eq(o->variant_test_name == NULL, want[k].variant == NULL);
		cr_assert_eq(o->first_line, want[k].first, "%s", o->name);
		cr_assert_eq(o->last_line, want[k].last, "%s", o->name);
	}
	cr_assert_eq(selector_scan_opinfo_at(f, 26), 1);
	cr_assert_eq(selector_scan_opinfo_at(f, 18), -1);
	scan_file_destroy(f);
}

Test(scan_golden, decompositions)
{
	struct scan_file *f = load("decomp_style.py", "torch._decomp.decompositions");
	cr_assert_eq(f->n_functions, 4);
	cr_assert_eq(f->functions[0].n_registers, 1);
	cr_assert_str_eq(f->functions[0].registers[0], "softmax");
	cr_assert_eq(f->functions[1].n_registers, 2);
	cr_assert_str_eq(f->functions[1].registers[0], "gelu");
	cr_assert_str_eq(f->functions[1].registers[1], "gelu_backward.default");
	cr_assert_str_eq(f->functions[2].registers[0], "add.Tensor");
	cr_assert_str_eq(f->functions[3].registers[0], "mm");
	cr_assert_str_eq(joined_uses(&f->functions[1]),
			 "torch._decomp._refs.gelu torch._decomp.register_decomposition "
			 "torch._prims_common.ELEMENTWISE");
	cr_assert_str_eq(joined_uses(&f->functions[2]),
			 "torch._decomp.lowering.register_lowering torch._ops.ops.add");
	scan_file_destroy(f);
}

static uint64_t hash_of(const char *s, const char *fname)
{
	struct scan_file *f = text(s);
	uint64_t h = 0;
	for (size_t k = 0; k < f->n_functions; k++)
		if (strcmp(f->functions[k].name, fname) == 0)
			h = f->functions[k].body_hash;
	scan_file_destroy(f);
	cr_assert_neq(h, 0, "no function %s", fname);
	return h;
}

static uint64_t class_hash_of(const char *s)
{
	struct scan_file *f = text(s);
	cr_assert_geq(f->n_classes, 1);
	uint64_t h = f->classes[0].body_hash;
	scan_file_destroy(f);
	return h;
}

static uint64_t module_hash_of(const char *s)
{
	struct scan_file *f = text(s);
	uint64_t h = f->module_hash;
	scan_file_destroy(f);
	return h;
}

Test(scan_hash, normalization)
{
	const char *base = "import torch\n\ndef f(x):\n    y = x + 1\n    return y\n";
	uint64_t h = hash_of(base, "f");
	cr_assert_eq(h, hash_of("import torch\n\ndef f(x):  # c\n    # note\n\n    y = x + 1   \n"
				"    return y\n",
				"f"));
	cr_assert_eq(
	    h, hash_of("import torch\r\n\r\ndef f(x):\r\n    y = x + 1\r\n    return y\r\n", "f"));
	cr_assert_eq(h,
		     hash_of("class C:\n    def f(x):\n        y = x + 1\n        return y\n", "f"),
		     "re-indenting the whole def keeps the hash");
	cr_assert_eq(h, hash_of("def f(x):\n    y = x+1\n    return y\n", "f"), "spacing");
	cr_assert_eq(hash_of("def f(x):\n    return g(x, 1)\n", "f"),
		     hash_of("def f(x):\n    return g(x,\n             1)  # two lines\n", "f"),
		     "a line break inside brackets");
	cr_assert_eq(h, hash_of("def f(x):\n  y = x + 1\n  return y\n", "f"),
		     "an indentation of 2 is the same program as one of 4");
	cr_assert_eq(
	    h, hash_of("def f(x):\n    \"\"\"Adds one.\"\"\"\n    y = x + 1\n    return y\n", "f"),
	    "the docstring is no code");
	cr_assert_neq(h, hash_of("def f(x):\n    y = x + 2\n    return y\n", "f"));
	cr_assert_neq(h, hash_of("def f(x):\n    y = x + 1\n    if y:\n        return y\n", "f"));
	cr_assert_neq(h, hash_of("@dec\ndef f(x):\n    y = x + 1\n    return y\n", "f"));
	cr_assert_neq(hash_of("def f():\n    s = '''a\n  b'''\n", "f"),
		      hash_of("def f():\n    s = '''a\nb'''\n", "f"), "string contents count");
}

Test(scan_hash, module_hash_excludes_function_bodies)
{
	uint64_t m = module_hash_of("import torch\nX = 1\n@dec\ndef f():\n    return 1\n");
	cr_assert_eq(m, module_hash_of("import torch\nX = 1\n@dec(2)\ndef f(a):\n    return 2\n"));
	cr_assert_eq(
	    m, module_hash_of("import torch\n# c\nX = 1   \n\n@dec\ndef f():\n    return 1\n"));
	cr_assert_neq(m, module_hash_of("import torch, os\nX = 1\n@dec\ndef f():\n    return 1\n"));
	cr_assert_eq(m,
		     module_hash_of(
			 "'''The module.'''\nimport torch\nX = 1\n@dec\ndef f():\n    return 1\n"),
		     "the module's docstring is no code");
	cr_assert_neq(m,
		      module_hash_of("import torch\n'''Not a docstring.'''\nX = 1\n@dec\ndef f():\n"
				     "    return 1\n"),
		      "a string statement after the first is code");
	cr_assert_neq(m, module_hash_of("import torch\nX = 2\n@dec\ndef f():\n    return 1\n"));
	/* a class's own statements are its own hash's, not the module's */
	uint64_t c = module_hash_of("class T:\n    attr = 1\n    def t(self):\n        pass\n");
	cr_assert_eq(c, module_hash_of("class T:\n    attr = 2\n    def t(self):\n        pass\n"));
	uint64_t k = class_hash_of("class T:\n    attr = 1\n    def t(self):\n        pass\n");
	cr_assert_neq(k, class_hash_of("class T:\n    attr = 2\n    def t(self):\n        pass\n"));
	cr_assert_neq(k,
		      class_hash_of("class T(B):\n    attr = 1\n    def t(self):\n        pass\n"));
	cr_assert_eq(k, class_hash_of("class T:\n    attr = 1\n    def t(self):\n        x = 1\n"),
		     "a method's body is the method's");
	cr_assert_eq(
	    k,
	    class_hash_of(
		"class T:\n    '''Doc.'''\n    attr = 1\n    def t(self):\n        pass\n"),
	    "a class's docstring is no code");
}

Test(scan_limits, arguments_and_size)
{
	struct scan_file *f = NULL;
	cr_assert_eq(selector_scan(NULL, "x", NULL, "", 0), ERR_INVAL);
	cr_assert_eq(selector_scan(&f, "big.py", NULL, "", PYTHON_FILE_MAX + 1), ERR_LIMIT);
	cr_assert(strstr(err_last(), "PYTHON_FILE_MAX") != NULL);
	scan_file_destroy(NULL);
}

Test(scan_limits, deep_nesting_does_not_crash)
{
	struct buf b;
	buf_init(&b, 4 * MIB);
	for (int k = 0; k < 300; k++)
		cr_assert_eq(buf_appendf(&b, "%*sdef f%d():\n", k, "", k), 0);
	for (int k = 0; k < 500; k++)
		cr_assert_eq(buf_append_str(&b, "x = ("), 0);
	cr_assert_eq(buf_append_str(&b, "\ns = f'{f\"{f'{1}'}\"}'\n"), 0);
	struct scan_file *f = text(buf_str(&b));
	cr_assert_eq(f->n_functions, 300, "defs past the scope limit are kept, with a warning");
	cr_assert_gt(f->n_warnings, 0);
	scan_file_destroy(f);
	buf_finish(&b);
}

/* 100,000 lines of a generated test file: every def found, with the right last line. */
Test(scan_large, hundred_thousand_lines)
{
	struct buf b;
	buf_init(&b, 8 * MIB);
	cr_assert_eq(buf_append_str(&b, "import torch\nclass TestBig(TestCase):\n"), 0);
	int defs = 0;
	while (defs < 20000) {
		cr_assert_eq(
		    buf_appendf(&b,
				"    @dtypes(torch.float32)\n    def test_%d(self, device):\n"
				"        x = torch.ones(%d)\n        # comment\n",
				defs, defs),
		    0);
		defs++;
	}
	struct scan_file *f = text(buf_str(&b));
	cr_assert_eq(f->n_functions, 20000);
	cr_assert_eq(f->n_lines, 2 + 20000 * 4);
	cr_assert_eq(f->functions[19999].last_line, f->n_lines - 1);
	cr_assert_str_eq(f->functions[123].uses[0], "torch.ones");
	scan_file_destroy(f);
	buf_finish(&b);
}

static char *joined(const char *const *uses, size_t n)
{
	static char buf[2048];
	buf[0] = '\0';
	for (size_t k = 0; k < n; k++) {
		if (k)
			strcat(buf, " ");
		strncat(buf, uses[k], sizeof(buf) - strlen(buf) - 2);
	}
	return buf;
}

static const struct scan_function *fn_named(const struct scan_file *f, const char *q)
{
	for (size_t i = 0; i < f->n_functions; i++)
		if (strcmp(f->functions[i].qualname, q) == 0)
			return &f->functions[i];
	cr_assert_fail("no function %s", q);
	return NULL;
}

/* Globals hold the names their value uses (and those of the statements that extend them);
 * decorators are uses; computed names are marked with '!' (what impact_local.c and
 * impact_tests.c follow and widen on). */
Test(scan_golden, globals_decorators_and_computed_names)
{
	struct scan_file *f = load("37_globals_and_helpers.py", "test_globals");
	cr_assert_eq(f->n_globals, 13);
	cr_assert_str_eq(f->globals[0].name, "_FNS");
	cr_assert_str_eq(joined(f->globals[0].uses, f->globals[0].n_uses),
			 "_FNS.append torch.abs torch.cos torch.special.erf");
	cr_assert_str_eq(f->globals[1].name, "OPS");
	cr_assert_str_eq(joined(f->globals[1].uses, f->globals[1].n_uses),
			 "OPS torch.exp torch.neg torch.sin");
	cr_assert_str_eq(f->globals[2].name, "_PART");
	cr_assert_str_eq(joined(f->globals[2].uses, f->globals[2].n_uses),
			 "functools.partial torch.add");
	cr_assert_eq(f->globals[9].class_index, 0);
	cr_assert_str_eq(joined(f->globals[9].uses, f->globals[9].n_uses), "torch.tan");
	cr_assert_str_eq(joined_uses(fn_named(f, "_helper")), "_FNS _inner");
	/* getattr with a literal name is followed; with a computed one, widened to its root */
	cr_assert_str_eq(joined_uses(fn_named(f, "_inner")),
			 "!torch.special torch.special torch.special.erf");
	/* exec: anything; the wrapper's uses are also the decorator's (nested) */
	cr_assert_str_eq(joined_uses(fn_named(f, "_deco.wrapper")), "!* functools.wraps");
	cr_assert(strstr(joined_uses(fn_named(f, "_deco")), "!* "));
	/* import_module with a literal: under that module; __import__ of a computed one: anything
	 */
	cr_assert_str_eq(joined_uses(fn_named(f, "Helpers._check")),
			 "!* !torch.linalg .name .norm importlib.import_module");
	scan_file_destroy(f);
	/* a decorator of the file is a use of the function it decorates */
	struct scan_file *t = text("def _d(f):\n    return f\n@_d\n@torch.no_grad()\ndef g():\n"
				   "    pass\nimport torch\n");
	cr_assert_str_eq(joined_uses(&t->functions[1]), "_d torch.no_grad");
	scan_file_destroy(t);
}
