#!/usr/bin/env python3
"""opdb_truth: an independent ground truth of PyTorch's operator database, by execution.

What it is
  spyre-ci's selector reads PyTorch's OpInfo database and the `@ops(...)` decorators of the
  upstream tests without running Python. This tool answers the same questions by *running* the
  real PyTorch files (Python 3.11, standard library only), so that Python itself evaluates every
  list comprehension, filter, isinstance test, attribute test, concatenation and decorator
  argument. Its JSON is the truth spyre-ci's C implementation is graded against.

  It never reads spyre-ci's own code (selector/, relay/, common/, ...): the truth must not share
  the implementation's blind spots. Everything it knows comes from the PyTorch tree it is given.

How it runs the files
  - A meta-path import hook serves stub modules for torch, numpy, scipy, sympy, packaging and for
    anything else that is not importable. A stub is permissive: any attribute, call, subscript or
    arithmetic gives another stub; iterating one gives nothing; it is truthy; == is identity;
    ordering treats it as larger than anything (so `version >= "1.20"` holds). Called with one
    function or class it returns that argument unchanged, so stubbed decorators pass through.
  - Exceptions to "stub": torch dtypes are real, distinct, named objects (torch.float32 is
    torch.float, ...); torch.device, torch.no_grad, torch.get_default_dtype behave; a handful of
    torch attributes that real PyTorch lacks (torch._foreach_zero, ...) are absent.
  - Real files executed (statement by statement, so one failing statement is recorded in
    "errors" and the rest still runs; a failing list literal is rebuilt element by element):
      torch/testing/_internal/common_dtype.py        (own faithful stub if absent or failing)
      torch/testing/_internal/common_device_type.py  (own stub if absent or failing)
      torch/testing/_internal/opinfo/ (core.py, refs.py, utils.py, definitions/*.py)
      torch/testing/_internal/common_methods_invocations.py
    opinfo/core.py is executed for real, so the OpInfo class hierarchy, every default (ref,
    dtypes, sample_inputs_func, the skips BinaryUfuncInfo adds, ForeachFuncInfo's "_foreach_"
    prefix, PythonRefInfo's inheritance from its torch opinfo, ...) and the derived attributes
    (op.formatted_name, op.supported_dtypes(), ...) are PyTorch's own. The only change: OpInfo
    gets a recording __new__, which notes each constructor call (class, positional and keyword
    arguments, and the file and line of the call) without altering the object.
    common_utils.py and common_cuda.py are stubs with explicit values for the flags (a Linux x86
    CPU CI box with numpy and scipy installed, no CUDA/ROCm/ASAN/Windows); see ASSUMPTIONS.
  - Each test/test_*.py is executed (in a forked child, so files cannot affect each other) as a
    module named after the file. Its decorators are evaluated exactly as Python does at
    class-definition time, each one guarded so that a decorator whose arguments cannot be
    evaluated under stubs is recorded in "errors" instead of losing the whole class.
    `ops` is replaced by a recorder: it keeps the op list (after whatever filtering the argument
    expression does itself), `dtypes=` (an OpDTypes mode or a dtype sequence) and
    `allowed_dtypes=`, and computes the dtypes each op is instantiated with on CPU, mirroring
    common_device_type.ops._parametrize_test. When the real `ops` class is available the same
    list is also run through the real _parametrize_test and any disagreement is an error.
    instantiate_device_type_tests / instantiate_parametrized_tests / run_tests only record.

Known limits (stubs cannot be real torch)
  - Facts that depend on real torch objects are approximations: `op.op`, `method_variant` and
    the like are stubs; ForeachFuncInfo's ref is a stub (so "has_ref" is true) unless the torch
    attribute is among the absent ones; `inspect.getfullargspec(torch._refs.x)` cannot work and
    such decorators end in "errors".

Output (--out), one JSON object, keys sorted, lists in Python's order where the order means
something (op lists; entries in creation order) and sorted otherwise:
  entries       every OpInfo (any subclass) constructed while loading the database: index, file
                and line of the constructor call, module_statement (file and line of the
                module-level code executing then, e.g. a helper's call inside op_db's literal;
                differs from file/line for entries made by helpers and loops), class,
                name, variant_test_name, formatted_name, aten_name, aliases, dtypes (CPU,
                sorted names), sample_inputs_func / reference_inputs_func (function names; a
                partial gives its function's), has_ref, skips (DecorateInfos that skip or xfail:
                cls_name, test_name, device_type, dtypes, active_if), other_decorators, ctor
                (number of positional arguments, keyword names), supports_* flags.
  lists         every module-level name bound to a non-empty list/tuple of entries, as
                [[name, variant_test_name], ...]: common_methods_invocations' names bare,
                opinfo/definitions' as "opinfo.definitions.fft.op_db", test files' own lists
                as "test/test_x.py:name". list_entries: the same as indices into entries.
  ops_tests     "test/test_x.py::Class::method" -> ops, op_entries, dtypes_mode (an OpDTypes
                name or "explicit" with dtypes), allowed_dtypes, instantiated
                ({formatted_name: [CPU dtype names]}; [null] means OpDTypes.none, i.e. no dtype
                suffix), decorators (source text of all the test's decorators), line,
                cpu_instantiated (the class goes through instantiate_device_type_tests for CPU),
                stub_dependent (evaluating the @ops arguments touched a stub: the list may
                differ from real PyTorch's). A decorator that could not be evaluated gives
                {"error", "decorator", "line", "ops": null}.
  plain_tests   "test/test_x.py::Class" -> test methods without @ops.
  instantiations, test_file_skips (DecorateInfos a test file adds to entries via skipOps),
  test_files (per-file counts), assumptions, errors ({file, line, where, error, ...}).

Run
  python3 tests/tools/opdb_truth.py --root /tmp/realpt --out /tmp/opdb_truth.json
  python3 tests/tools/opdb_truth.py --selftest     # runs tests/tools/opdb_truth_selftest.py
"""

import argparse
import ast
import enum
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback
import types
import unittest

# --------------------------------------------------------------------------------------------
# Assumptions: the environment the truth describes (a Linux x86 CPU CI job).

ASSUMPTIONS = {
    "common_utils": {
        "TEST_SCIPY": True, "TEST_NUMPY": True, "TEST_MKL": True, "TEST_OPT_EINSUM": True,
        "TEST_LIBROSA": False, "TEST_CUDA": False, "TEST_MPS": False, "TEST_XPU": False,
        "TEST_PRIVATEUSE1_DEVICE_TYPE": "privateuseone",
        "PRINT_REPRO_ON_FAILURE": False, "NO_MULTIPROCESSING_SPAWN": False,
        "IS_FILESYSTEM_UTF8_ENCODING": True, "GRADCHECK_NONDET_TOL": 1e-12,
        "NATIVE_DEVICES": ["cpu", "cuda", "xpu", "meta"],
        "TEST_CHECK_VALIDATE_SPARSE_SAMPLES": False,
        "other ALL_CAPS names (IS_*, TEST_WITH_*, ...)": False,
    },
    "common_cuda": {"every TEST_*/SM*/PLATFORM_* name": False, "_get_*_version()": [0, 0]},
    "versions": {"torch": "2.4.0", "numpy": "1.26.4", "scipy": "1.13.1"},
    "torch_absent_attributes": ["_foreach_copy", "_foreach_zero", "copy", "zero"],
    "device": "cpu",
}

STUB_TOPS = {"torch", "torchgen", "numpy", "scipy", "sympy", "packaging", "functorch",
             "expecttest", "hypothesis", "librosa", "psutil", "opt_einsum", "triton"}

