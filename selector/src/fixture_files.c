/* The synthetic upstream's files that are not the model: build files, the common test
 * utilities, conftest.py and run_test.py (each versioned, because the history edits them),
 * package __init__.py files, documentation, two binary files, and filler (headers, C++ sources,
 * tools, docs) up to the scale's file count, so that the tree is as wide as PyTorch's. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fixture_int.h"

static int put(struct fx_gen *g, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int put(struct fx_gen *g, const char *path, const char *fmt, ...)
{
	buf_reset(&g->text);
	va_list ap;
	va_start(ap, fmt);
	int rc = buf_vappendf(&g->text, fmt, ap);
	va_end(ap);
	if (rc)
		return err_set(rc, "fixture: rendering %s", path);
	return fixture__file_set_text(g, path);
}

static const char *const docs[] = { "docs/source/index.rst", "docs/source/nn.rst",
				    "docs/source/notes/autograd.rst", "README.md" };
static const char *const bins[] = { "docs/source/_static/img/pytorch-logo-dark.png",
				    "test/assets/linear_model.pt" };

static int write_binary(struct fx_gen *g, int i)
{
	unsigned char data[2048];
	struct fx_rng r = { 0x5eedULL * (uint64_t)(i + 1) + g->v_bin[i] };
	for (size_t k = 0; k < sizeof(data); k++)
		data[k] = (unsigned char)fixture__rand(&r);
	memcpy(data, i == 0 ? "\x89PNG\r\n\x1a\n" : "PK\x03\x04\0\0\0\0", 8);
	data[100] = 0; /* a NUL byte: git calls it binary */
	return fixture__file_set(g, bins[i], data, sizeof(data));
}

/* common_utils' parametrize, subtest and instantiate_parametrized_tests (stand-ins): the
 * names they give are PyTorch's (test_x_<arg>_<value>, name_fn's, subtest's name), stacked
 * decorators compose outermost first. */
static const char parametrize_py[] =
    "\n\nclass subtest:\n    def __init__(self, arg_values, name=None, decorators=None):\n"
    "        self.arg_values = arg_values\n        self.name = name\n\n\n"
    "def _value_name(arg, idx, v):\n    if type(v).__name__ == 'dtype':\n"
    "        return v.name\n    if isinstance(v, (int, float, str)):\n"
    "        return f\"{arg}_{str(v).replace('.', '_')}\"\n    return f'{arg}{idx}'\n\n\n"
    "class parametrize:\n"
    "    \"\"\"@parametrize(\"a,b\", values, name_fn=None): common_utils' subtest names.\"\"\"\n"
    "\n    def __init__(self, arg_str, arg_values, name_fn=None):\n"
    "        self.arg_names = [a.strip() for a in arg_str.split(',') if a.strip()]\n"
    "        self.arg_values = arg_values\n        self.name_fn = name_fn\n\n"
    "    def suffixes(self):\n        for idx, v in enumerate(self.arg_values):\n"
    "            name = None\n            if isinstance(v, subtest):\n"
    "                name, v = v.name, v.arg_values\n"
    "            values = tuple(v) if len(self.arg_names) > 1 else (v,)\n"
    "            if name is None and self.name_fn:\n"
    "                name = self.name_fn(*values)\n            elif name is None:\n"
    "                name = '_'.join(_value_name(a, idx, x) for a, x in zip(self.arg_names, "
    "values))\n"
    "            yield name, dict(zip(self.arg_names, values))\n\n"
    "    def __call__(self, fn):\n"
    "        fn.parametrizers = [self] + list(getattr(fn, 'parametrizers', []))\n"
    "        return fn\n\n\ndef _expand(fn):\n"
    "    \"\"\"(suffix, kwargs) of every combination of a test's parametrizers, outermost "
    "first.\"\"\"\n"
    "    combos = [('', {})]\n    for p in getattr(fn, 'parametrizers', []):\n"
    "        combos = [(f'{s}_{t}' if s else t, {**kw, **kw2})\n"
    "                  for s, kw in combos for t, kw2 in p.suffixes()]\n    return combos\n"
    "\n\ndef _bind(fn, template, kwargs):\n    def test(self):\n"
    "        return fn(self, **kwargs)\n\n    test.template = template\n    return test\n\n"
    "\ndef instantiate_parametrized_tests(generic_cls):\n"
    "    for name in [n for n in vars(generic_cls) if n.startswith('test')]:\n"
    "        fn = getattr(generic_cls, name)\n"
    "        if not getattr(fn, 'parametrizers', None):\n            continue\n"
    "        delattr(generic_cls, name)\n        for suffix, kwargs in _expand(fn):\n"
    "            test = _bind(fn, (generic_cls.__name__, name), kwargs)\n"
    "            setattr(generic_cls, f'{name}_{suffix}', test)\n    return generic_cls\n";

