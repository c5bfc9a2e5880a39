"""What a traced test may have read, and what a commit changed in torch's imported namespaces.

Used by trace_tests.py truth (see docs/fixture.md, "Affordable at scale pytorch"): a commit
that changes module-level code of torch's own modules dirties only the tests that may have read
a name whose value differs between the two revisions' imported torch.
"""

import functools
import hashlib
import os
import sys
import types


_roots = {}  # root -> its real path and a separator, resolved once


def module_file(root, name):
    """The path of module `name`'s file under `root`, None when it is not in the tree."""
    m = sys.modules.get(name)
    f = getattr(m, "__file__", None)
    if not f:
        return None
    f = os.path.realpath(f)
    r = _roots.get(root) or _roots.setdefault(root, os.path.realpath(root) + os.sep)
    return f[len(r):] if f.startswith(r) else None


# Names whose call reads a module's namespace with no name in the calling code: code that may
# call one counts as reading every name ("*"). getattr(module, name), "from m import x",
# vars(module) and "import *" go through the module's attribute lookup, which ReadingModule
# records; globals() and eval/exec read the caller's namespace directly.
COMPUTED = frozenset(("globals", "locals", "eval", "exec", "reload"))
WHOLE = frozenset(("__dict__", "__dir__"))  # a module's whole namespace, read at once


class ReadingModule(types.ModuleType):
    """A module of the tree whose attribute lookups (by any code: getattr with a computed
    name, the import system's "from m import x", vars()) are recorded by name."""

    reads = None

    def __getattribute__(self, name):
        r = ReadingModule.reads
        if r is not None:
            r.add(name)
        return types.ModuleType.__getattribute__(self, name)


def record_module_reads(root, names):
    for name in names:
        m = sys.modules.get(name)
        if module_file(root, name) is not None and type(m) is types.ModuleType:
            m.__class__ = ReadingModule


# The import system reads the attributes an import statement names (in the importing code's
# co_names), a module's dunders, and for "import *" every name (the importing code says so).
IMPORT_SYSTEM = ("<frozen importlib._bootstrap", "<frozen zipimport")
IMPORT_HOOKS = ("/_distutils_hack/",)  # setuptools' finder on sys.meta_path


def code_names(code, path):
    """The names `code` (of file `path`) may read from a namespace: co_names (globals,
    attributes, imported names; a dotted import adds its parts), and "*:PATH" (any name of its
    own module) when it reads its own globals by a computed name."""
    out = set()
    for n in code.co_names:
        out.update(n.split("."))
        out.add(n)
    if out & COMPUTED:
        out.add("*:" + path)
    return out


def test_names(tracer, keys, extra=()):
    """The names a test's run may have read: those of every code object it executed."""
    out = set(extra)
    for k in keys:
        out |= tracer.names.get(k, set())
    return out