# Modules under torch/testing/_internal/ executed from the real tree (when the file exists).
REAL_INTERNAL = ("common_dtype", "common_device_type", "common_methods_invocations", "opinfo")


class State:
    root = None
    entries = []          # EntryRec, in creation order
    errors = []
    opinfo_cls = None     # the real core.OpInfo
    decorateinfo_cls = None
    ops_records = []      # OpsRecord, for the test file being executed
    instantiations = []
    real_ops_cls = None
    opdtypes = None
    current_test_file = None
    db_entries = 0            # entries made by the database (the rest come from test files)
    deco_counts = []          # len(op.decorators) of each database entry after loading
    db_list_ids = set()       # the database's own lists (a test file importing one is no news)
    deco_touch_start = None   # TOUCH[0] when the decorator being evaluated started


def rel(path):
    try:
        r = os.path.relpath(path, State.root)
    except ValueError:
        return path
    return path if r.startswith("..") else r


_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


def _clean(msg):
    return _ADDR.sub("", msg)


def record_error(file, line, where, exc, **extra):
    if isinstance(exc, BaseException):
        text = f"{type(exc).__name__}: {exc}"
    else:
        text = str(exc)
    e = {"file": rel(file) if file else None, "line": line, "where": where,
         "error": _clean(text)[:500]}
    e.update(extra)
    State.errors.append(e)


def _exc_line(exc, filename):
    """The line of the innermost frame of exc's traceback inside filename."""
    line = None
    for fs in traceback.extract_tb(exc.__traceback__):
        if fs.filename == filename:
            line = fs.lineno
    return line


# --------------------------------------------------------------------------------------------
# The permissive stub object.

TOUCH = [0]     # how often a stub was used: an @ops argument that used one depends on stubs


def _passes_through(x):
    return isinstance(x, (types.FunctionType, types.MethodType, type, staticmethod, classmethod,
                          functools.partial, property))


class Stub:
    """Anything: attributes, calls, subscripts and arithmetic give more stubs."""
    __slots__ = ("_stub_path", "_stub_kids", "_stub_cls")

    def __init__(self, path="stub"):
        object.__setattr__(self, "_stub_path", path)
        object.__setattr__(self, "_stub_kids", {})
        object.__setattr__(self, "_stub_cls", None)

    def __getattr__(self, name):
        TOUCH[0] += 1
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        kids = self._stub_kids
        if name not in kids:
            kids[name] = Stub(f"{self._stub_path}.{name}")
        return kids[name]

    def __setattr__(self, name, value):
        pass

    def __delattr__(self, name):
        pass

    def __call__(self, *args, **kwargs):
        TOUCH[0] += 1
        if len(args) == 1 and not kwargs and _passes_through(args[0]):
            return args[0]
        return Stub(self._stub_path + "()")

    def _as_class(self):
        if self._stub_cls is None:
            name = self._stub_path.rsplit(".", 1)[-1].replace("()", "") or "Stub"
            object.__setattr__(self, "_stub_cls", StubMeta(name, (StubBase,), {}))
        return self._stub_cls

    def __mro_entries__(self, bases):
        return (self._as_class(),)

    def __instancecheck__(self, obj):
        TOUCH[0] += 1
        return self._stub_cls is not None and isinstance(obj, self._stub_cls)

    def __subclasscheck__(self, cls):
        TOUCH[0] += 1
        return self._stub_cls is not None and isinstance(cls, type) and \
            issubclass(cls, self._stub_cls)

    def __iter__(self):
        TOUCH[0] += 1
        return iter(())

    def __len__(self):
        TOUCH[0] += 1
        return 0

    def __bool__(self):
        TOUCH[0] += 1
        return True

    def __contains__(self, item):
        TOUCH[0] += 1
        return False

    def __getitem__(self, key):
        TOUCH[0] += 1
        return Stub(self._stub_path + "[]")

    def __setitem__(self, key, value):
        pass

    def __delitem__(self, key):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        TOUCH[0] += 1
        return self is other

    def __ne__(self, other):
        TOUCH[0] += 1
        return self is not other

    __hash__ = object.__hash__

    # Ordering: a stub is larger than anything (a version, a size): `v >= x` holds.
    def __lt__(self, other):
        TOUCH[0] += 1
        return False

    def __le__(self, other):
        TOUCH[0] += 1
        return self is other

    def __gt__(self, other):
        TOUCH[0] += 1
        return self is not other

    def __ge__(self, other):
        TOUCH[0] += 1
        return True

    def __index__(self):
        TOUCH[0] += 1
        return 1

    def __int__(self):
        TOUCH[0] += 1
        return 1

    def __float__(self):
        TOUCH[0] += 1
        return 1.0

    def __complex__(self):
        return 1 + 0j

    def __round__(self, n=None):
        return 1

    def __repr__(self):
        TOUCH[0] += 1
        return "<stub>"

    __str__ = __repr__

    def __format__(self, spec):
        TOUCH[0] += 1
        return "<stub>"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __dir__(self):
        return []

    def _arith(self, *other):
        TOUCH[0] += 1
        return Stub(self._stub_path + "<op>")

    for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
               "xor", "lshift", "rshift", "divmod"):
        locals()[f"__{_n}__"] = _arith
        locals()[f"__r{_n}__"] = _arith
        locals()[f"__i{_n}__"] = _arith
    for _n in ("neg", "pos", "abs", "invert"):
        locals()[f"__{_n}__"] = _arith
    del _n


_OPERATOR_DUNDERS = {f"__{p}{n}__" for p in ("", "r", "i") for n in (
    "add", "sub", "mul", "div", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "divmod")} | {f"__{n}__" for n in (
        "neg", "pos", "abs", "invert", "getitem", "setitem", "delitem", "eq", "ne", "lt", "le",
        "gt", "ge", "len", "contains", "iter", "bool", "float", "int", "complex", "index",
        "array", "dlpack", "dlpack_device")}


class StubMeta(type):
    """Metaclass of stub classes (torch.Tensor, ...): unknown class attributes are stubs too,
    operator methods included (torch.Tensor.__radd__ exists)."""

    def __getattr__(cls, name):
        TOUCH[0] += 1
        if name.startswith("__") and name.endswith("__") and name not in _OPERATOR_DUNDERS:
            raise AttributeError(name)
        value = Stub(f"{cls.__name__}.{name}")
        type.__setattr__(cls, name, value)
        return value


class StubBase(metaclass=StubMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub(f"{type(self).__name__}().{name}")


class StubModule(types.ModuleType):
    """A module whose unknown attributes are stubs (cached, so `is` holds)."""

    def __getattr__(self, name):
        TOUCH[0] += 1
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        d = self.__dict__
        if name in d.get("_stub_absent", ()):
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"
        if real_file(full):     # a real submodule of a stub package: import it
            return importlib.import_module(full)
        special = d.get("_stub_default")
        value = special(name) if special else Stub(full)
        if value is _NO_ATTR:
            raise AttributeError(name)
        setattr(self, name, value)
        return value


_NO_ATTR = object()


def new_stub_module(name, package=True):
    m = StubModule(name)
    if package:
        m.__path__ = []
    m.__dict__["_opdb_stub"] = True
    return m


# --------------------------------------------------------------------------------------------
# torch: dtypes and the few objects that must behave.

class DType:
    __slots__ = ("name", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name, kind, size):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "is_floating_point", kind == "f")
        object.__setattr__(self, "is_complex", kind == "c")
        object.__setattr__(self, "is_signed", kind in "fci")
        object.__setattr__(self, "itemsize", size)

    def __setattr__(self, k, v):
        raise AttributeError("dtype is immutable")

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def to_real(self):
        return {"complex32": DTYPES["float16"], "complex64": DTYPES["float32"],
                "complex128": DTYPES["float64"]}.get(self.name, self)

    def to_complex(self):
        return {"float16": DTYPES["complex32"], "float32": DTYPES["complex64"],
                "float64": DTYPES["complex128"]}.get(self.name, self)