int fixture__write_infra(struct fx_gen *g, int which)
{
	switch (which) {
	case FX_INFRA_INIT:
		if (fixture__render_init(g))
			return ERR_LIMIT;
		return fixture__file_set_text(g, "torch/__init__.py");
	case FX_INFRA_SETUP:
		return put(g, "setup.py",
			   "\"\"\"Builds torch (synthetic).\"\"\"\nfrom setuptools import setup\n\n"
			   "BUILD_REV = %u\n\nsetup(name=\"torch\", version=\"2.%u.0\", "
			   "packages=[\"torch\"])\n",
			   g->v_build[0], g->v_build[0]);
	case FX_INFRA_CMAKE:
		return put(g, "CMakeLists.txt",
			   "cmake_minimum_required(VERSION 3.18)\nproject(Torch CXX C)\n"
			   "set(TORCH_BUILD_REV %u)\nadd_subdirectory(aten)\n",
			   g->v_build[1]);
	case FX_INFRA_CMAKE_DEPS:
		return put(g, "cmake/Dependencies.cmake",
			   "# Third-party dependencies.\nset(USE_OPENMP ON)\nset(DEPS_REV %u)\n",
			   g->v_build[2]);
	case FX_INFRA_ATEN_CMAKE:
		return put(g, "aten/src/ATen/CMakeLists.txt",
			   "file(GLOB native_cpp \"native/*.cpp\")\nset(ATEN_REV %u)\n"
			   "add_library(ATen ${native_cpp})\n",
			   g->v_build[3]);
	case FX_INFRA_CONFTEST:
		return put(g, "test/conftest.py",
			   "\"\"\"pytest configuration for the test suite.\"\"\"\nimport pytest\n\n"
			   "_REV = %u\n\n\ndef pytest_addoption(parser):\n"
			   "    parser.addoption(\"--use-main-module\", action=\"store_true\")\n",
			   g->v_conftest);
	case FX_INFRA_RUN_TEST:
		return put(g, "test/run_test.py",
			   "#!/usr/bin/env python3\n\"\"\"Runs the test suite in shards.\"\"\"\n"
			   "import sys\n\nRUN_REV = %u\n\n\ndef main():\n    return 0\n\n\n"
			   "if __name__ == \"__main__\":\n    sys.exit(main())\n",
			   g->v_run_test);
	case FX_INFRA_COMMON:
		return put(
		    g, "torch/testing/_internal/common_utils.py",
		    "\"\"\"Test utilities shared by every test file.\"\"\"\nimport unittest\n\n"
		    "import torch\n\nCOMMON_REV = %u\n\n\nclass TestCase(unittest.TestCase):\n"
		    "    def assertEqual(self, a, b, atol=None, rtol=None, msg=None):\n"
		    "        return a == b or COMMON_REV\n\n\ndef run_tests():\n"
		    "    unittest.main()\n%s",
		    g->v_common, parametrize_py);
	default:
		return err_set(ERR_INVAL, "fixture: no infrastructure file %d", which);
	}
}

static int write_docs(struct fx_gen *g, int i)
{
	return put(g, docs[i], "%s\n\nRevision %u of this page (synthetic).\n", docs[i],
		   g->v_docs[i]);
}

