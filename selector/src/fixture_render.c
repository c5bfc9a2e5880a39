/* The synthetic upstream's model rendered as text: Python source modules, torch/__init__.py,
 * test files, native_functions.yaml, the C++ kernels, the decompositions, the op database and
 * the spec file. Every edit of the model changes a literal that a body really uses (never only a
 * comment), so that a normalized body hash sees it. Each renderer resets g->text first. */
#include <string.h>

#include "common/err.h"
#include "fixture_int.h"

#define P(...)                                                                                     \
	do {                                                                                       \
		if (buf_appendf(&g->text, __VA_ARGS__))                                            \
			return err_set(ERR_LIMIT, "fixture: a rendered file is too large");        \
	} while (0)

const char *const fixture__def_names[] = { "linalg",  "special", "fft",       "signal",
					   "sparse",  "nested",  "_masked",   "nn",
					   "foreach", "refs",    "quantized", "random" };
const size_t fixture__def_names_count = sizeof(fixture__def_names) / sizeof(fixture__def_names[0]);

static const char *const cpp_names[] = { "BinaryOps",    "UnaryOps",      "ReduceOps",
					 "Activation",   "LinearAlgebra", "TensorShape",
					 "PointwiseOps", "Sorting",       "Normalization",
					 "Loss",         "TensorCompare", "SoftMax" };
#define NCPP (sizeof(cpp_names) / sizeof(cpp_names[0]))

int fixture__cpp_path(char *out, size_t cap, uint32_t file)
{
	if (file < NCPP)
		return snprintf(out, cap, "aten/src/ATen/native/%s.cpp", cpp_names[file]) < 0;
	return snprintf(out, cap, "aten/src/ATen/native/%s%u.cpp", cpp_names[file % NCPP],
			(unsigned)(file / NCPP)) < 0;
}

int fixture__opinfo_path(const struct fx_gen *g, char *out, size_t cap, uint32_t file)
{
	(void)g;
	if (file == 0)
		snprintf(out, cap, "torch/testing/_internal/common_methods_invocations.py");
	else
		snprintf(out, cap, "torch/testing/_internal/opinfo/definitions/%s.py",
			 fixture__def_names[(file - 1) % fixture__def_names_count]);
	return 0;
}

static const char *op_args(uint8_t kind)
{
	switch (kind) {
	case FX_OP_BINARY:
		return "t, t";
	case FX_OP_REDUCTION:
		return "t, dim=-1, keepdim=True";
	default:
		return "t";
	}
}

static const char *node_mod_dotted(const struct fx_gen *g, uint32_t n)
{
	return g->mods[g->nodes[n].mod].dotted;
}

static int render_body(struct fx_gen *g, const struct fx_node *n, const char *ind)
{
	P("%sk = %u\n", ind, n->version);
	P("%st = x * k\n", ind);
	for (int c = 0; c < n->ncalls; c++)
		P("%st = %s(t)\n", ind, g->nodes[n->calls[c]].name);
	if (n->op != FX_NONE)
		P("%st = torch.%s(%s)\n", ind, g->ops[n->op].name, op_args(g->ops[n->op].kind));
	return 0;
}

/* True when call c of node i is also an earlier call of the module: one import line each. */
static int imported_before(const struct fx_gen *g, const struct fx_module *m, uint32_t i, int c)
{
	uint32_t callee = g->nodes[i].calls[c];
	for (uint32_t j = m->first; j <= i; j++) {
		const struct fx_node *n = &g->nodes[j];
		int upto = j == i ? c : n->kind == FX_CLASS ? 0 : n->ncalls;
		for (int k = 0; k < upto; k++)
			if (n->calls[k] == callee)
				return 1;
	}
	return 0;
}