_DTYPE_TABLE = [
    # canonical name, kind (f float, c complex, i signed int, u unsigned/bool/other), bytes, aliases
    ("float16", "f", 2, ("half",)), ("bfloat16", "f", 2, ()), ("float32", "f", 4, ("float",)),
    ("float64", "f", 8, ("double",)), ("complex32", "c", 4, ("chalf",)),
    ("complex64", "c", 8, ("cfloat",)), ("complex128", "c", 16, ("cdouble",)),
    ("uint8", "u", 1, ()), ("uint16", "u", 2, ()), ("uint32", "u", 4, ()), ("uint64", "u", 8, ()),
    ("int8", "i", 1, ()), ("int16", "i", 2, ("short",)), ("int32", "i", 4, ("int",)),
    ("int64", "i", 8, ("long",)), ("bool", "u", 1, ()),
    ("qint8", "u", 1, ()), ("quint8", "u", 1, ()), ("qint32", "u", 4, ()),
    ("quint4x2", "u", 1, ()), ("quint2x4", "u", 1, ()),
    ("float8_e4m3fn", "f", 1, ()), ("float8_e5m2", "f", 1, ()),
    ("float8_e4m3fnuz", "f", 1, ()), ("float8_e5m2fnuz", "f", 1, ()),
    ("bits1x8", "u", 1, ()), ("bits2x4", "u", 1, ()), ("bits4x2", "u", 1, ()),
    ("bits8", "u", 1, ()), ("bits16", "u", 2, ()),
] + [(f"uint{n}", "u", 1, ()) for n in range(1, 8)]

DTYPES = {}
DTYPE_ALIASES = {}
for _name, _kind, _size, _aliases in _DTYPE_TABLE:
    DTYPES[_name] = DType(_name, _kind, _size)
    for _a in _aliases:
        DTYPE_ALIASES[_a] = _name
del _name, _kind, _size, _aliases, _a


def _dtype_by_name(name):
    return DTYPES[name]


def dtype_name(d):
    if isinstance(d, DType):
        return d.name
    return None if d is None else repr(d)


def dtype_names(ds):
    if ds is None:
        return None
    try:
        items = list(ds)
    except TypeError:
        return [repr(ds)]
    return sorted(n for n in (dtype_name(d) for d in items) if n is not None)


