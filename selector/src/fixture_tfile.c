/* The synthetic upstream's test files, and the helper module each has under
 * torch/testing/_internal/test_helpers/. A test reaches each function it uses through one shape
 * (enum fx_via): a direct call, a helper function of the test file or of its helper module, an
 * aliased import, a name torch/__init__.py re-exports, a helper method of the test class, a
 * decorator, functools.partial, a lambda in a table, a nested function, a module-level constant
 * holding the function, or getattr with a name computed at run time. Tests may also live in a
 * mixin class the test class inherits from. Everything here runs with plain python3 against the
 * generated torch package (see tests/tools/trace_tests.py). */
#include <string.h>

#include "common/err.h"
#include "fixture_int.h"

#define P(...)                                                                                     \
	do {                                                                                       \
		if (buf_appendf(&g->text, __VA_ARGS__))                                            \
			return err_set(ERR_LIMIT, "fixture: a rendered file is too large");        \
	} while (0)

#define REF_MAX (FX_PATH_MAX + 2 * FX_NAME_MAX + 32)

int fixture__helpers_path(const struct fx_gen *g, char *out, size_t cap, uint32_t f)
{
	(void)g;
	return snprintf(out, cap, "torch/testing/_internal/test_helpers/h%u.py", f) < 0;
}

/* The name as the test file's imports make it visible (style of use k). */
static void direct_ref(const struct fx_gen *g, const struct fx_test *t, int k, char *ref)
{
	const struct fx_node *n = &g->nodes[t->uses[k]];
	switch (t->style[k]) {
	case FX_STYLE_F:
		snprintf(ref, REF_MAX, "F.%s", n->name);
		break;
	case FX_STYLE_FROM:
		snprintf(ref, REF_MAX, "%s", n->name);
		break;
	case FX_STYLE_DOTTED:
		snprintf(ref, REF_MAX, "%s.%s", g->mods[n->mod].dotted, n->name);
		break;
	default:
		snprintf(ref, REF_MAX, "torch.%s", n->name);
	}
}

/* The expression naming use k's function (or class) in the test file. */
static void via_ref(const struct fx_gen *g, const struct fx_test *t, int k, char *ref)
{
	uint32_t ni = t->uses[k];
	const struct fx_node *n = &g->nodes[ni];
	const struct fx_module *m = &g->mods[n->mod];
	int half = (int)strlen(n->name) / 2;
	switch (t->via[k]) {
	case FX_VIA_ALIAS_FROM:
		snprintf(ref, REF_MAX, "m%u_%s", n->mod, n->name);
		break;
	case FX_VIA_ALIAS_MOD:
		snprintf(ref, REF_MAX, "M%u.%s", n->mod, n->name);
		break;
	case FX_VIA_REEXPORT:
		snprintf(ref, REF_MAX, "torch.api_%u", ni);
		break;
	case FX_VIA_GETATTR:
		snprintf(ref, REF_MAX, "getattr(%s, '%.*s' + '%s')", m->functional ? "F" : "torch",
			 half, n->name, n->name + half);
		break;
	default:
		direct_ref(g, t, k, ref);
	}
}

/* "f(arg)" for a function, "C().forward(arg)" for a class. */
static int apply(struct fx_gen *g, const struct fx_test *t, int k, const char *ref, const char *arg)
{
	if (g->nodes[t->uses[k]].kind == FX_CLASS)
		P("%s().forward(%s)", ref, arg);
	else
		P("%s(%s)", ref, arg);
	return 0;
}

static int uses_direct_ref(uint8_t via)
{
	return via != FX_VIA_INTERNAL && via != FX_VIA_ALIAS_FROM && via != FX_VIA_ALIAS_MOD &&
	       via != FX_VIA_REEXPORT && via != FX_VIA_GETATTR;
}

/* The suffix of use k's helper names: test_fold_12, use 1 -> fold_12_1. */
static const char *sfx(const struct fx_test *t, int k, char *out, size_t n)
{
	snprintf(out, n, "%s_%d", t->name + 5, k);
	return out;
}