int fixture__render_module(struct fx_gen *g, uint32_t mi)
{
	const struct fx_module *m = &g->mods[mi];
	buf_reset(&g->text);
	P("\"\"\"%s: a synthetic module of the generated upstream.\"\"\"\n", m->dotted);
	P("import torch\n");
	for (uint32_t i = m->first; i < m->first + m->n; i++) {
		const struct fx_node *n = &g->nodes[i];
		if (n->kind == FX_CLASS)
			continue;
		for (int c = 0; c < n->ncalls; c++)
			if (!imported_before(g, m, i, c))
				P("from %s import %s\n", node_mod_dotted(g, n->calls[c]),
				  g->nodes[n->calls[c]].name);
	}
	P("\n_MODULE_REV = %u\n", m->version);
	for (uint32_t i = m->first; i < m->first + m->n; i++) {
		const struct fx_node *n = &g->nodes[i];
		if (n->kind == FX_FUNC) {
			P("\n\ndef %s(x, y=None):\n", n->name);
			P("    \"\"\"%s, level %u.\"\"\"\n", n->name, n->level);
			if (render_body(g, n, "    "))
				return ERR_LIMIT;
			P("    return t\n");
		} else if (n->kind == FX_CLASS) {
			P("\n\nclass %s:\n    \"\"\"A stateful helper.\"\"\"\n", n->name);
		} else if (!strcmp(n->name, "__init__")) {
			P("\n    def __init__(self, scale=1.0):\n");
			P("        self.scale = scale * %u\n", n->version);
		} else {
			P("\n    def %s(self, x):\n", n->name);
			if (render_body(g, n, "        "))
				return ERR_LIMIT;
			P("        return t * self.scale\n");
		}
	}
	return 0;
}

int fixture__render_init(struct fx_gen *g)
{
	buf_reset(&g->text);
	P("\"\"\"torch: the package. Imports nearly everything (synthetic).\"\"\"\n");
	P("import os\nimport sys\n\n_REV = %u\n\n", g->v_init);
	P("from torch._C._VariableFunctions import *  # noqa: F403 (native ops: torch.add, ...)\n");
	P("from torch import nn as nn\nfrom torch.nn import functional as functional\n");
	for (uint32_t mi = 1; mi < g->nmods; mi++) {
		const struct fx_module *m = &g->mods[mi];
		if (m->orphan || m->deleted)
			continue;
		P("from %s import ", m->dotted);
		int first = 1;
		for (uint32_t i = m->first; i < m->first + m->n; i++)
			if (g->nodes[i].kind != FX_METHOD) {
				P("%s%s", first ? "" : ", ", g->nodes[i].name);
				first = 0;
			}
		P("\n");
	}
	return 0;
}

static int render_use(struct fx_gen *g, const struct fx_test *t, int k)
{
	const struct fx_node *n = &g->nodes[t->uses[k]];
	char ref[FX_PATH_MAX + FX_NAME_MAX + 2];
	switch (t->style[k]) {
	case FX_STYLE_F:
		snprintf(ref, sizeof(ref), "F.%s", n->name);
		break;
	case FX_STYLE_FROM:
		snprintf(ref, sizeof(ref), "%s", n->name);
		break;
	case FX_STYLE_DOTTED:
		snprintf(ref, sizeof(ref), "%s.%s", g->mods[n->mod].dotted, n->name);
		break;
	default:
		snprintf(ref, sizeof(ref), "torch.%s", n->name);
	}
	if (n->kind == FX_CLASS)
		P("        m%d = %s()\n        y = m%d.forward(y)\n", k, ref, k);
	else
		P("        y = %s(y)\n", ref);
	return 0;
}

static int render_test(struct fx_gen *g, const struct fx_test *t)
{
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
		P("    def %s(self, device, dtype, op):\n", t->name);
	} else if (t->kind == FX_TEST_DEVICE) {
		P("    def %s(self, device%s):\n", t->name, t->dtypes ? ", dtype" : "");
	} else {
		P("    def %s(self):\n", t->name);
	}
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

static int render_test_imports(struct fx_gen *g, const struct fx_tfile *f)
{
	for (uint32_t i = 0; i < f->tests.n; i++) {
		const struct fx_test *t = &g->tests[f->tests.v[i]];
		for (int k = 0; k < t->nuses; k++) {
			const struct fx_node *n = &g->nodes[t->uses[k]];
			if (t->style[k] == FX_STYLE_FROM)
				P("from %s import %s\n", g->mods[n->mod].dotted, n->name);
			else if (t->style[k] == FX_STYLE_DOTTED)
				P("import %s\n", g->mods[n->mod].dotted);
		}
	}
	return 0;
}