class _Device:
    def __init__(self, type="cpu", index=None):
        if isinstance(type, _Device):
            type, index = type.type, type.index
        s = str(type)
        if ":" in s:
            s, i = s.split(":", 1)
            index = int(i)
        self.type, self.index = s, index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None
                                                 else ")")

    def __str__(self):
        return self.type + (f":{self.index}" if self.index is not None else "")

    def __eq__(self, other):
        return isinstance(other, _Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


class _GradMode:
    """torch.no_grad and friends: a decorator that returns what it decorates, a context."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, fn):
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Version:
    """Enough of packaging.version.Version / numpy.lib.NumpyVersion to compare versions."""

    def __init__(self, text):
        self.text = str(text)
        parts = []
        for p in re.split(r"[.+-]", self.text):
            m = re.match(r"\d+", p)
            if not m:
                break
            parts.append(int(m.group()))
        self.key = tuple(parts)

    def _k(self, o):
        return o.key if isinstance(o, _Version) else _Version(o).key

    def __lt__(self, o): return self.key < self._k(o)
    def __le__(self, o): return self.key <= self._k(o)
    def __gt__(self, o): return self.key > self._k(o)
    def __ge__(self, o): return self.key >= self._k(o)
    def __eq__(self, o): return self.key == self._k(o)
    def __hash__(self): return hash(self.key)
    def __str__(self): return self.text


def build_torch():
    torch = new_stub_module("torch")
    absent = set(ASSUMPTIONS["torch_absent_attributes"])
    torch.__dict__["_stub_absent"] = absent
    for n, d in DTYPES.items():
        setattr(torch, n, d)
    for a, n in DTYPE_ALIASES.items():
        setattr(torch, a, DTYPES[n])
    torch.dtype = DType
    torch.device = _Device
    torch.no_grad = torch.enable_grad = torch.inference_mode = _GradMode
    torch.set_grad_enabled = _GradMode
    torch.inf, torch.nan, torch.pi, torch.e = float("inf"), float("nan"), 3.141592653589793, \
        2.718281828459045
    torch.__version__ = ASSUMPTIONS["versions"]["torch"]
    torch.get_default_dtype = lambda: DTYPES["float32"]
    torch.set_default_dtype = lambda d: None
    for cname in ("Tensor", "Size", "Generator", "Storage", "SymInt", "SymFloat", "SymBool",
                  "TypedStorage", "UntypedStorage", "layout", "memory_format", "finfo", "iinfo"):
        setattr(torch, cname, StubMeta(cname, (StubBase,), {"__module__": "torch"}))
    mods = {"torch": torch}

    def sub(name, **attrs):
        m = new_stub_module(name)
        for k, v in attrs.items():
            setattr(m, k, v)
        parent, _, leaf = name.rpartition(".")
        setattr(mods[parent], leaf, m)
        mods[name] = m
        return m

    sub("torch.cuda", is_available=lambda: False, device_count=lambda: 0,
        is_bf16_supported=lambda *a, **k: False)
    sub("torch.version", cuda=None, hip=None, debug=False,
        __version__=ASSUMPTIONS["versions"]["torch"])
    sub("torch._C", _get_privateuse1_backend_name=lambda: "privateuseone")
    sub("torch.testing")
    internal = sub("torch.testing._internal")
    internal.__path__ = [os.path.join(State.root, "torch", "testing", "_internal")]
    return mods


def build_numpy():
    np = new_stub_module("numpy")
    np.inf, np.nan, np.pi, np.e = float("inf"), float("nan"), 3.141592653589793, 2.718281828459045
    np.__version__ = ASSUMPTIONS["versions"]["numpy"]
    lib = new_stub_module("numpy.lib")
    lib.NumpyVersion = _Version
    np.lib = lib
    return {"numpy": np, "numpy.lib": lib}


def build_scipy():
    sp = new_stub_module("scipy")
    sp.__version__ = ASSUMPTIONS["versions"]["scipy"]
    return {"scipy": sp}


def build_packaging():
    pk = new_stub_module("packaging")
    ver = new_stub_module("packaging.version")
    ver.parse = _Version
    ver.Version = _Version
    pk.version = ver
    return {"packaging": pk, "packaging.version": ver}


def _dataclass_repr(obj, indent=0, width=80):
    """torchgen.utils.dataclass_repr: on Python >= 3.10 it is pprint.pformat, which prints a
    dataclass field by field. common_methods_invocations filters on it ("linalg.det" not in
    str(op)), so this one matters; stubs print as "<stub>", never as a dotted path."""
    import pprint
    return pprint.pformat(obj, indent, width)


def build_torchgen():
    tg = new_stub_module("torchgen")
    ut = new_stub_module("torchgen.utils")
    ut.dataclass_repr = _dataclass_repr
    tg.utils = ut
    return {"torchgen": tg, "torchgen.utils": ut}


# --------------------------------------------------------------------------------------------
# torch.testing._internal stubs: common_utils, common_cuda, and the fallbacks for
# common_dtype and common_device_type.

class TestCaseStub:
    """common_utils.TestCase: a plain base class (no permissive attributes: test files ask
    hasattr(TestX, name) before adding generated tests). common_device_type reads the two
    class-level tolerances."""
    _precision = 1e-5
    _rel_tol = 0


class TestParametrizerStub:
    """common_utils._TestParametrizer: as a decorator it returns the test."""

    def __call__(self, fn):
        return fn

    def _parametrize_test(self, test, generic_cls, device_cls):
        raise NotImplementedError


def _record_parametrized(cls):
    State.instantiations.append({"kind": "parametrized", "class": getattr(cls, "__name__", "?"),
                                 "kwargs": {}})
    return cls


def build_common_utils(name):
    cu = new_stub_module(name, package=False)
    values = {k: v for k, v in ASSUMPTIONS["common_utils"].items() if " " not in k}
    values["NATIVE_DEVICES"] = tuple(values["NATIVE_DEVICES"])
    for k, v in values.items():
        setattr(cu, k, v)

    def default(attr):
        if re.fullmatch(r"[A-Z][A-Z0-9_]*", attr):
            return False
        return Stub(f"{name}.{attr}")

    cu.__dict__["_stub_default"] = default
    cu.TestCase = TestCaseStub
    cu.run_tests = lambda *a, **k: None
    cu.instantiate_parametrized_tests = _record_parametrized
    cu.dtype_name = lambda d: str(d).split(".")[1]
    cu._TestParametrizer = TestParametrizerStub
    return cu


def build_common_cuda(name):
    cc = new_stub_module(name, package=False)

    def default(attr):
        if attr.startswith(("TEST_", "SM", "PLATFORM_")) or re.fullmatch(r"[A-Z][A-Z0-9_]*", attr):
            return False
        if re.fullmatch(r"_get_\w+_version", attr):
            return lambda *a, **k: (0, 0)
        return Stub(f"{name}.{attr}")

    cc.__dict__["_stub_default"] = default
    cc.tf32_is_not_fp32 = lambda: False
    return cc


class _DispatchDtypes(tuple):
    def __add__(self, other):
        assert isinstance(other, tuple)
        return _DispatchDtypes(tuple.__add__(self, other))


def build_common_dtype_stub(name):
    """Our own common_dtype, used only when the real file is missing or fails."""
    cd = new_stub_module(name, package=False)
    D = DTYPES
    fl = _DispatchDtypes((D["float32"], D["float64"]))
    it = _DispatchDtypes((D["uint8"], D["int8"], D["int16"], D["int32"], D["int64"]))
    cx = _DispatchDtypes((D["complex64"], D["complex128"]))
    groups = {
        "empty_types": _DispatchDtypes(()), "floating_types": fl,
        "floating_types_and_half": fl + (D["float16"],),
        "floating_and_complex_types": fl + cx,
        "double_types": _DispatchDtypes((D["float64"], D["complex128"])),
        "integral_types": it, "all_types": fl + it, "complex_types": cx,
        "all_types_and_complex": fl + it + cx, "all_types_and_half": fl + it + (D["float16"],),
    }
    for gname, value in groups.items():
        setattr(cd, gname, (lambda v: (lambda: v))(value))
    for base in ("floating_types", "floating_and_complex_types", "integral_types", "all_types",
                 "complex_types", "all_types_and_complex"):
        setattr(cd, base + "_and", (lambda v: (lambda *ds: v + tuple(ds)))(groups[base]))
    cd.custom_types = lambda *ds: _DispatchDtypes(()) + tuple(ds)
    cd._dispatch_dtypes = _DispatchDtypes

    def get_all_dtypes(include_half=True, include_bfloat16=True, include_bool=True,
                       include_complex=True, include_complex32=False, include_qint=False):
        out = list(it) + [D["float32"], D["float64"]]
        if include_half:
            out.append(D["float16"])
        if include_bfloat16:
            out.append(D["bfloat16"])
        if include_bool:
            out.append(D["bool"])
        if include_complex:
            out += ([D["complex32"]] if include_complex32 else []) + list(cx)
        if include_qint:
            out += [D[n] for n in ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")]
        return out

    cd.get_all_dtypes = get_all_dtypes
    return cd


class OpDTypesStub(enum.Enum):
    supported = 0
    unsupported = 1
    supported_backward = 2
    unsupported_backward = 3
    any_one = 4
    none = 5
    any_common_cpu_cuda_one = 6


def build_common_device_type_stub(name):
    """Our own common_device_type, used only when the real file is missing or fails:
    decorators other than ops pass through."""
    cdt = new_stub_module(name, package=False)
    cdt.OpDTypes = OpDTypesStub
    install_ops_recorder(cdt)
    return cdt


# --------------------------------------------------------------------------------------------
# Entries: a recording __new__ on the real OpInfo.

class EntryRec:
    __slots__ = ("obj", "cls", "nargs", "kwnames", "file", "line", "module_file", "module_line")

    def __init__(self, obj, cls, args, kwargs, frame):
        self.obj, self.cls = obj, cls
        self.nargs, self.kwnames = len(args), sorted(kwargs)
        self.file, self.line = frame.f_code.co_filename, frame.f_lineno
        # An entry made by a helper function or a loop: where its module-level statement is.
        f = frame
        while f is not None and f.f_code.co_name != "<module>":
            f = f.f_back
        self.module_file = f.f_code.co_filename if f is not None else None
        self.module_line = f.f_lineno if f is not None else None


def install_entry_recorder(core):
    opinfo = getattr(core, "OpInfo", None)
    if not isinstance(opinfo, type):
        record_error(getattr(core, "__file__", None), None, "opinfo.core",
                     "no OpInfo class after executing core.py")
        return
    State.opinfo_cls = opinfo
    State.decorateinfo_cls = getattr(core, "DecorateInfo", None)
    previous = opinfo.__dict__.get("__new__")

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls) if previous is None else previous.__func__(cls, *args, **kwargs)
        if args or kwargs:      # a constructor call (copy/pickle create without arguments)
            State.entries.append(EntryRec(obj, cls, args, kwargs, sys._getframe(1)))
        return obj

    opinfo.__new__ = staticmethod(__new__)


# --------------------------------------------------------------------------------------------
# The ops recorder.

class OpsRecord:
    def __init__(self, op_list, dtypes, allowed_dtypes, file, line):
        self.op_list = op_list
        self.dtypes = dtypes
        self.allowed_dtypes = allowed_dtypes
        self.file, self.line = file, line
        self.functions = []
        self.stub_dependent = None


def install_ops_recorder(cdt):
    opdtypes = getattr(cdt, "OpDTypes", None)
    if not (isinstance(opdtypes, type) and issubclass(opdtypes, enum.Enum)):
        opdtypes = OpDTypesStub
        cdt.OpDTypes = opdtypes
    State.opdtypes = opdtypes
    real_ops = cdt.__dict__.get("ops")
    if isinstance(real_ops, type) and hasattr(real_ops, "_parametrize_test"):
        State.real_ops_cls = real_ops

    def ops(op_list, *, dtypes=opdtypes.supported, allowed_dtypes=None, skip_if_dynamo=True):
        f = sys._getframe(1)
        rec = OpsRecord(list(op_list), dtypes, allowed_dtypes, f.f_code.co_filename, f.f_lineno)
        start = State.deco_touch_start
        rec.stub_dependent = None if start is None else TOUCH[0] > start
        State.ops_records.append(rec)

        def decorate(fn):
            rec.functions.append(fn)
            try:
                fn._opdb_ops = rec
            except (AttributeError, TypeError):
                pass
            return fn

        return decorate

    ops.__qualname__ = ops.__name__ = "ops"
    cdt.ops = ops

    def instantiate_device_type_tests(generic_test_class, scope=None, except_for=None,
                                      only_for=None, include_lazy=False, allow_mps=False):
        kwargs = {}
        for k, v in (("except_for", except_for), ("only_for", only_for)):
            if v is not None:
                kwargs[k] = sorted([v] if isinstance(v, str) else list(v))
        State.instantiations.append({"kind": "device",
                                     "class": getattr(generic_test_class, "__name__", "?"),
                                     "kwargs": kwargs})

    cdt.instantiate_device_type_tests = instantiate_device_type_tests


ANY_DTYPE_ORDER = ("float32", "float64", "complex64", "complex128", "float16", "bfloat16",
                   "int64", "int32", "int16", "int8", "uint8", "bool")


def _all_dtypes():
    cd = sys.modules.get("torch.testing._internal.common_dtype")
    return set(cd.get_all_dtypes())


def _backward_dtypes_cpu(op):
    if not op.supports_autograd:
        return set()
    allowed = {DTYPES[n] for n in ("float32", "float64", "complex64", "complex128", "bfloat16",
                                   "float16", "complex32")}
    return allowed & set(op.backward_dtypes)


def mirror_cpu_dtypes(op, mode, allowed):
    """The dtypes common_device_type.ops instantiates `op` with on CPU (our own reading)."""
    OpD = State.opdtypes
    from collections.abc import Sequence
    if isinstance(mode, Sequence):
        dts = set(mode)
    elif mode == OpD.unsupported_backward:
        dts = _all_dtypes() - _backward_dtypes_cpu(op)
    elif mode == OpD.supported_backward:
        dts = _backward_dtypes_cpu(op)
    elif mode == OpD.unsupported:
        dts = _all_dtypes() - set(op.dtypes)
    elif mode == OpD.supported:
        dts = set(op.dtypes)
    elif mode == OpD.any_one:
        sup = set(op.dtypes)
        both = sup & _backward_dtypes_cpu(op)
        pool = both if both else sup
        dts = set()
        for n in ANY_DTYPE_ORDER:
            if DTYPES[n] in pool:
                dts = {DTYPES[n]}
                break
    elif mode == OpD.any_common_cpu_cuda_one:
        common = set(op.dtypes) & set(op.dtypesIfCUDA)
        dts = set()
        for n in ANY_DTYPE_ORDER:
            if DTYPES[n] in common:
                dts = {DTYPES[n]}
                break
    elif mode == OpD.none:
        dts = {None}
    else:
        raise RuntimeError(f"Unknown OpDType: {mode}")
    if allowed is not None:
        dts = dts & set(allowed)
    return dts


def real_cpu_instantiation(rec, fn, cls):
    """The same through the real common_device_type.ops._parametrize_test."""
    real = State.real_ops_cls(rec.op_list, dtypes=rec.dtypes, allowed_dtypes=rec.allowed_dtypes)
    cpu = type("CPUTestBase", (), {"device_type": "cpu"})
    out = {}
    for _wrapper, test_name, param_kwargs, _deco in real._parametrize_test(fn, cls, cpu):
        if "dtype" in param_kwargs:
            d = dtype_name(param_kwargs["dtype"])
        elif "dtypes" in param_kwargs:
            d = ",".join(dtype_name(x) for x in param_kwargs["dtypes"])
        else:
            d = None
        out.setdefault(test_name, set()).add(d)
    return out


# --------------------------------------------------------------------------------------------
# Executing real files statement by statement.

def _future_flags(tree):
    import __future__
    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for a in stmt.names:
                feat = getattr(__future__, a.name, None)
                if feat is not None:
                    flags |= feat.compiler_flag
    return flags


def _list_literal_target(stmt):
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name):
        target, value = stmt.targets[0].id, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
        target, value = stmt.target.id, stmt.value
    else:
        return None, None
    if isinstance(value, (ast.List, ast.Tuple)):
        return target, value
    return None, None


def exec_statements(tree, filename, g):
    flags = _future_flags(tree)
    for stmt in tree.body:
        code = compile(ast.Module([stmt], []), filename, "exec", flags=flags, dont_inherit=True)
        mark = len(State.entries)
        marks = (len(State.errors), len(State.ops_records), len(State.instantiations))
        try:
            exec(code, g)
            continue
        except (Exception, SystemExit) as exc:
            failure = exc
        if isinstance(stmt, ast.ClassDef):
            # The rebuild evaluates the body again: forget what the failed attempt recorded.
            del State.entries[mark:]
            del State.errors[marks[0]:]
            del State.ops_records[marks[1]:]
            del State.instantiations[marks[2]:]
            record_error(filename, _exc_line(failure, filename) or stmt.lineno,
                         "class rebuilt statement by statement", failure, name=stmt.name)
            exec_class_fallback(stmt, filename, g, flags)
            continue
        target, value = _list_literal_target(stmt)
        if target is None:
            record_error(filename, _exc_line(failure, filename) or stmt.lineno, "statement",
                         failure, statement_line=stmt.lineno)
            continue
        # Rebuild the list element by element; the failed attempt's entries are dropped.
        del State.entries[mark:]
        record_error(filename, stmt.lineno, "list rebuilt element by element", failure,
                     name=target)
        items = []
        for elt in value.elts:
            node = elt.value if isinstance(elt, ast.Starred) else elt
            expr = ast.Expression(node)
            ast.fix_missing_locations(expr)
            mark = len(State.entries)
            try:
                v = eval(compile(expr, filename, "eval", flags=flags, dont_inherit=True), g)
            except (Exception, SystemExit) as exc:
                del State.entries[mark:]        # constructed in part only
                record_error(filename, elt.lineno, "list element skipped", exc, name=target)
                continue
            if isinstance(elt, ast.Starred):
                items.extend(v)
            else:
                items.append(v)
        g[target] = items if isinstance(value, ast.List) else tuple(items)


def exec_class_fallback(stmt, filename, g, flags):
    """A class whose body failed: run the body one statement at a time in its namespace, skip
    what fails (recorded), then create the class. (Private-name mangling is lost.)"""
    def ev(node):
        expr = ast.Expression(node)
        ast.fix_missing_locations(expr)
        return eval(compile(expr, filename, "eval", flags=flags, dont_inherit=True), g)
    try:
        bases = tuple(ev(b) for b in stmt.bases)
        kwds = {k.arg: ev(k.value) for k in stmt.keywords}
        decos = [ev(d) for d in stmt.decorator_list]
    except Exception as exc:
        record_error(filename, stmt.lineno, "class bases not evaluated", exc, name=stmt.name)
        return
    resolved = types.resolve_bases(bases)
    meta, ns, kwds = types.prepare_class(stmt.name, resolved, kwds)
    ns["__module__"] = g.get("__name__")
    ns["__qualname__"] = stmt.name
    for s in stmt.body:
        code = compile(ast.Module([s], []), filename, "exec", flags=flags, dont_inherit=True)
        try:
            exec(code, g, ns)
        except (Exception, SystemExit) as exc:
            record_error(filename, _exc_line(exc, filename) or s.lineno,
                         "class body statement", exc, name=stmt.name)
    if resolved is not bases:
        ns["__orig_bases__"] = bases
    try:
        cls = meta(stmt.name, resolved, ns, **kwds)
        for d in reversed(decos):
            cls = d(cls)
    except Exception as exc:
        record_error(filename, stmt.lineno, "class not created", exc, name=stmt.name)
        return
    g[stmt.name] = cls


def real_file(fullname):
    """The real file serving module `fullname`, or None (then it is a stub)."""
    prefix = "torch.testing._internal."
    if State.root is None or not fullname.startswith(prefix):
        return None
    relmod = fullname[len(prefix):]
    if relmod.split(".")[0] not in REAL_INTERNAL:
        return None
    base = os.path.join(State.root, "torch", "testing", "_internal", *relmod.split("."))
    if os.path.isfile(os.path.join(base, "__init__.py")):
        return os.path.join(base, "__init__.py")
    if os.path.isfile(base + ".py"):
        return base + ".py"
    return None


STUB_BUILDERS = {
    "torch.testing._internal.common_utils": build_common_utils,
    "torch.testing._internal.common_cuda": build_common_cuda,
}
FALLBACKS = {
    "torch.testing._internal.common_dtype": build_common_dtype_stub,
    "torch.testing._internal.common_device_type": build_common_device_type_stub,
}


class RealLoader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        with open(self.path, encoding="utf-8") as f:
            source = f.read()
        tree = ast.parse(source, self.path)
        nerr = len(State.errors)
        exec_statements(tree, self.path, module.__dict__)
        failed = len(State.errors) > nerr
        if name in FALLBACKS and failed:
            # Keep the truth honest: a partly executed helper module is replaced by our own.
            record_error(self.path, None, "module replaced by own stub",
                         "statements failed; using the tool's own stub for " + name)
            stub = FALLBACKS[name](name)
            module.__dict__.clear()
            module.__dict__.update(stub.__dict__)
            module.__class__ = StubModule
        post_load(name, module)


class StubLoader(importlib.abc.Loader):
    def __init__(self, premade=None):
        self.premade = premade

    def create_module(self, spec):
        name = spec.name
        if self.premade is not None:
            return self.premade
        if name in STUB_BUILDERS:
            return STUB_BUILDERS[name](name)
        if name in FALLBACKS:
            return FALLBACKS[name](name)
        return new_stub_module(name)

    def exec_module(self, module):
        post_load(module.__name__, module)


def post_load(name, module):
    if name == "torch.testing._internal.opinfo.core":
        install_entry_recorder(module)
    elif name == "torch.testing._internal.common_device_type":
        if not module.__dict__.get("_opdb_stub"):     # our own stub has its recorder already
            install_ops_recorder(module)


class Finder(importlib.abc.MetaPathFinder):
    def __init__(self, premade, tail=False):
        self.premade = premade
        self.tail = tail

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.premade:
            m = self.premade[fullname]
            return importlib.machinery.ModuleSpec(fullname, StubLoader(m),
                                                  is_package=hasattr(m, "__path__"))
        rf = real_file(fullname)
        if rf:
            spec = importlib.util.spec_from_file_location(
                fullname, rf, loader=RealLoader(rf),
                submodule_search_locations=[os.path.dirname(rf)]
                if rf.endswith("__init__.py") else None)
            return spec
        top = fullname.split(".")[0]
        if self.tail or top in STUB_TOPS:
            return importlib.machinery.ModuleSpec(fullname, StubLoader(), is_package=True)
        return None


def install_hook(root):
    State.root = os.path.abspath(root)
    premade = {}
    premade.update(build_torch())
    premade.update(build_numpy())
    premade.update(build_scipy())
    premade.update(build_packaging())
    premade.update(build_torchgen())
    for name in list(sys.modules):
        if name.split(".")[0] in STUB_TOPS:
            del sys.modules[name]
    sys.meta_path.insert(0, Finder(premade))
    sys.meta_path.append(Finder({}, tail=True))


# --------------------------------------------------------------------------------------------
# Test files: guarded decorators.

def _deco_start():
    State.deco_touch_start = TOUCH[0]


def _deco_end():
    State.deco_touch_start = None


class FailedDecorator:
    def __init__(self, exc, line, src):
        self.exc, self.line, self.src = exc, line, src


_OPS_SRC = re.compile(r"^[\w.]*ops\(")


def _apply_decorators(fn, decos, line, srcs):
    file = State.current_test_file
    for d, src in zip(reversed(decos), reversed(srcs)):
        if isinstance(d, FailedDecorator):
            qual = getattr(fn, "__qualname__", getattr(fn, "__name__", "?"))
            record_error(file, d.line, "decorator not evaluated", d.exc, test=qual,
                         decorator=src[:200])
            if _OPS_SRC.match(src):
                State.ops_records.append(("failed", qual, d, src))
            continue
        try:
            fn = d(fn)
        except Exception as exc:
            qual = getattr(fn, "__qualname__", getattr(fn, "__name__", "?"))
            record_error(file, line, "decorator failed", exc, test=qual, decorator=src[:200])
    try:
        fn._opdb_decorators = list(srcs)
    except (AttributeError, TypeError):
        pass
    return fn


def _guard_body(stmts, counter):
    out = []
    for stmt in stmts:
        if isinstance(stmt, ast.ClassDef):
            stmt.body = _guard_body(stmt.body, counter)
        elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if getattr(stmt, field, None):
                    setattr(stmt, field, _guard_body(getattr(stmt, field), counter))
            for h in getattr(stmt, "handlers", []):
                h.body = _guard_body(h.body, counter)
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or \
                not stmt.decorator_list:
            out.append(stmt)
            continue
        tmps, srcs = [], []
        for d in stmt.decorator_list:
            counter[0] += 1
            tmp = f"_opdb_deco_{counter[0]}"
            tmps.append(tmp)
            srcs.append(ast.unparse(d))
            guard = ast.Try(
                body=[ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=d)],
                handlers=[ast.ExceptHandler(
                    type=ast.Name("Exception", ast.Load()), name="_opdb_exc",
                    body=[ast.Assign(
                        targets=[ast.Name(tmp, ast.Store())],
                        value=ast.Call(ast.Name("_opdb_failed_decorator", ast.Load()),
                                       [ast.Name("_opdb_exc", ast.Load()),
                                        ast.Constant(d.lineno), ast.Constant(srcs[-1])], []))])],
                orelse=[], finalbody=[
                    ast.Expr(ast.Call(ast.Name("_opdb_deco_end", ast.Load()), [], []))])
            out.append(ast.copy_location(
                ast.Expr(ast.Call(ast.Name("_opdb_deco_start", ast.Load()), [], [])), d))
            out.append(ast.copy_location(guard, d))
        stmt.decorator_list = []
        out.append(stmt)
        apply = ast.Assign(
            targets=[ast.Name(stmt.name, ast.Store())],
            value=ast.Call(ast.Name("_opdb_apply_decorators", ast.Load()),
                           [ast.Name(stmt.name, ast.Load()),
                            ast.List([ast.Name(t, ast.Load()) for t in tmps], ast.Load()),
                            ast.Constant(stmt.lineno),
                            ast.List([ast.Constant(s) for s in srcs], ast.Load())], []))
        out.append(ast.copy_location(apply, stmt))
        out.append(ast.copy_location(
            ast.Delete(targets=[ast.Name(t, ast.Del()) for t in tmps]), stmt))
    for node in out:
        ast.fix_missing_locations(node)
    return out


def _unwrap_ops(value):
    seen = 0
    while value is not None and seen < 20:
        rec = getattr(value, "__dict__", {}).get("_opdb_ops") if hasattr(value, "__dict__") \
            else None
        if rec is not None:
            return rec, value
        value = getattr(value, "__wrapped__", None)
        seen += 1
    return None, None


def _is_test_method(name, value):
    return name.startswith("test") and (inspect.isfunction(value) or
                                        inspect.isfunction(getattr(value, "__wrapped__", None)))


def _deco_count(op):
    try:
        return len(tuple(getattr(op, "decorators", ()) or ()))
    except TypeError:
        return 0


def added_decorators():
    """DecorateInfos a test file added to database entries (common_methods_invocations.skipOps
    appends to op.decorators while the file's decorators are evaluated)."""
    out = []
    for i in range(State.db_entries):
        op = State.entries[i].obj
        before = State.deco_counts[i]
        decs = tuple(getattr(op, "decorators", ()) or ())
        if len(decs) <= before:
            continue
        skips, others = describe_decorators(op, decs[before:])
        for item in skips + others:
            item = dict(item, entry=i, name=_name(op), variant_test_name=_variant(op))
            out.append(item)
    return sorted(out, key=lambda x: json.dumps(x, sort_keys=True))


def run_test_file(path):
    """Execute one test file; returns its facts (JSON-ready)."""
    relpath = rel(path)
    modname = os.path.splitext(os.path.basename(path))[0]
    State.current_test_file = path
    State.ops_records = []
    State.instantiations = []
    errors_mark = len(State.errors)
    entries_mark = len(State.entries)
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    tree.body = _guard_body(tree.body, [0])
    module = types.ModuleType(modname)
    module.__file__ = path
    module.__dict__["_opdb_failed_decorator"] = FailedDecorator
    module.__dict__["_opdb_apply_decorators"] = _apply_decorators
    module.__dict__["_opdb_deco_start"] = _deco_start
    module.__dict__["_opdb_deco_end"] = _deco_end
    sys.modules[modname] = module
    exec_statements(tree, path, module.__dict__)

    inst = {}
    for i in State.instantiations:
        inst.setdefault(i["class"], []).append({"kind": i["kind"], "kwargs": i["kwargs"]})

    ops_tests, plain, found = {}, {}, set()
    classes = [v for v in module.__dict__.values()
               if isinstance(v, type) and v.__module__ == modname]
    for cls in sorted(classes, key=lambda c: c.__qualname__):
        for attr, value in cls.__dict__.items():
            rec, fn = _unwrap_ops(value)
            if rec is None:
                if _is_test_method(attr, value):
                    plain.setdefault(f"{relpath}::{cls.__name__}", []).append(attr)
                continue
            key = f"{relpath}::{cls.__name__}::{attr}"
            ops_tests[key] = describe_ops_test(rec, fn, cls, inst)
            found.add(id(rec))
    for rec in State.ops_records:
        if isinstance(rec, tuple):      # a failed @ops decorator
            _, qual, failed, src = rec
            cls_name, _, meth = qual.rpartition(".")
            key = f"{relpath}::{cls_name}::{meth}"
            error = _clean(f"{type(failed.exc).__name__}: {failed.exc}")[:500]
            ops_tests.setdefault(key, {"error": error, "decorator": src[:300],
                                       "line": failed.line, "ops": None})
            continue
        if id(rec) in found:
            continue
        for fn in rec.functions or [None]:
            qual = getattr(fn, "__qualname__", "<not applied>")
            cls_name, _, meth = qual.rpartition(".")
            key = f"{relpath}::{cls_name}::{meth}"
            if key in ops_tests:
                continue
            d = describe_ops_test(rec, fn, None, inst)
            d["note"] = "not found as a method of a module-level class"
            ops_tests[key] = d
    return {"ops_tests": ops_tests,
            "plain_tests": {k: sorted(v) for k, v in plain.items()},
            "instantiations": {f"{relpath}::{k}": v for k, v in sorted(inst.items())},
            "lists": {k: v for k, v in module_lists(module.__dict__, f"{relpath}:").items()
                      if id(v) not in State.db_list_ids},
            "added_skips": added_decorators(),
            "errors": State.errors[errors_mark:],
            "entries_created": len(State.entries) - entries_mark}


def _mode_name(mode):
    if isinstance(mode, enum.Enum):
        return mode.name
    return "explicit"


def describe_ops_test(rec, fn, cls, inst):
    file = rec.file
    d = {"line": rec.line, "ops": [[_name(op), _variant(op)] for op in rec.op_list],
         "op_entries": [_entry_index(op) for op in rec.op_list],
         "dtypes_mode": _mode_name(rec.dtypes),
         "allowed_dtypes": dtype_names(rec.allowed_dtypes),
         "decorators": list(getattr(fn, "_opdb_decorators", []) or []),
         "stub_dependent": rec.stub_dependent}
    if d["dtypes_mode"] == "explicit":
        d["dtypes"] = dtype_names(rec.dtypes)
    cls_name = cls.__name__ if cls is not None else None
    if cls_name is not None:
        how = inst.get(cls_name, [])
        cpu = False
        for h in how:
            if h["kind"] != "device":
                continue
            only, exc = h["kwargs"].get("only_for"), h["kwargs"].get("except_for")
            if (only is None or "cpu" in only) and (exc is None or "cpu" not in exc):
                cpu = True
        d["cpu_instantiated"] = cpu
    mirror = {}
    try:
        for op in rec.op_list:
            key = getattr(op, "formatted_name", _name(op))
            dts = mirror_cpu_dtypes(op, rec.dtypes, rec.allowed_dtypes)
            if key in mirror:
                record_error(file, rec.line, "duplicate formatted_name in op list", key,
                             test=getattr(fn, "__qualname__", "?"))
            mirror.setdefault(key, set()).update(dtype_name(x) for x in dts)
    except Exception as exc:
        record_error(file, rec.line, "dtype instantiation", exc,
                     test=getattr(fn, "__qualname__", "?"))
    d["instantiated"] = {k: _sorted_dts(v) for k, v in mirror.items()}
    if State.real_ops_cls is not None and fn is not None:
        try:
            real = real_cpu_instantiation(rec, fn, cls or type("Generic", (), {}))
            real = {k: _sorted_dts(v) for k, v in real.items()}
            mine = {k: v for k, v in d["instantiated"].items() if v}
            if real != mine:
                diff = sorted(k for k in set(real) | set(mine) if real.get(k) != mine.get(k))
                record_error(file, rec.line, "mirror disagrees with real ops._parametrize_test",
                             f"{len(diff)} ops differ: {diff[:10]}",
                             test=getattr(fn, "__qualname__", "?"))
        except Exception as exc:
            record_error(file, rec.line, "real ops._parametrize_test", exc,
                         test=getattr(fn, "__qualname__", "?"))
    return d


def _sorted_dts(ds):
    return sorted(ds, key=lambda x: (x is not None, x or ""))


# --------------------------------------------------------------------------------------------
# Describing entries and lists.

_ENTRY_INDEX = {}


def _name(op):
    return getattr(op, "name", None)


def _variant(op):
    return getattr(op, "variant_test_name", None)


def _entry_index(op):
    return _ENTRY_INDEX.get(id(op))


def _func_name(f):
    if f is None:
        return None
    while isinstance(f, functools.partial):
        f = f.func
    if isinstance(f, Stub):
        return "<stub>"
    n = getattr(f, "__name__", None)
    if n is None:
        n = type(f).__name__
    return n


def _deco_kind(d):
    if d is unittest.expectedFailure:
        return "xfail"
    qn = getattr(d, "__qualname__", "") or ""
    mod = getattr(d, "__module__", "") or ""
    if mod == "unittest.case" and qn == "skip.<locals>.decorator":
        return "skip"
    if mod == "unittest.case" and qn == "_id":
        return "noop"
    if isinstance(d, Stub):
        return "<stub>"
    return getattr(d, "__name__", None) or type(d).__name__


def _is_decorateinfo(d):
    cls = State.decorateinfo_cls
    if isinstance(cls, type):
        return isinstance(d, cls)
    return hasattr(d, "cls_name") and hasattr(d, "test_name")


def describe_decorators(op, decorators=None):
    skips, others = [], []
    if decorators is None:
        decorators = getattr(op, "decorators", ()) or ()
    for d in decorators:
        if _is_decorateinfo(d):
            kinds = [_deco_kind(x) for x in getattr(d, "decorators", [])]
            active = getattr(d, "active_if", True)
            item = {"cls_name": d.cls_name, "test_name": d.test_name,
                    "device_type": getattr(d, "device_type", None),
                    "dtypes": dtype_names(getattr(d, "dtypes", None)),
                    "active_if": "callable" if callable(active) else bool(active),
                    "decorators": kinds}
            if "skip" in kinds or "xfail" in kinds:
                item["kind"] = "skip" if "skip" in kinds else "xfail"
                skips.append(item)
            else:
                others.append(item)
        else:
            others.append({"decorators": [_deco_kind(d)]})
    return skips, others


def describe_entry(i, r):
    op = r.obj
    try:
        aliases = [getattr(a, "name", a) for a in (getattr(op, "aliases", ()) or ())]
    except TypeError:
        aliases = []
    skips, others = describe_decorators(op)
    e = {"index": i, "file": rel(r.file), "line": r.line, "class": r.cls.__name__,
         "module_statement": [rel(r.module_file), r.module_line] if r.module_file else None,
         "name": _name(op), "variant_test_name": _variant(op),
         "formatted_name": _safe(lambda: op.formatted_name),
         "aten_name": getattr(op, "aten_name", None), "aliases": aliases,
         "dtypes": dtype_names(getattr(op, "dtypes", None)),
         "sample_inputs_func": _func_name(getattr(op, "sample_inputs_func", None)),
         "reference_inputs_func": _func_name(getattr(op, "reference_inputs_func", None)),
         "has_ref": getattr(op, "ref", None) is not None,
         "skips": skips, "other_decorators": others,
         "ctor": {"positional": r.nargs, "keywords": r.kwnames}}
    for attr in ("supports_out", "supports_autograd", "supports_sparse", "supports_sparse_csr"):
        v = getattr(op, attr, None)
        if isinstance(v, bool):
            e[attr] = v
    if not hasattr(op, "dtypes"):
        e["incomplete"] = True
    return e


def _safe(f):
    try:
        v = f()
        return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)
    except Exception:
        return None


def module_lists(g, prefix=""):
    out = {}
    cls = State.opinfo_cls
    if not isinstance(cls, type):
        return out
    for k, v in g.items():
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, cls) for x in v):
            out[prefix + k] = v
    return out