static int render_use(struct fx_gen *g, const struct fx_test *t, int k)
{
	const struct fx_node *n = &g->nodes[t->uses[k]];
	char ref[REF_MAX], s[FX_NAME_MAX + 8];
	via_ref(g, t, k, ref);
	sfx(t, k, s, sizeof(s));
	switch (t->via[k]) {
	case FX_VIA_DIRECT:
		if (n->kind == FX_CLASS)
			P("        m%d = %s()\n        y = m%d.forward(y)\n", k, ref, k);
		else
			P("        y = %s(y)\n", ref);
		return 0;
	case FX_VIA_HELPER:
		P("        y = _helper_%s(y)\n", s);
		return 0;
	case FX_VIA_INTERNAL:
		P("        y = sample_%s(y)\n", s);
		return 0;
	case FX_VIA_METHOD:
		P("        y = self._check_%s(y)\n", s);
		return 0;
	case FX_VIA_DECORATOR:
		return 0; /* the decorator's wrapper calls it */
	case FX_VIA_LAMBDA:
		P("        for _name, fn in _TABLE_%s:\n            y = fn(y)\n", s);
		return 0;
	case FX_VIA_NESTED:
		P("\n        def inner_%d(v):\n            return ", k);
		if (apply(g, t, k, ref, "v"))
			return ERR_LIMIT;
		P("\n\n        y = inner_%d(y)\n", k);
		return 0;
	case FX_VIA_PARTIAL:
		snprintf(ref, sizeof(ref), "_partial_%s", s);
		break;
	case FX_VIA_CONST:
		snprintf(ref, sizeof(ref), "_FN_%s", s);
		break;
	default:
		break;
	}
	P("        y = ");
	if (apply(g, t, k, ref, "y"))
		return ERR_LIMIT;
	P("\n");
	return 0;
}

/* The helper methods of test t (self._check_...), written before it in its class. */
static int render_methods(struct fx_gen *g, const struct fx_test *t)
{
	char ref[REF_MAX], s[FX_NAME_MAX + 8];
	for (int k = 0; k < t->nuses; k++) {
		if (t->via[k] != FX_VIA_METHOD)
			continue;
		direct_ref(g, t, k, ref);
		P("\n    def _check_%s(self, v):\n        return ", sfx(t, k, s, sizeof(s)));
		if (apply(g, t, k, ref, "v"))
			return ERR_LIMIT;
		P("\n");
	}
	return 0;
}

static int render_test(struct fx_gen *g, const struct fx_test *t)
{
	char s[FX_NAME_MAX + 8];
	if (render_methods(g, t))
		return ERR_LIMIT;
	P("\n");
	if (t->dtypes)
		P("    @dtypes(torch.float32, torch.float16)\n");
	if (t->kind == FX_TEST_OPS) {
		if (t->opset == FX_SET_LIST) {
			P("    @ops([op for op in op_db if op.name in ('%s'",
			  g->ops[t->list_ops[0]].name);
			if (t->nlist > 1)
				P(", '%s'", g->ops[t->list_ops[1]].name);
			P(")])\n");
		} else {
			P("    @ops(%s)\n", fixture__opset_name(t->opset));
		}
	}
	for (int k = 0; k < t->nuses; k++)
		if (t->via[k] == FX_VIA_DECORATOR)
			P("    @_with_%s\n", sfx(t, k, s, sizeof(s)));
	if (t->kind == FX_TEST_OPS)
		P("    def %s(self, device, dtype, op):\n", t->name);
	else if (t->kind == FX_TEST_DEVICE)
		P("    def %s(self, device%s):\n", t->name, t->dtypes ? ", dtype" : "");
	else
		P("    def %s(self):\n", t->name);
	P("        k = %u\n", t->version);
	if (t->kind == FX_TEST_PLAIN)
		P("        x = torch.randn(4, 4) * k\n");
	else
		P("        x = torch.randn(4, 4, device=device%s) * k\n",
		  t->dtypes ? ", dtype=dtype" : "");
	P("        y = x\n");
	for (int k = 0; k < t->nuses; k++)
		if (render_use(g, t, k))
			return ERR_LIMIT;
	for (int k = 0; k < t->nops; k++) {
		const struct fx_op *o = &g->ops[t->ops[k]];
		if (t->method_style)
			P("        y = y.%s(%s)\n", o->name,
			  o->kind == FX_OP_BINARY      ? "x"
			  : o->kind == FX_OP_REDUCTION ? "dim=-1"
						       : "");
		else
			P("        y = torch.%s(%s)\n", o->name,
			  o->kind == FX_OP_BINARY      ? "y, x"
			  : o->kind == FX_OP_REDUCTION ? "y, dim=-1"
						       : "y");
	}
	if (t->kind == FX_TEST_OPS) {
		P("        for sample in op.sample_inputs(device, dtype):\n");
		P("            out = op(sample.input, *sample.args, **sample.kwargs)\n");
		P("            self.assertEqual(out, op.ref(sample.input), atol=_TOL, rtol=0)\n");
	}
	P("        self.assertEqual(y.shape, y.shape, atol=_TOL, rtol=0)\n");
	return 0;
}