int fixture__write_doc_or_bin(struct fx_gen *g, int bin, int i)
{
	return bin ? write_binary(g, i & 1) : write_docs(g, i & 3);
}

/* The test utilities as small stand-ins that behave as PyTorch's do where a test can tell:
 * instantiate_device_type_tests writes <Class>CPU with test_x_cpu_float32 (and, for @ops,
 * test_x_<op.formatted_name>_cpu_float32; for @parametrize, test_x_<suffix>_cpu) methods and
 * removes the generic class, OpInfo runs its op and its sample_inputs function. Each
 * instantiated test names its template in `template`. */
static const char device_type_py[] =
    "\"\"\"Device-generic test classes (a stand-in).\"\"\"\nimport functools\n\n"
    "import torch\nfrom torch.testing._internal.common_utils import _expand\n\n\n"
    "def _instantiate(fn, template, args, kwargs):\n    @functools.wraps(fn)\n"
    "    def instantiated_test(self):\n        return fn(self, *args, **kwargs)\n\n"
    "    instantiated_test.template = template\n    return instantiated_test\n\n\n"
    "def _variants(name, fn):\n    dts = getattr(fn, 'dtypes', None)\n"
    "    for suffix, kw in _expand(fn):\n"
    "        base = f'{name}_{suffix}' if suffix else name\n"
    "        op = kw.pop(' op', None)\n        if op is not None:\n"
    "            for dt in dts or (torch.float32,):\n"
    "                yield f'{base}_cpu_{dt.name}', ('cpu', dt, op), kw\n"
    "        elif dts:\n            for dt in dts:\n"
    "                yield f'{base}_cpu_{dt.name}', ('cpu', dt), kw\n        else:\n"
    "            yield f'{base}_cpu', ('cpu',), kw\n\n\n"
    "def instantiate_device_type_tests(generic_test_class, scope, except_for=None, "
    "only_for=None):\n"
    "    generic = generic_test_class.__name__\n    del scope[generic]\n"
    "    members = dict(generic_test_class.__dict__)\n"
    "    for name in dir(generic_test_class):\n        if not name.startswith('test'):\n"
    "            continue\n        fn = getattr(generic_test_class, name)\n"
    "        members[name] = None  # the template itself is no test\n"
    "        for inst, args, kw in _variants(name, fn):\n"
    "            members[inst] = _instantiate(fn, (generic, name), args, kw)\n"
    "    cls = type(generic + 'CPU', generic_test_class.__bases__, members)\n"
    "    scope[cls.__name__] = cls\n\n\ndef dtypes(*args):\n    def decorate(fn):\n"
    "        fn.dtypes = args\n        return fn\n\n    return decorate\n\n\nclass ops:\n"
    "    \"\"\"@ops(op_list): one variant per entry, named by its formatted_name.\"\"\"\n\n"
    "    def __init__(self, op_list, dtypes=None):\n        self.op_list = list(op_list)\n"
    "\n    def suffixes(self):\n        for op in self.op_list:\n"
    "            yield op.formatted_name, {' op': op}\n\n    def __call__(self, fn):\n"
    "        fn.op_list = self.op_list\n"
    "        fn.parametrizers = [self] + list(getattr(fn, 'parametrizers', []))\n"
    "        return fn\n\n\ndef toleranceOverride(d):\n    return d\n\n\n"
    "def tol(atol, rtol):\n    return (atol, rtol)\n";