# --------------------------------------------------------------------------------------------
# Driver.

def load_database():
    name = "torch.testing._internal.common_methods_invocations"
    if not real_file(name):
        raise SystemExit(f"no {name} under {State.root}")
    cmi = importlib.import_module(name)
    lists = module_lists(cmi.__dict__)
    for modname, mod in sorted(sys.modules.items()):
        if modname.startswith("torch.testing._internal.opinfo.definitions") and mod is not None:
            short = modname[len("torch.testing._internal."):]
            lists.update(module_lists(mod.__dict__, short + "."))
    State.db_list_ids = {id(v) for v in lists.values()}
    State.db_entries = len(State.entries)
    State.deco_counts = [_deco_count(r.obj) for r in State.entries]
    return cmi, lists


def run_in_child(fn, *args):
    """fn(*args) in a forked child; its JSON-ready result comes back through a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            data = json.dumps({"ok": fn(*args)})
        except BaseException as exc:   # noqa: BLE001 - the child must always answer
            data = json.dumps({"fail": f"{type(exc).__name__}: {exc}",
                               "trace": traceback.format_exc()[-2000:]})
        with os.fdopen(w, "w") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        return {"fail": "child died without an answer"}


def _jsonable_test_result(path):
    res = run_test_file(path)
    for k, v in res["lists"].items():
        res["lists"][k] = [[_name(op), _variant(op)] for op in v]
    return res


def build(root, test_files=None):
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    install_hook(root)
    cmi, lists = load_database()
    entries = []
    for i, r in enumerate(State.entries):
        _ENTRY_INDEX[id(r.obj)] = i
        entries.append(describe_entry(i, r))
    out = {"entries": entries,
           "lists": {k: [[_name(op), _variant(op)] for op in v] for k, v in lists.items()},
           "list_entries": {k: [_entry_index(op) for op in v] for k, v in lists.items()},
           "ops_tests": {}, "plain_tests": {}, "instantiations": {},
           "assumptions": ASSUMPTIONS, "test_files": {}, "test_file_skips": {}}
    if test_files is None:
        tdir = os.path.join(State.root, "test")
        test_files = sorted(os.path.join(tdir, f) for f in os.listdir(tdir)
                            if f.startswith("test_") and f.endswith(".py")) \
            if os.path.isdir(tdir) else []
    for path in test_files:
        res = run_in_child(_jsonable_test_result, path)
        relpath = rel(path)
        if "ok" not in res:
            record_error(path, None, "test file", res.get("fail"), trace=res.get("trace", ""))
            out["test_files"][relpath] = {"ops_tests": 0, "failed": True}
            continue
        res = res["ok"]
        out["ops_tests"].update(res["ops_tests"])
        out["plain_tests"].update(res["plain_tests"])
        out["instantiations"].update(res["instantiations"])
        out["lists"].update(res["lists"])
        State.errors.extend(res["errors"])
        out["test_files"][relpath] = {"ops_tests": len(res["ops_tests"]),
                                      "entries_created": res["entries_created"]}
        if res["added_skips"]:
            out["test_file_skips"][relpath] = res["added_skips"]
    out["errors"] = sorted(State.errors, key=lambda e: (e.get("file") or "", e.get("line") or 0,
                                                        e.get("where", ""), e.get("error", "")))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", help="a PyTorch tree (torch/testing/_internal and test/)")
    ap.add_argument("--out", help="where to write the JSON")
    ap.add_argument("--test", action="append", default=None,
                    help="only this test file (relative to --root/test or a path); repeatable")
    ap.add_argument("--selftest", action="store_true",
                    help="run tests/tools/opdb_truth_selftest.py")
    args = ap.parse_args(argv)
    if args.selftest:
        here = os.path.dirname(os.path.abspath(__file__))
        import subprocess
        return subprocess.call([sys.executable, os.path.join(here, "opdb_truth_selftest.py")])
    if not args.root or not args.out:
        ap.error("--root and --out are required")
    tests = None
    if args.test:
        tests = [t if os.path.isfile(t) else os.path.join(args.root, "test", t)
                 for t in args.test]
        tests = [os.path.abspath(t) for t in tests]
    out = build(args.root, tests)
    text = json.dumps(out, indent=1, sort_keys=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"{len(out['entries'])} entries, {len(out['lists'])} lists, "
          f"{len(out['ops_tests'])} @ops tests, {len(out['errors'])} errors -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