int fixture__render_tfile(struct fx_gen *g, uint32_t fi)
{
	const struct fx_tfile *f = &g->tfiles[fi];
	buf_reset(&g->text);
	P("# Owner(s): [\"module: %s\"]\n", f->stem);
	P("import torch\nimport torch.nn.functional as F\n");
	P("from torch.testing._internal.common_utils import TestCase, run_tests\n");
	P("from torch.testing._internal.common_device_type import (\n"
	  "    dtypes,\n    instantiate_device_type_tests,\n    ops,\n)\n");
	P("from torch.testing._internal.common_methods_invocations import (\n"
	  "    binary_ufuncs,\n    op_db,\n    reduction_ops,\n    unary_ufuncs,\n)\n");
	if (render_test_imports(g, f))
		return ERR_LIMIT;
	P("\n_TOL = 1e-05 * %u\n", f->version);
	for (uint8_t c = 0; c < f->nclasses; c++) {
		if (c)
			P("\n\nclass Test%s_%u(TestCase):\n", f->stem, c);
		else
			P("\n\nclass Test%s(TestCase):\n", f->stem);
		P("    \"\"\"%s tests.\"\"\"\n", f->device[c] ? "Device-generic" : "Plain");
		for (uint32_t i = 0; i < f->tests.n; i++) {
			const struct fx_test *t = &g->tests[f->tests.v[i]];
			if (t->cls == c && render_test(g, t))
				return ERR_LIMIT;
		}
		if (f->device[c]) {
			if (c)
				P("\n\ninstantiate_device_type_tests(Test%s_%u, globals())\n",
				  f->stem, c);
			else
				P("\n\ninstantiate_device_type_tests(Test%s, globals())\n",
				  f->stem);
		}
	}
	P("\n\nif __name__ == \"__main__\":\n    run_tests()\n");
	return 0;
}

int fixture__render_yaml(struct fx_gen *g)
{
	buf_reset(&g->text);
	P("# Operators of the generated upstream: one entry per native function.\n\n");
	P("- func: empty.memory_format(SymInt[] size, *, ScalarType? dtype=None) -> Tensor\n"
	  "  dispatch:\n    CPU: empty_cpu\n");
	for (uint32_t i = 0; i < g->nops; i++) {
		const struct fx_op *o = &g->ops[i];
		const char *args = o->kind == FX_OP_BINARY ? "Tensor self, Tensor other"
				   : o->kind == FX_OP_REDUCTION
				       ? "Tensor self, int dim=-1, bool keepdim=False"
				       : "Tensor self";
		P("\n- func: %s.Tensor(%s, *, int rev=%u) -> Tensor\n", o->name, args, o->v_yaml);
		P("  variants: function, method\n");
		P("  dispatch:\n    CPU, CUDA: %s_kernel\n", o->name);
		if (o->kind == FX_OP_UNARY || o->kind == FX_OP_BINARY)
			P("  tags: pointwise\n");
	}
	return 0;
}

int fixture__render_cpp(struct fx_gen *g, uint32_t file)
{
	char path[FX_PATH_MAX];
	fixture__cpp_path(path, sizeof(path), file);
	buf_reset(&g->text);
	P("// %s: CPU and CUDA kernels of the generated upstream.\n", path);
	P("#include <ATen/ATen.h>\n#include <ATen/native/DispatchStub.h>\n\nnamespace at::native "
	  "{\n");
	for (uint32_t i = 0; i < g->nops; i++) {
		const struct fx_op *o = &g->ops[i];
		if (o->cpp_file != file)
			continue;
		P("\nTensor %s_kernel(const Tensor& self) {\n", o->name);
		P("  const int64_t rev = %u;\n", o->v_cpp);
		P("  auto out = at::empty_like(self);\n");
		P("  for (int64_t i = 0; i < self.numel(); i++) {\n");
		P("    out.data_ptr<float>()[i] = self.data_ptr<float>()[i] * rev;\n  }\n");
		P("  return out;\n}\n");
	}
	P("\n} // namespace at::native\n");
	return 0;
}