static const char opinfo_core_py[] =
    "\"\"\"OpInfo and its kin (a stand-in).\"\"\"\nimport torch\n\nL = 20\nM = 10\nS = 5\nXS = "
    "3\n\n\n"
    "class SampleInput:\n"
    "    def __init__(self, input, args=(), kwargs=None):\n        self.input = input\n"
    "        self.args = args\n        self.kwargs = kwargs or {}\n\n\n"
    "def _reference(x, *args, **kwargs):\n    return x\n\n\nclass _NumpyStandIn:\n"
    "    def __getattr__(self, name):\n        return _reference\n\n\n"
    "numpy_stand_in = _NumpyStandIn()\n\n\nclass OpInfo:\n"
    "    def __init__(self, name, *, op=None, ref=None, sample_inputs_func=None, dtypes=None,\n"
    "                 decorators=(), **kwargs):\n        self.name = name\n        self.op = op\n"
    "        self.ref = ref\n        self.sample_inputs_func = sample_inputs_func\n"
    "        self.dtypes = dtypes\n        self.decorators = decorators\n"
    "        self.variant_test_name = kwargs.get('variant_test_name', '')\n\n"
    "    @property\n    def formatted_name(self):\n"
    "        v = self.variant_test_name.replace('.', '_')\n"
    "        return self.name.replace('.', '_') + ('_' + v if v else '')\n\n"
    "    def __call__(self, *args, **kwargs):\n"
    "        op = self.op if self.op is not None else getattr(torch, self.name)\n"
    "        return op(*args, **kwargs)\n\n"
    "    def sample_inputs(self, device, dtype, requires_grad=False, **kwargs):\n"
    "        return self.sample_inputs_func(self, device, dtype, requires_grad, **kwargs)\n\n\n"
    "class UnaryUfuncInfo(OpInfo):\n    pass\n\n\nclass BinaryUfuncInfo(OpInfo):\n    pass\n\n\n"
    "class ReductionOpInfo(OpInfo):\n    pass\n";

static const char ops_py[] =
    "\"\"\"torch._ops: aten.<name> op packets (a stand-in).\"\"\"\n\n\nclass OpOverloadPacket:\n"
    "    def __init__(self, name):\n        self.name = name\n\n"
    "    def __call__(self, *args, **kwargs):\n        import torch\n\n"
    "        return getattr(torch, self.name)(*args, **kwargs)\n\n\nclass _OpNamespace:\n"
    "    def __getattr__(self, name):\n        if name.startswith('_'):\n"
    "            raise AttributeError(name)\n        return OpOverloadPacket(name)\n\n\n"
    "class _Ops:\n    aten = _OpNamespace()\n\n\nops = _Ops()\n";

static const char decomp_init_py[] =
    "\"\"\"torch._decomp: decompositions, run by the native op they decompose.\"\"\"\n"
    "import torch._ops  # noqa: F401 (aten.<name>)\nfrom torch._C import _VariableFunctions\n\n\n"
    "def register_decomposition(op):\n    def register(fn):\n"
    "        _VariableFunctions._DECOMPS[op.name] = fn\n        return fn\n\n    return register\n";

static const char testing_init_py[] =
    "\"\"\"torch.testing.\"\"\"\n\n\ndef make_tensor(*shape, device=None, dtype=None, low=None, "
    "high=None,\n                requires_grad=False):\n    import torch\n\n"
    "    return torch.randn(4, 4, device=device, dtype=dtype)\n";

static int write_testing(struct fx_gen *g)
{
	int rc = put(g, "torch/testing/_internal/common_device_type.py", "%s", device_type_py);
	rc = rc ? rc
		: put(g, "torch/testing/_internal/common_dtype.py",
		      "import torch\n\n\ndef floating_types():\n"
		      "    return (torch.float32, torch.float64)\n\n\n"
		      "def floating_types_and(*dtypes):\n"
		      "    return floating_types() + dtypes\n");
	rc = rc ? rc : put(g, "torch/testing/_internal/opinfo/core.py", "%s", opinfo_core_py);
	rc = rc ? rc : put(g, "torch/testing/_internal/opinfo/__init__.py", "\n");
	rc = rc ? rc : put(g, "torch/testing/_internal/__init__.py", "\n");
	rc = rc ? rc
		: put(g, "torch/testing/_internal/test_helpers/__init__.py",
		      "\"\"\"Helpers that test files import.\"\"\"\n");
	rc = rc ? rc : put(g, "torch/testing/__init__.py", "%s", testing_init_py);
	rc = rc ? rc : put(g, "torch/_decomp/__init__.py", "%s", decomp_init_py);
	rc = rc ? rc : put(g, "torch/_ops.py", "%s", ops_py);
	rc = rc ? rc
		: put(g, "torch/_C/__init__.py",
		      "\"\"\"torch._C: the native extension (a pure-Python stand-in).\"\"\"\n");
	if (rc)
		return rc;
	buf_reset(&g->text);
	if (buf_appendf(&g->text, "\"\"\"Op database families.\"\"\"\n"))
		return ERR_LIMIT;
	for (uint32_t i = 0; i < g->sc.def_files; i++)
		if (buf_appendf(&g->text,
				"from torch.testing._internal.opinfo.definitions import %s\n",
				fixture__def_names[i]))
			return ERR_LIMIT;
	if (buf_appendf(&g->text, "\nop_db = [\n"))
		return ERR_LIMIT;
	for (uint32_t i = 0; i < g->sc.def_files; i++)
		if (buf_appendf(&g->text, "    *%s.op_db,\n", fixture__def_names[i]))
			return ERR_LIMIT;
	if (buf_appendf(&g->text, "]\n"))
		return ERR_LIMIT;
	return fixture__file_set_text(g, "torch/testing/_internal/opinfo/definitions/__init__.py");
}