def token(v, depth, seen):
    """A value as text that two interpreters print alike when the value is alike: functions by
    their code's place (a changed body is a changed function already), with their defaults,
    closure and attributes; classes and objects by their attributes; containers by their
    items. Past `depth`, or on a cycle, a value is never alike ("?" and a fresh number)."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return repr(v)[:256]
    if depth <= 0 or id(v) in seen:
        return fresh()
    if isinstance(v, types.ModuleType):
        return "mod:" + v.__name__
    seen = seen | {id(v)}
    d = depth - 1
    if isinstance(v, types.FunctionType):
        c = v.__code__
        cells = [token(x.cell_contents, d, seen) if _has_contents(x) else "<empty>"
                 for x in v.__closure__ or ()]
        return (f"fn:{c.co_filename}:{c.co_qualname}"
                f"({token(v.__defaults__, d, seen)},{token(v.__kwdefaults__, d, seen)},"
                f"{cells},{token(dict(vars(v)), d, seen)})")
    if isinstance(v, (types.BuiltinFunctionType, types.WrapperDescriptorType,
                      types.MethodDescriptorType)):
        return f"builtin:{getattr(v, '__module__', '')}.{getattr(v, '__qualname__', '')}"
    if isinstance(v, type):
        if v.__module__ in ("builtins", "abc", "typing", "enum", "unittest.case"):
            return f"cls:{v.__module__}.{v.__qualname__}"
        return (f"cls:{v.__module__}.{v.__qualname__}[{[b.__qualname__ for b in v.__bases__]}]"
                + token(dict(vars(v)), d, seen))
    if isinstance(v, (list, tuple, set, frozenset)):
        items = [token(x, d, seen) for x in v]
        return type(v).__name__ + str(sorted(items) if isinstance(v, (set, frozenset)) else items)
    if isinstance(v, dict):
        return "{" + ",".join(f"{token(k, d, seen)}:{token(x, d, seen)}"
                              for k, x in v.items() if k not in ("__weakref__",)) + "}"
    if isinstance(v, functools.partial):
        parts = (token(v.func, d, seen), token(v.args, d, seen), token(v.keywords, d, seen))
        return f"partial{parts}"
    if isinstance(v, (staticmethod, classmethod, property)):
        inner = getattr(v, "__func__", None) or getattr(v, "fget", None)
        return f"{type(v).__name__}({token(inner, d, seen)})"
    if isinstance(v, types.MethodType):
        return f"method({token(v.__func__, d, seen)},{token(v.__self__, d, seen)})"
    t = type(v)
    attrs = getattr(v, "__dict__", None)
    if attrs is None:  # an object of C with no attributes of its own: its repr, when stable
        r = repr(v)
        if " at 0x" in r:
            return fresh()
        return f"obj:{t.__module__}.{t.__qualname__}:{r[:256]}"
    return f"obj:{t.__module__}.{t.__qualname__}" + token(dict(attrs), d, seen)


def fresh():
    """A token no other value has, in this fingerprint or any other."""
    fresh.n += 1
    return f"?{fresh.nonce}-{fresh.n}"


fresh.n = 0
fresh.nonce = os.urandom(8).hex()
FILE = "\0file"  # a fingerprint's entry for its module's file
FP_DEPTH = 10


def _has_contents(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def fingerprint(root, names):
    """Per module of torch/ loaded: its names, each with the digest of its value's token, and,
    for a class, its attributes' ("Class.attr")."""
    out = {}
    prefix = os.path.realpath(root) + os.sep

    def digest(text):  # the same tree at another place prints alike
        return hashlib.blake2b(text.replace(prefix, "").encode("utf-8", "replace"),
                               digest_size=8).hexdigest()

    for name in sorted(names):
        if module_file(root, name) is None or not name.startswith("torch"):
            continue
        ns = {FILE: module_file(root, name)}
        for k, v in list(vars(sys.modules[name]).items()):
            if k in ("__builtins__", "__cached__", "__loader__", "__spec__", "__file__"):
                continue
            ns[k] = digest(token(v, FP_DEPTH, frozenset()))
            if isinstance(v, type) and v.__module__ == name:
                for ak, av in list(vars(v).items()):
                    ns[f"{k}.{ak}"] = digest(token(av, FP_DEPTH - 1, frozenset()))
        out[name] = ns
    return out


def changed_names(fp0, fp1):
    """The names whose value differs from one fingerprint to the other: a class attribute
    counts by its own name as well as its class's; a module that comes or goes, by its name,
    dotted and last."""
    out = set()
    for mod in set(fp0) | set(fp1):
        a, b = fp0.get(mod), fp1.get(mod)
        if a is None or b is None:
            # Reached only by its name (an import, its package's attribute, which changes in
            # the package's fingerprint too) or by running its code (whose functions are all
            # changed, as a file that comes or goes); a name it re-exports elsewhere changes
            # in that module's fingerprint.
            out.update((mod, mod.rpartition(".")[2], "*:" + (a or b)[FILE]))
            continue
        for k in set(a) | set(b):
            if a.get(k) != b.get(k):
                out.update(k.split("."))
                out.update(("*:" + a[FILE], "*:" + b[FILE]))
    return out