int fixture__render_decomp(struct fx_gen *g)
{
	buf_reset(&g->text);
	P("\"\"\"Decompositions of aten ops into simpler ones (synthetic).\"\"\"\n");
	P("import torch\nfrom torch._decomp import register_decomposition\n\n");
	P("aten = torch._ops.ops.aten\n");
	for (uint32_t i = 0; i < g->nops; i++) {
		const struct fx_op *o = &g->ops[i];
		if (!o->has_decomp)
			continue;
		P("\n\n@register_decomposition(aten.%s)\n", o->name);
		P("def %s_decomp(self, *args, **kwargs):\n", o->name);
		P("    rev = %u\n    return self * rev\n", o->v_decomp);
	}
	return 0;
}

static const char *info_class(uint8_t kind)
{
	static const char *const n[] = { "OpInfo", "UnaryUfuncInfo", "BinaryUfuncInfo",
					 "ReductionOpInfo" };
	return n[kind & 3];
}

int fixture__render_opinfo(struct fx_gen *g, uint32_t file)
{
	buf_reset(&g->text);
	P("\"\"\"The op database%s (synthetic).\"\"\"\n", file ? " (one family)" : "");
	P("from typing import List\n\nimport numpy as np\nimport torch\n");
	P("from torch.testing._internal.common_device_type import tol, toleranceOverride\n");
	P("from torch.testing._internal.common_dtype import floating_types\n");
	P("from torch.testing._internal.opinfo.core import (\n    BinaryUfuncInfo,\n    OpInfo,\n"
	  "    ReductionOpInfo,\n    UnaryUfuncInfo,\n)\n");
	if (file == 0)
		P("from torch.testing._internal.opinfo.definitions import op_db as "
		  "_definitions_op_db\n");
	P("\nop_db: List[OpInfo] = [\n");
	for (uint32_t i = 0; i < g->nops; i++) {
		const struct fx_op *o = &g->ops[i];
		if (!o->has_info || o->info_file != file)
			continue;
		P("    %s(\n        '%s',\n", info_class(o->kind), o->name);
		P("        ref=np.%s,\n        dtypes=floating_types(),\n", o->name);
		P("        decorators=(toleranceOverride({torch.float16: tol(atol=%ue-3, "
		  "rtol=0)}),),\n",
		  o->v_info);
		P("        supports_autograd=True,\n    ),\n");
	}
	P("]\n");
	if (file == 0) {
		P("op_db += _definitions_op_db\n\n");
		P("unary_ufuncs = [op for op in op_db if isinstance(op, UnaryUfuncInfo)]\n");
		P("binary_ufuncs = [op for op in op_db if isinstance(op, BinaryUfuncInfo)]\n");
		P("reduction_ops = [op for op in op_db if isinstance(op, ReductionOpInfo)]\n");
	}
	return 0;
}

/* torch-spyre's YAML (docs/SPYRE.md section 5), naming tests of every tenth test file. */
int fixture__render_specs(struct fx_gen *g)
{
	buf_reset(&g->text);
	P("# Test specs for the generated upstream, in torch-spyre's format.\n");
	P("test_suite_config:\n  labels: [regression, trunk]\n  files:\n");
	for (uint32_t fi = 0; fi < g->ntfiles; fi += 10) {
		const struct fx_tfile *f = &g->tfiles[fi];
		P("    - path: ${TORCH_ROOT}/%s\n", f->path);
		P("      unlisted_test_mode: %s\n", fi % 20 ? "skip" : "mandatory_success");
		P("      tests:\n");
		for (uint32_t i = 0; i < f->tests.n && i < 6; i++) {
			const struct fx_test *t = &g->tests[f->tests.v[i]];
			if (t->cls)
				P("        - names: [Test%s_%u::%s]\n", f->stem, t->cls, t->name);
			else
				P("        - names: [Test%s::%s]\n", f->stem, t->name);
			P("          mode: %s\n", i == 3 ? "xfail" : "mandatory_success");
		}
		P("        - names: [\"test_pad_.*\"]\n          mode: skip\n");
	}
	P("  global:\n    supported_dtypes:\n");
	P("      - {name: float16, precision: {atol: 0.1, rtol: 0.1}}\n");
	P("      - {name: float32, precision: {atol: 0.001, rtol: 0.001}}\n");
	P("    supported_ops: [");
	for (uint32_t i = 0; i < g->nops && i < 40; i++)
		P("%s%s", i ? ", " : "", g->ops[i].name);
	P("]\n    input_config: {seed: 123}\n");
	return 0;
}