static int render_imports(struct fx_gen *g, const struct fx_tfile *f, uint32_t fi)
{
	char s[FX_NAME_MAX + 8];
	for (uint32_t i = 0; i < f->tests.n; i++) {
		const struct fx_test *t = &g->tests[f->tests.v[i]];
		for (int k = 0; k < t->nuses; k++) {
			const struct fx_node *n = &g->nodes[t->uses[k]];
			const char *mod = g->mods[n->mod].dotted;
			uint8_t via = t->via[k];
			if (via == FX_VIA_ALIAS_FROM)
				P("from %s import %s as m%u_%s\n", mod, n->name, n->mod, n->name);
			else if (via == FX_VIA_ALIAS_MOD)
				P("import %s as M%u\n", mod, n->mod);
			else if (via == FX_VIA_INTERNAL)
				P("from torch.testing._internal.test_helpers.h%u import "
				  "sample_%s\n",
				  fi, sfx(t, k, s, sizeof(s)));
			else if (!uses_direct_ref(via))
				continue;
			else if (t->style[k] == FX_STYLE_FROM)
				P("from %s import %s\n", mod, n->name);
			else if (t->style[k] == FX_STYLE_DOTTED)
				P("import %s\n", mod);
		}
	}
	return 0;
}

/* Module-level helpers, decorators, partials, tables and constants of the file's tests. */
static int render_module_helpers(struct fx_gen *g, const struct fx_tfile *f)
{
	char ref[REF_MAX], s[FX_NAME_MAX + 8];
	for (uint32_t i = 0; i < f->tests.n; i++) {
		const struct fx_test *t = &g->tests[f->tests.v[i]];
		for (int k = 0; k < t->nuses; k++) {
			const struct fx_node *n = &g->nodes[t->uses[k]];
			direct_ref(g, t, k, ref);
			sfx(t, k, s, sizeof(s));
			switch (t->via[k]) {
			case FX_VIA_HELPER:
				P("\n\ndef _helper_%s(v):\n    \"\"\"Shared by the tests "
				  "below.\"\"\"\n"
				  "    return ",
				  s);
				break;
			case FX_VIA_DECORATOR:
				P("\n\ndef _with_%s(fn):\n    @functools.wraps(fn)\n"
				  "    def wrapper(self, *args, **kwargs):\n        ",
				  s);
				if (apply(g, t, k, ref, "torch.randn(4, 4)"))
					return ERR_LIMIT;
				P("\n        return fn(self, *args, **kwargs)\n\n    return "
				  "wrapper\n");
				continue;
			case FX_VIA_PARTIAL:
				P("\n\n_partial_%s = functools.partial(%s, %s)\n", s, ref,
				  n->kind == FX_CLASS ? "scale=1.0" : "y=None");
				continue;
			case FX_VIA_LAMBDA:
				P("\n\n_TABLE_%s = [\n    ('%s', lambda v: ", s, n->name);
				if (apply(g, t, k, ref, "v"))
					return ERR_LIMIT;
				P("),\n]\n");
				continue;
			case FX_VIA_CONST:
				P("\n\n_FN_%s = %s\n", s, ref);
				continue;
			default:
				continue;
			}
			if (apply(g, t, k, ref, "v"))
				return ERR_LIMIT;
			P("\n");
		}
	}
	return 0;
}

