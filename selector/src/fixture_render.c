/* The synthetic upstream's model rendered as text: Python source modules, torch/__init__.py,
 * test files, native_functions.yaml, the C++ kernels, the decompositions, the op database and
 * the spec file. Every edit of the model changes a literal that a body really uses (never only a
 * comment), so that a normalized body hash sees it. Each renderer resets g->text first. */
#include <string.h>

#include "common/err.h"
#include "fixture_variants.h"

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
	/* Imports after the definitions, as PyTorch does where modules import each other: when a
	 * cycle comes back here, every name it asks for is already defined. */
	int first = 1;
	for (uint32_t i = m->first; i < m->first + m->n; i++) {
		const struct fx_node *n = &g->nodes[i];
		if (n->kind == FX_CLASS)
			continue;
		for (int c = 0; c < n->ncalls; c++)
			if (!imported_before(g, m, i, c)) {
				if (first)
					P("\n\n# imported last: these modules import this one "
					  "too\n");
				first = 0;
				P("from %s import %s  # noqa: E402\n",
				  node_mod_dotted(g, n->calls[c]), g->nodes[n->calls[c]].name);
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
	P("\n# the public API under other names\n");
	for (uint32_t i = 0; i < g->nnodes; i++) {
		const struct fx_node *n = &g->nodes[i];
		const struct fx_module *m = &g->mods[n->mod];
		if (n->api && !m->orphan && !m->deleted)
			P("from %s import %s as api_%u\n", m->dotted, n->name, i);
	}
	P("\nfrom torch._decomp import decompositions as _decompositions  # registers them\n");
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

/* torch._C._VariableFunctions: the native ops as plain Python, so that the upstream runs without
 * the real torch. Each op runs its decomposition when one is registered; a kernel or a YAML
 * entry of op X is, at run time, this module's function X. */
int fixture__render_native(struct fx_gen *g)
{
	buf_reset(&g->text);
	P("\"\"\"torch._C._VariableFunctions: the native ops (a pure-Python stand-in).\"\"\"\n");
	P("import functools as _functools\n\n_DECOMPS = {}\n\n\n");
	P("class dtype:\n    def __init__(self, name):\n        self.name = name\n\n"
	  "    def __repr__(self):\n        return 'torch.' + self.name\n\n\n");
	P("float16 = dtype('float16')\nbfloat16 = dtype('bfloat16')\nfloat32 = dtype('float32')\n"
	  "float64 = dtype('float64')\nhalf = float16\n\n\n");
	P("def _value(x):\n    return x.value if isinstance(x, Tensor) else x\n\n\n");
	P("class Tensor:\n    \"\"\"One number standing for a tensor.\"\"\"\n\n"
	  "    __slots__ = ('value',)\n\n    def __init__(self, value=1.0):\n"
	  "        self.value = _value(value)\n\n    def __mul__(self, other):\n"
	  "        return Tensor(self.value * _value(other))\n\n    __rmul__ = __mul__\n\n"
	  "    def __eq__(self, other):\n        return self.value == _value(other)\n\n"
	  "    __hash__ = object.__hash__\n\n    @property\n    def shape(self):\n"
	  "        return (4, 4)\n\n    def __getattr__(self, name):\n"
	  "        fn = globals().get(name)\n        if name.startswith('_') or fn is None:\n"
	  "            raise AttributeError(name)\n"
	  "        return _functools.partial(fn, self)\n\n\n");
	P("def randn(*size, device=None, dtype=None, requires_grad=False):\n"
	  "    return Tensor(1.0)\n\n\n");
	P("def _run(name, x):\n    d = _DECOMPS.get(name)\n"
	  "    return d(x) if d is not None else x\n");
	for (uint32_t i = 0; i < g->nops; i++)
		P("\n\ndef %s(self, *args, **kwargs):\n    return _run('%s', self)\n",
		  g->ops[i].name, g->ops[i].name);
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

static const char *sample_args(uint8_t kind)
{
	switch (kind) {
	case FX_OP_BINARY:
		return "args=(make(),)";
	case FX_OP_REDUCTION:
		return "kwargs={'dim': -1}";
	default:
		return "";
	}
}

/* One sample_inputs_<op> function per entry, as in common_methods_invocations.py: a loop over
 * literal shapes built from S, M, L, XS (fixture_opinfo.c), or `make()` alone. An edit of an
 * op's entry changes both the entry (its tolerance) and its function, which the @ops tests over
 * it run. */
static int render_samples(struct fx_gen *g, uint32_t file)
{
	for (uint32_t i = 0; i < g->nops; i++) {
		const struct fx_op *o = &g->ops[i];
		if (!o->has_info || o->info_file != file)
			continue;
		const char *code, *truth;
		fixture__op_shapes(o, i, &code, &truth);
		P("\n\ndef sample_inputs_%s(op_info, device, dtype, requires_grad=False, "
		  "**kwargs):\n",
		  o->name);
		P("    rev = %u\n", o->v_info);
		P("    make = partial(make_tensor, device=device, dtype=dtype)\n");
		const char *args = sample_args(o->kind);
		if (!code) {
			P("    yield SampleInput(make() * rev%s%s)\n",
			  o->kind == FX_OP_UNARY ? "" : ", ", args);
			continue;
		}
		P("    for shape in %s:\n", code);
		P("        yield SampleInput(make(shape) * rev%s%s)\n",
		  o->kind == FX_OP_UNARY ? "" : ", ",
		  o->kind == FX_OP_BINARY ? "args=(make(shape),)" : args);
	}
	return 0;
}

int fixture__render_opinfo(struct fx_gen *g, uint32_t file)
{
	buf_reset(&g->text);
	P("\"\"\"The op database%s (synthetic).\"\"\"\n", file ? " (one family)" : "");
	P("from functools import partial\nfrom typing import List\n\nimport torch\n");
	P("from torch.testing import make_tensor\n");
	P("from torch.testing._internal.common_device_type import tol, toleranceOverride\n");
	P("from torch.testing._internal.common_dtype import floating_types, floating_types_and\n");
	P("from torch.testing._internal.opinfo.core import (\n    BinaryUfuncInfo,\n    OpInfo,\n"
	  "    ReductionOpInfo,\n    SampleInput,\n    UnaryUfuncInfo,\n)\n");
	if (file != 0) /* as PyTorch's definitions files take them */
		P("from torch.testing._internal.opinfo.core import L, M, S, XS\n");
	P("\n");
	P("try:\n    import numpy as np\nexcept ImportError:  # the references need only names\n"
	  "    from torch.testing._internal.opinfo.core import numpy_stand_in as np\n");
	if (file == 0)
		P("from torch.testing._internal.opinfo.definitions import op_db as "
		  "_definitions_op_db\n\n"
		  "L = 20\nM = 10\nS = 5\nXS = 3\n");
	if (render_samples(g, file))
		return ERR_LIMIT;
	P("\n\nop_db: List[OpInfo] = [\n");
	for (uint32_t i = 0; i < g->nops; i++) {
		const struct fx_op *o = &g->ops[i];
		if (!o->has_info || o->info_file != file)
			continue;
		const char *dexpr, *dtruth;
		fixture__op_dtypes(i, &dexpr, &dtruth);
		P("    %s(\n        '%s',\n", info_class(o->kind), o->name);
		P("        ref=np.%s,\n        dtypes=%s,\n", o->name, dexpr);
		P("        sample_inputs_func=sample_inputs_%s,\n", o->name);
		P("        decorators=(toleranceOverride({torch.float16: tol(atol=%ue-3, "
		  "rtol=0)}),),\n",
		  o->v_info);
		P("        supports_autograd=True,\n    ),\n");
	}
	if (fixture__render_variant_entry(g, file))
		return ERR_LIMIT;
	P("]\n");
	if (file == 0) {
		P("op_db += _definitions_op_db\n\n");
		P("unary_ufuncs = [op for op in op_db if isinstance(op, UnaryUfuncInfo)]\n");
		P("binary_ufuncs = [op for op in op_db if isinstance(op, BinaryUfuncInfo)]\n");
		P("reduction_ops = [op for op in op_db if isinstance(op, ReductionOpInfo)]\n");
	}
	return 0;
}

/* torch-spyre's YAML (docs/specs.md), naming tests of every tenth test file. */
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
		P("        - names: [\".*::test_pad_.*\"]\n          mode: skip\n");
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