/* torch/<pkg>/__init__.py and torch/<pkg>/<sub>/__init__.py for every module's directory. */
static int write_package_inits(struct fx_gen *g)
{
	char path[FX_PATH_MAX + 16];
	for (uint32_t mi = 0; mi < g->nmods; mi++) {
		const char *p = g->mods[mi].path;
		for (const char *s = strchr(p + 6, '/'); s; s = strchr(s + 1, '/')) {
			snprintf(path, sizeof(path), "%.*s/__init__.py", (int)(s - p), p);
			int rc = put(g, path, "\"\"\"%.*s.\"\"\"\n", (int)(s - p), p);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static const char *const filler_dirs[] = { "c10/util",
					   "c10/core",
					   "torch/csrc/autograd",
					   "torch/csrc/jit/passes",
					   "third_party/kineto/src",
					   "aten/src/ATen/cpu",
					   "benchmarks/operator",
					   "docs/source/api",
					   "tools/codegen",
					   "caffe2/core" };
#define NFD (sizeof(filler_dirs) / sizeof(filler_dirs[0]))

static int write_filler(struct fx_gen *g)
{
	size_t have = fixture__tree_files(&g->root);
	size_t want = g->sc.files_target > have ? g->sc.files_target - have : 0;
	char path[FX_PATH_MAX];
	for (size_t k = 0; k < want; k++) {
		size_t d = k / 150;
		const char *dir = filler_dirs[d % NFD];
		const char *ext = d % NFD < 2                    ? "h"
				  : d % NFD == 6 || d % NFD == 8 ? "py"
				  : d % NFD == 7                 ? "rst"
								 : "cpp";
		snprintf(path, sizeof(path), "%s%zu/part_%zu.%s", dir, d / NFD, k, ext);
		int rc = put(g, path, "%s %s: generated filler %zu\n",
			     !strcmp(ext, "py")    ? "#"
			     : !strcmp(ext, "rst") ? ".."
						   : "//",
			     path, k);
		if (rc)
			return rc;
	}
	return 0;
}

int fixture__write_static(struct fx_gen *g)
{
	int rc = 0;
	for (int w = FX_INFRA_INIT; !rc && w <= FX_INFRA_COMMON; w++)
		rc = fixture__write_infra(g, w);
	for (int i = 0; !rc && i < 4; i++)
		rc = write_docs(g, i);
	for (int i = 0; !rc && i < 2; i++)
		rc = write_binary(g, i);
	rc = rc ? rc : write_testing(g);
	rc = rc ? rc : write_package_inits(g);
	rc = rc ? rc : put(g, "torch/nn/__init__.py", "from torch.nn import functional\n");
	rc = rc ? rc : put(g, "pyproject.toml", "[build-system]\nrequires = [\"setuptools\"]\n");
	rc = rc ? rc : put(g, "test/__init__.py", "\n");
	rc = rc ? rc
		: put(g, "aten/src/ATen/native/README.md",
		      "Native operators: see native_functions.yaml.\n");
	return rc ? rc : write_filler(g);
}