static int render_class(struct fx_gen *g, const struct fx_tfile *f, uint8_t c)
{
	char cls[FX_NAME_MAX + 16];
	if (c)
		snprintf(cls, sizeof(cls), "Test%s_%u", f->stem, c);
	else
		snprintf(cls, sizeof(cls), "Test%s", f->stem);
	int mixin = 0;
	for (uint32_t i = 0; i < f->tests.n; i++) {
		const struct fx_test *t = &g->tests[f->tests.v[i]];
		if (t->cls != c || !t->inherited)
			continue;
		if (!mixin)
			P("\n\nclass _%sMixin:\n    \"\"\"Tests shared through "
			  "inheritance.\"\"\"\n",
			  cls);
		mixin = 1;
		if (render_test(g, t))
			return ERR_LIMIT;
	}
	if (mixin)
		P("\n\nclass %s(_%sMixin, TestCase):\n", cls, cls);
	else
		P("\n\nclass %s(TestCase):\n", cls);
	P("    \"\"\"%s tests.\"\"\"\n", f->device[c] ? "Device-generic" : "Plain");
	for (uint32_t i = 0; i < f->tests.n; i++) {
		const struct fx_test *t = &g->tests[f->tests.v[i]];
		if (t->cls == c && !t->inherited && render_test(g, t))
			return ERR_LIMIT;
	}
	if (f->device[c])
		P("\n\ninstantiate_device_type_tests(%s, globals())\n", cls);
	return 0;
}

int fixture__render_tfile(struct fx_gen *g, uint32_t fi)
{
	const struct fx_tfile *f = &g->tfiles[fi];
	buf_reset(&g->text);
	P("# Owner(s): [\"module: %s\"]\n", f->stem);
	P("import functools\n\nimport torch\nimport torch.nn.functional as F\n");
	P("from torch.testing._internal.common_utils import TestCase, run_tests\n");
	P("from torch.testing._internal.common_device_type import (\n"
	  "    dtypes,\n    instantiate_device_type_tests,\n    ops,\n)\n");
	P("from torch.testing._internal.common_methods_invocations import (\n"
	  "    binary_ufuncs,\n    op_db,\n    reduction_ops,\n    unary_ufuncs,\n)\n");
	if (render_imports(g, f, fi))
		return ERR_LIMIT;
	P("\n_TOL = 1e-05 * %u\n", f->version);
	if (render_module_helpers(g, f))
		return ERR_LIMIT;
	for (uint8_t c = 0; c < f->nclasses; c++)
		if (render_class(g, f, c))
			return ERR_LIMIT;
	P("\n\nif __name__ == \"__main__\":\n    run_tests()\n");
	return 0;
}

/* torch/testing/_internal/test_helpers/h<fi>.py: the sample_* helpers test file fi imports. */
int fixture__render_helpers(struct fx_gen *g, uint32_t fi)
{
	const struct fx_tfile *f = &g->tfiles[fi];
	char s[FX_NAME_MAX + 8], ref[REF_MAX];
	buf_reset(&g->text);
	P("\"\"\"Helpers of %s (synthetic).\"\"\"\nimport torch\n", f->path);
	for (uint32_t i = 0; i < f->tests.n; i++) {
		const struct fx_test *t = &g->tests[f->tests.v[i]];
		for (int k = 0; k < t->nuses; k++) {
			const struct fx_node *n = &g->nodes[t->uses[k]];
			if (t->via[k] != FX_VIA_INTERNAL)
				continue;
			P("from %s import %s\n", g->mods[n->mod].dotted, n->name);
		}
	}
	for (uint32_t i = 0; i < f->tests.n; i++) {
		const struct fx_test *t = &g->tests[f->tests.v[i]];
		for (int k = 0; k < t->nuses; k++) {
			if (t->via[k] != FX_VIA_INTERNAL)
				continue;
			snprintf(ref, sizeof(ref), "%s", g->nodes[t->uses[k]].name);
			P("\n\ndef sample_%s(v):\n    return ", sfx(t, k, s, sizeof(s)));
			if (apply(g, t, k, ref, "v"))
				return ERR_LIMIT;
			P("\n");
		}
	}
	return 0;
}

int fixture__write_tfile(struct fx_gen *g, uint32_t fi)
{
	char path[FX_PATH_MAX];
	int rc = fixture__render_tfile(g, fi);
	rc = rc ? rc : fixture__file_set_text(g, g->tfiles[fi].path);
	if (rc || !g->shapes_all)
		return rc;
	fixture__helpers_path(g, path, sizeof(path), fi);
	rc = fixture__render_helpers(g, fi);
	return rc ? rc : fixture__file_set_text(g, path);
}
