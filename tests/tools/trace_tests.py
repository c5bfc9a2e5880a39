#!/usr/bin/env python3
"""Ground truth by execution for the generated upstream (`spyre-ci fixture upstream`).

The generator's static truth comes from its own call graph; this one comes from running the
tests. Each test of the upstream runs once under sys.setprofile, which records every function of
torch/ and test/ it executes ("torch/a/b.py::fn", "test/x.py::TestX.test_y",
"torch/x.py::outer.<locals>.inner"). A commit's truly affected tests are those whose executed
functions include one the commit changed, where "changed" comes from comparing the two sides of
each changed Python file with the ast module, function by function:

  - a function (method, nested function) whose definition differs: its key;
  - module-level code that differs (imports, constants, tables, lambdas at module level, class
    bodies, decorators, signatures): every test whose test file imports that module, directly
    or not (recorded with an __import__ hook while the test file loads);
  - a native op's YAML entry or C++ kernel: the op's Python face,
    torch/_C/_VariableFunctions.py::<op>, which every call of the op runs;
  - build files, test/conftest.py, test/run_test.py: every test.

Subcommands (stdlib only, python3 >= 3.11):
  trace  --root DIR [--files F ...] [--ids FILE] --out FILE
         run tests of a checked-out tree and write one JSON line per test:
         {"id": "test/x.py::TestX::test_y", "executed": [...]} (an instantiated device-generic
         test counts for its template), then {"file": ..., "modules": [...]} per test file (the
         modules its import reached beyond torch's own) and {"prelude": [...]} (torch's).
  truth  --repo DIR [--commits N] [--out FILE]
         walk the history in .ground_truth/commits.jsonl order, keeping a copy of torch/ and
         test/ at the current commit; trace every test at the first commit, then after each
         commit re-trace only the tests whose last trace may have changed, and write the truth
         of N single commits spread evenly (as bench-select-eval picks them; --contiguous:
         the last N, the walk starting at the first one's parent) to
         .ground_truth/commits_exec.jsonl. Traces run in forks of one interpreter that
         imported torch once (trace_fork.py; --no-fork: a new interpreter each); a
         module-level change to torch's own modules dirties the tests that read a name whose
         value changed (trace_names.py; --coarse: every test, the commit "affected_all").
         Each line is flushed as written (a run cut short leaves FILE.tmp readable);
         --progress also says so on stderr, a line per commit written.
  serve  --root DIR: the interpreter trace_fork.py forks (requests on stdin).
  check  --repo DIR
         trace every test at HEAD and compare with .ground_truth/tests.jsonl: the functions of
         torch/'s generated modules each test executed must be exactly those it statically
         reaches. Exit 1 on a difference.
  compare --repo DIR
         commits_exec.jsonl against commits.jsonl, commit by commit (see cmd_compare).

Why re-tracing only some tests is exact: a test's run depends only on the code it runs (the
upstream does no I/O and draws no random numbers). When a commit changes neither a function the
test executed nor module-level code of a module its test file imports, the test runs the very
same code after it, so its executed set stays. Otherwise the test is "dirty". A dirty test is
re-traced before the next commit whose truth is written; until then it is "stale" and counts as
dirty for every commit in between. Its executed set before a written commit is then the one
traced at that commit, which the generator's history makes exact (its commits change calls only
in tests they also change, or in fallback commits); --exact re-traces stale tests at the parent
too, at twice the cost. Module-level code of torch's own modules (imported by every test) is
the exception to "the test's file imports it": there a test is dirty when its run read a name
whose value differs between the two revisions' imported torch (trace_names.py says how both
are known, and docs/fixture.md why that is sound).
"""

import argparse
import ast
import builtins
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

NATIVE = "torch/_C/_VariableFunctions.py"
OPINFO_CORE = "torch/testing/_internal/opinfo/core.py::"
OPINFO = "opinfo::"  # an op database entry, used when its methods run with it as self
EVERY_TEST = ("setup.py", "CMakeLists.txt", "pyproject.toml", "test/conftest.py", "test/run_test.py")
TRUTH_LINE_MAX = 64 << 20

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_names import (  # noqa: E402 (this directory, put on the path above)
    IMPORT_HOOKS,
    IMPORT_SYSTEM,
    WHOLE,
    ReadingModule,
    changed_names,
    code_names,
    fingerprint,
    module_file,
    record_module_reads,
    test_names,
)


# ---------------------------------------------------------------- trace (runs in the tree)


class ImportRecorder:
    """Which modules each module imports (even when already loaded): an __import__ hook."""

    def __init__(self):
        self.edges = collections.defaultdict(set)
        self.orig = builtins.__import__
        self.bind = False  # trace_fork.py: a package imported again binds loaded submodules

    def __enter__(self):
        builtins.__import__ = self.hook
        return self

    def __exit__(self, *exc):
        builtins.__import__ = self.orig

    def hook(self, name, globals=None, locals=None, fromlist=(), level=0):
        mod = self.orig(name, globals, locals, fromlist, level)
        if self.bind and level == 0:
            bind_parents(name)
        importer = globals.get("__name__") if globals else None
        if importer and level == 0:
            parts = name.split(".")
            edges = self.edges[importer]
            for i in range(1, len(parts) + 1):
                edges.add(".".join(parts[:i]))
            for item in fromlist or ():
                if f"{name}.{item}" in sys.modules:
                    edges.add(f"{name}.{item}")
        return mod

    def closure(self, start, stop=frozenset()):
        """Every module `start` imports, directly or not, short of the ones in `stop`."""
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m not in seen and m not in stop:
                seen.add(m)
                todo.extend(self.edges.get(m, ()))
        return seen


def bind_parents(name):
    """What loading `name` does to its parents in a fresh interpreter, for modules that were
    loaded before their package was imported again: each is an attribute of its package."""
    parts = name.split(".")
    for i in range(1, len(parts)):
        parent = sys.modules.get(".".join(parts[:i]))
        child = sys.modules.get(".".join(parts[: i + 1]))
        if parent is not None and child is not None and parts[i] not in vars(parent):
            setattr(parent, parts[i], child)


class Tracer:
    """Records the torch/ and test/ functions a call runs, as "path::qualname" keys."""

    def __init__(self, root):
        self.prefix = os.path.realpath(root) + os.sep
        self.keys = {}
        self.seen = set()
        self.names = {}  # key -> the names its code may look up (co_names), over its runs
        self.ext = set()  # code outside torch/ and test/ a run executed (the stdlib's)
        self.ext_names = {}
        self.read = set()  # names looked up on the tree's modules in the last run

    def key(self, code):
        # by identity: equal code objects of two files (same body, same line) compare equal
        e = self.keys.get(id(code))
        if e is None or e[0] is not code:
            f = os.path.realpath(code.co_filename)
            rel = f[len(self.prefix):] if f.startswith(self.prefix) else ""
            k = f"{rel}::{code.co_qualname}" if rel.startswith(("torch/", "test/")) else ""
            e = self.keys[id(code)] = (code, k)
            if k:
                self.names.setdefault(k, set()).update(code_names(code, rel))
        return e[1]

    def profile(self, frame, event, arg):
        if event == "call":
            k = self.key(frame.f_code)
            if k:
                self.seen.add(k)
                if k.startswith(OPINFO_CORE):  # which op database entry it runs
                    op = frame.f_locals.get("self")
                    if op is not None and hasattr(op, "sample_inputs_func"):
                        self.seen.add(f"{OPINFO}{op.name}")
            else:
                self.ext.add(frame.f_code)

    def other_names(self):
        """The names the code outside torch/ and test/ of the last run may read, and those
        read from the tree's modules by attribute lookup."""
        out = set(self.read)
        for code in self.ext:
            f = code.co_filename
            if f.startswith(IMPORT_SYSTEM) or any(h in f for h in IMPORT_HOOKS):
                continue
            n = self.ext_names.get(code)
            if n is None:
                n = self.ext_names[code] = frozenset(code_names(code, code.co_filename))
            out |= n
        return out

    def run(self, fn):
        self.seen = set()
        self.ext = set()
        self.read = ReadingModule.reads = set()
        sys.setprofile(self.profile)
        try:
            fn()
        finally:
            sys.setprofile(None)
            ReadingModule.reads = None
        if self.read & WHOLE:
            self.read.add("*")
        return self.seen


def test_files(root):
    out = []
    for d, dirs, files in os.walk(os.path.join(root, "test")):
        dirs.sort()
        for f in sorted(files):
            if f.startswith("test_") and f.endswith(".py"):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return out


def load_file(root, rel, index):
    import importlib.util

    name = f"_upstream_test_{index}"
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, rel))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return name, mod


def file_tests(rel, mod):
    """(id, callable) for every test of a loaded test module, instantiated ones by template."""
    loader = unittest.TestLoader()
    for cname, cls in sorted(vars(mod).items()):
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        if cls.__module__ != mod.__name__:
            continue
        for meth in loader.getTestCaseNames(cls):
            template = getattr(getattr(cls, meth), "template", (cname, meth))
            yield f"{rel}::{template[0]}::{template[1]}", cls, meth


def selection(root, a):
    """The test files to load, the test ids wanted (None: every test), the files whose every
    test is wanted."""
    wanted, whole = None, set()
    if a.ids:  # test ids, and "file PATH" lines: every test of that file (new ones too)
        with open(a.ids) as f:
            lines = [line.strip() for line in f if line.strip()]
        wanted = {x for x in lines if not x.startswith("file ")}
        whole = {x[5:] for x in lines if x.startswith("file ")}
    files = a.files or test_files(root)
    if wanted is not None and not a.files:
        files = sorted({i.split("::")[0] for i in wanted} | whole)
    return files, wanted, whole


def cmd_trace(a):
    root = os.path.abspath(a.root)
    sys.path.insert(0, root)
    files, wanted, whole = selection(root, a)
    rec = ImportRecorder()
    with rec:
        import_prelude()
    return trace_tree(root, a, rec, files, wanted, whole)


def import_prelude():
    import torch  # noqa: F401 (the prelude every test file shares)
    import torch.testing._internal.common_methods_invocations  # noqa: F401
    import torch.testing._internal.common_utils  # noqa: F401


def trace_tree(root, a, rec, files, wanted, whole):
    """Traces the tests of `files` (those of `wanted`, or of a file in `whole`) with torch
    imported already, as `trace` says."""
    tracer = Tracer(root)
    executed = collections.defaultdict(set)
    errors = []
    out = open(a.out, "w")
    prelude_names = frozenset(sys.modules)
    prelude = {module_file(root, m) for m in prelude_names}
    prelude.discard(None)
    record_module_reads(root, prelude_names)
    if a.fingerprint:
        with open(a.fingerprint, "w") as f:
            json.dump(fingerprint(root, prelude_names), f)
    if a.fingerprint_only:
        out.write(json.dumps({"prelude": sorted(prelude), "errors": []}) + "\n")
        out.close()
        return 0
    load_names = {}
    other = collections.defaultdict(set)
    for i, rel in enumerate(files):
        if not os.path.exists(os.path.join(root, rel)):
            continue
        with rec:  # the file's own module-level code, and its helpers', read names too
            name, mod = None, None

            def load(rel=rel, i=i):
                nonlocal name, mod
                name, mod = load_file(root, rel, i)

            load_names[rel] = test_names(tracer, tracer.run(load), tracer.other_names())
        mods = {module_file(root, m) for m in rec.closure(name, prelude_names)} - {None}
        out.write(json.dumps({"file": rel, "modules": sorted(mods)}) + "\n")
        for tid, cls, meth in file_tests(rel, mod):
            if wanted is not None and tid not in wanted and rel not in whole:
                continue
            test = cls(meth)
            try:
                executed[tid] |= tracer.run(getattr(test, meth))
            except Exception as e:  # a failing test is a generator bug: say which
                errors.append(f"{tid} ({cls.__name__}.{meth}): {type(e).__name__}: {e}")
                executed[tid] |= tracer.seen
            other[tid] |= tracer.other_names()
    for tid in sorted(executed):
        names = test_names(tracer, executed[tid], load_names.get(tid.split("::")[0], ()))
        names |= other[tid]
        out.write(json.dumps({"id": tid, "executed": sorted(executed[tid]),
                              "names": sorted(names)}) + "\n")
    out.write(json.dumps({"prelude": sorted(prelude), "errors": errors}) + "\n")
    out.close()
    for e in errors[:10]:
        print(f"trace_tests: test failed: {e}", file=sys.stderr)
    return 1 if errors else 0


def run_trace(root, out, ids=None, files=None, fp=None, fp_only=False, server=None):
    """Runs `trace` in a fresh interpreter (a changed tree needs fresh modules), or in a fork
    of `server` (trace_fork.py), which brings its modules to the tree's revision."""
    if server is not None:
        rc = server.trace(out, ids, files, fp, fp_only)
    else:
        argv = [sys.executable, os.path.abspath(__file__), "trace", "--root", root, "--out", out]
        if ids is not None:
            argv += ["--ids", ids]
        if files:
            argv += ["--files", *files]
        if fp:
            argv += ["--fingerprint", fp] + (["--fingerprint-only"] if fp_only else [])
        rc = subprocess.run(argv).returncode
    res = {"tests": {}, "names": {}, "files": {}, "prelude": set(), "errors": []}
    with open(out) as f:
        for line in f:
            o = json.loads(line)
            if "id" in o:
                # interned: 63,000 tests share most of their keys and names
                res["tests"][o["id"]] = frozenset(map(sys.intern, o["executed"]))
                res["names"][o["id"]] = frozenset(map(sys.intern, o["names"]))
            elif "file" in o:
                res["files"][o["file"]] = frozenset(o["modules"])
            else:
                res["prelude"] = set(o["prelude"])
                res["errors"] = o["errors"]
    if rc or res["errors"]:
        raise SystemExit(f"trace_tests: tracing {root} failed ({len(res['errors'])} tests)")
    if fp:
        with open(fp) as f:
            res["fp"] = json.load(f)
    return res


# ---------------------------------------------------------------- what a commit changed


class Summary(ast.NodeVisitor):
    """Per function its definition (ast.dump, positions left out), and the module-level code
    with every function body left out."""

    def __init__(self):
        self.funcs = {}
        self.stack = []

    def visit_def(self, node):
        q = ".".join(self.stack + [node.name])
        self.funcs[q] = ast.dump(node)
        self.stack += [node.name, "<locals>"]
        self.generic_visit(node)
        del self.stack[-2:]

    visit_FunctionDef = visit_AsyncFunctionDef = visit_def

    def visit_ClassDef(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()


class StripBodies(ast.NodeTransformer):
    def visit_def(self, node):
        node.body = [ast.Pass()]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_def


def entry_name(node):
    """'add' for an op database entry: a call like UnaryUfuncInfo('add', ...)."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
        if name.endswith("Info") and isinstance(node.args[0].value, str):
            return node.args[0].value
    return None


def split_entries(tree, funcs):
    """Moves op database entries (op_db = [...] lists) out of the module-level code into
    `funcs` as "opinfo::<name>": an entry's data matters to the tests that run it."""
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.List):
            keep = []
            for elt in node.value.elts:
                name = entry_name(elt)
                if name is None:
                    keep.append(elt)
                else:
                    funcs[OPINFO + name] = ast.dump(elt)
                    keep.append(ast.Constant(OPINFO + name))
            node.value.elts = keep


def summarize(src):
    if src is None:
        return {}, None
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        return {}, f"syntax error {e}"
    s = Summary()
    s.visit(tree)
    split_entries(tree, s.funcs)
    return s.funcs, ast.dump(StripBodies().visit(tree))


def native_blocks(path, src):
    """op -> text of its YAML entry or C++ kernel."""
    out = {}
    if src is None:
        return out
    if path.endswith(".yaml"):
        for block in src.split("\n- func: ")[1:]:
            out[block.split(".", 1)[0].split("(", 1)[0]] = block
    else:
        for block in src.split("\nTensor ")[1:]:
            name = block.split("(", 1)[0]
            if name.endswith("_kernel"):
                out[name[: -len("_kernel")]] = block.split("\n}\n", 1)[0]
    return out


class Change:
    def __init__(self):
        self.paths = set()  # Python files changed
        self.keys = set()  # functions changed
        self.modules = set()  # files whose module-level code changed
        self.test_files = set()
        self.every = False


class Git:
    def __init__(self, repo):
        self.repo = repo
        self.cat = subprocess.Popen(
            ["git", "-C", repo, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def blob(self, oid):
        if oid is None or set(oid) == {"0"}:
            return None
        self.cat.stdin.write(oid.encode() + b"\n")
        self.cat.stdin.flush()
        header = self.cat.stdout.readline().split()
        n = int(header[2])
        data = self.cat.stdout.read(n + 1)[:n]
        return data.decode("utf-8", "replace")

    def diff(self, a, b):
        """(path, old blob, new blob) of every file that differs from a to b."""
        out = subprocess.run(
            ["git", "-C", self.repo, "diff-tree", "-r", "--no-renames", "-z", a, b],
            check=True,
            capture_output=True,
        ).stdout.split(b"\0")
        res = []
        for i in range(0, len(out) - 1, 2):
            meta = out[i].decode().lstrip(":").split()
            res.append((out[i + 1].decode(), meta[2], meta[3]))
        return res

    def close(self):
        self.cat.stdin.close()
        self.cat.wait()


def write_file(state, path, src):
    full = os.path.join(state, path)
    d, base = os.path.split(full)
    cache = os.path.join(d, "__pycache__")
    if os.path.isdir(cache):  # a same-size rewrite in the same second fools mtime checks
        for f in os.listdir(cache):
            if f.startswith(base[:-3] + "."):
                os.unlink(os.path.join(cache, f))
    if src is None:
        if os.path.exists(full):
            os.unlink(full)
        return
    os.makedirs(d, exist_ok=True)
    with open(full, "w") as f:
        f.write(src)


def apply_change(git, state, a, b, before_write=None):
    """Moves the copy in `state` from commit a to commit b and says what changed;
    before_write(ch) runs when what changed is known and the copy is still at a."""
    ch = Change()
    writes = []
    for path, old, new in git.diff(a, b):
        if path in EVERY_TEST or path.endswith(".cmake") or path.endswith("CMakeLists.txt"):
            ch.every = True
        if path.endswith(".py") and path.startswith(("torch/", "test/")):
            full = os.path.join(state, path)
            before = open(full).read() if os.path.exists(full) else None
            after = git.blob(new)
            f0, m0 = summarize(before)
            f1, m1 = summarize(after)
            for q in set(f0) | set(f1):
                if f0.get(q) != f1.get(q):
                    ch.keys.add(q if q.startswith(OPINFO) else f"{path}::{q}")
            if m0 != m1:
                ch.modules.add(path)
            if path.startswith("test/") and os.path.basename(path).startswith("test_"):
                ch.test_files.add(path)
            writes.append((path, after))
            ch.paths.add(path)
        elif path.startswith("aten/src/ATen/native/") and path.endswith((".yaml", ".cpp")):
            o0 = native_blocks(path, git.blob(old))
            o1 = native_blocks(path, git.blob(new))
            for op in set(o0) | set(o1):
                if o0.get(op) != o1.get(op):
                    ch.keys.add(f"{NATIVE}::{op}")
    if before_write is not None:
        before_write(ch)
    for path, after in writes:
        write_file(state, path, after)
    return ch


# ---------------------------------------------------------------- truth (walks the history)


class Walk:
    def __init__(self, repo, scratch, exact, coarse=False, fork=True):
        self.fork = fork
        self.server = None
        self.git = Git(repo)
        self.coarse = coarse  # a module-level change to torch's own modules: every test
        self.names = {}  # id -> names its last run may have read
        self.fp = {}  # torch's modules' fingerprint at the current commit
        self.fp_stale = False  # torch's files changed since it was taken
        self.fingerprints = 0
        self.state = os.path.join(scratch, "tree")
        self.scratch = scratch
        self.exact = exact
        self.tests = {}  # id -> executed keys, as last traced
        self.files = {}  # test file -> modules its import reached beyond the prelude
        self.prelude = set()
        self.stale = set()  # traced before a change that may alter their run
        self.stale_files = set()  # test files changed since: their new tests too
        self.cur = None
        self.traces = 0
        self.traced_tests = 0
        self.trace_seconds = 0.0

    def checkout(self, rev):
        os.makedirs(self.state)
        tar = subprocess.Popen(
            ["git", "-C", self.git.repo, "archive", rev, "torch", "test"], stdout=subprocess.PIPE
        )
        subprocess.run(["tar", "-x", "-C", self.state], stdin=tar.stdout, check=True)
        tar.wait()
        self.cur = rev
        if self.fork:
            import trace_fork

            self.server = trace_fork.Server(self.state)
        self.retrace(None)

    def retrace(self, ids, files=()):
        """Traces `ids` and every test of `files` (ids None: every test) at the current
        commit, and updates the sets."""
        if ids is not None and not ids and not files:
            return {"tests": {}, "files": {}, "prelude": self.prelude, "errors": []}
        t0 = time.monotonic()
        out = os.path.join(self.scratch, "trace.jsonl")
        idfile = None
        if ids is not None:
            idfile = os.path.join(self.scratch, "ids.txt")
            with open(idfile, "w") as f:
                f.write("".join(i + "\n" for i in sorted(ids)))
                f.write("".join("file " + x + "\n" for x in sorted(files)))
        fp = None if ids is not None or self.coarse else os.path.join(self.scratch, "fp.json")
        res = run_trace(self.state, out, idfile, fp=fp, server=self.server)
        if fp:
            self.fp, self.fp_stale = res["fp"], False
        if ids is None:
            self.tests = dict(res["tests"])
            self.names = dict(res["names"])
        else:
            for i in ids:
                self.tests.pop(i, None)  # deleted unless traced again
                self.names.pop(i, None)
            self.tests.update(res["tests"])
            self.names.update(res["names"])
        self.files.update(res["files"])
        self.prelude = res["prelude"]
        self.stale, self.stale_files = set(), set()
        self.traces += 1
        self.traced_tests += len(res["tests"])
        self.trace_seconds += time.monotonic() - t0
        return res

    def dirty(self, ch):
        """Tests whose run may differ after change ch: they ran a changed function, or their
        file or a module it imports has changed module-level code. None: every test."""
        if ch.modules & self.prelude:
            if self.coarse:
                return None
            return self.dirty_precise(ch)
        d = set()
        own = ch.modules | ch.test_files
        for tid, ex in self.tests.items():
            f = tid.split("::")[0]
            if f in own or not ex.isdisjoint(ch.keys):
                d.add(tid)
            elif ch.modules and not self.files.get(f, frozenset()).isdisjoint(ch.modules):
                d.add(tid)
        return d

    def parent_fingerprint(self, ch):
        """Before a module-level change to torch's own modules, the fingerprint of the commit
        it applies to, when changes since the last one may have altered it."""
        if self.coarse or not self.fp_stale or not (ch.modules & self.prelude):
            return
        self.fp = self.fingerprint()["fp"]

    def fingerprint(self):
        t0 = time.monotonic()
        fp = os.path.join(self.scratch, "fp.json")
        res = run_trace(self.state, os.path.join(self.scratch, "fp.jsonl"), fp=fp, fp_only=True,
                        server=self.server)
        self.fingerprints += 1
        self.trace_seconds += time.monotonic() - t0
        self.fp_stale = False
        return res

    def dirty_precise(self, ch):
        """Module-level code of torch's own modules changed: the names whose values differ
        between the two commits' imported torch (fingerprints), and the tests whose run may
        have read one of them (or read a computed name), besides those of dirty()."""
        res = self.fingerprint()
        changed = changed_names(self.fp, res["fp"])
        self.fp, self.prelude = res["fp"], res["prelude"]
        keep = ch.modules - self.prelude
        mods = Change()
        mods.keys, mods.modules, mods.test_files = ch.keys, keep, ch.test_files
        d = self.dirty(mods)
        changed.add("*")
        for tid, names in self.names.items():
            if tid not in d and not names.isdisjoint(changed):
                d.add(tid)
        return d

    def move(self, rev, want):
        """To commit rev; returns its truth when `want` (the current commit is its parent)."""
        if want and self.exact and (self.stale or self.stale_files):
            self.retrace(self.stale, self.stale_files)  # every set exact at the parent
        ch = apply_change(self.git, self.state, self.cur, rev, self.parent_fingerprint)
        self.cur = rev
        if any(p.startswith("torch/") for p in ch.paths):
            self.fp_stale = True  # a value of torch's may differ (an op database entry)
        if self.server is not None:
            self.server.changed |= {p for p in ch.paths if p.startswith("torch/")}
        d = self.dirty(ch)
        every = ch.every or d is None
        if d is None:
            d = set(self.tests)
        # what the dirty tests ran before, where it is known (not stale)
        prior = {t: self.tests[t] for t in d if t in self.tests and t not in self.stale}
        self.stale |= d
        self.stale_files |= ch.test_files
        if not want:
            return None
        truth = {"affected_all": every, "changed": sorted(ch.keys), "modules": sorted(ch.modules)}
        if every:  # every test: nothing to trace now; the stale ones wait for the next one
            return {**truth, "affected": [], "retraced": 0}
        full = len(self.stale) >= len(self.tests)
        res = self.retrace(None if full else self.stale, self.stale_files)
        affected = set()
        for t, ex in res["tests"].items():
            f = t.split("::")[0]
            if f in ch.modules or not (ex | prior.get(t, frozenset())).isdisjoint(ch.keys):
                affected.add(t)
            elif not self.files.get(f, frozenset()).isdisjoint(ch.modules):
                affected.add(t)
        return {**truth, "affected": sorted(affected), "retraced": len(res["tests"])}


def cpu_seconds():
    """CPU time of this process and the interpreters it waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def pick(singles, n):
    """The single commits bench-select-eval evaluates: n spread evenly (k * singles / n)."""
    if n <= 0 or n >= len(singles):
        return set(singles)
    return {singles[k * len(singles) // n] for k in range(n)}


def pick_run(singles, n):
    """n consecutive single commits, the last of the history: traced revisions close together
    keep what a commit makes dirty small."""
    return set(singles if n <= 0 else singles[-n:])


def cmd_truth(a):
    gt = os.path.join(a.repo, ".ground_truth")
    commits = []
    with open(os.path.join(gt, "commits.jsonl")) as f:
        for line in f:
            if len(line) > TRUTH_LINE_MAX:
                raise SystemExit("trace_tests: a commits.jsonl line is too long")
            o = json.loads(line)
            commits.append((o["id"], o["parents"], o["fallback"]))
    singles = [c for c, p, _ in commits if len(p) == 1]
    want = pick_run(singles, a.commits) if a.contiguous else pick(singles, a.commits)
    start = 0  # the walk starts at the parent of the first commit written
    if a.contiguous:
        start = min(i for i, c in enumerate(commits) if c[0] in want)
        start = next(i for i, c in enumerate(commits) if c[0] == commits[start][1][0])
    out_path = a.out or os.path.join(gt, "commits_exec.jsonl")
    scratch = tempfile.mkdtemp(prefix="trace-tests-")
    t0 = time.monotonic()
    w = Walk(a.repo, scratch, a.exact, a.coarse, not a.no_fork)
    try:
        w.checkout(commits[start][0])
        first = time.monotonic() - t0
        n_full = len(w.tests)
        done = 0
        with open(out_path + ".tmp", "w") as out:
            for cid, parents, fallback in commits[start + 1:]:
                if w.cur != parents[0]:
                    w.move(parents[0], False)
                truth = w.move(cid, cid in want and len(parents) == 1)
                if truth is not None:
                    truth = {"id": cid, "fallback": fallback, **truth}
                    out.write(json.dumps(truth) + "\n")
                    out.flush()  # a long run's lines so far stay readable
                    done += 1
                    if a.progress:
                        print(f"truth: {done}/{len(want)} written, {cid[:10]}, "
                              f"{truth['retraced']} traced again, {len(truth['affected'])} "
                              f"affected, {time.monotonic() - t0:.0f} s, "
                              f"{cpu_seconds():.0f} s CPU", file=sys.stderr, flush=True)
                    if a.limit and done >= a.limit:
                        break
        os.replace(out_path + ".tmp", out_path)
    finally:
        w.git.close()
        if w.server is not None:
            w.server.close()
        shutil.rmtree(scratch, ignore_errors=True)
    total = time.monotonic() - t0
    print(json.dumps({"commits": len(commits), "written": len(want), "tests": n_full,
                      "first_trace_seconds": round(first, 2), "traces": w.traces,
                      "traced_tests": w.traced_tests, "trace_seconds": round(w.trace_seconds, 1),
                      "fingerprints": w.fingerprints, "forked": w.server is not None,
                      "server_restarts": w.server.restarts if w.server else 0,
                      "cpu_seconds": round(cpu_seconds(), 1),
                      "seconds": round(total, 1), "out": out_path}))
    return 0


# ---------------------------------------------------------------- check (static vs executed)


def cmd_check(a):
    scratch = tempfile.mkdtemp(prefix="trace-check-")
    try:
        t0 = time.monotonic()
        res = run_trace(os.path.abspath(a.repo), os.path.join(scratch, "t.jsonl"))
        secs = time.monotonic() - t0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    static = {}
    with open(os.path.join(a.repo, ".ground_truth", "tests.jsonl")) as f:
        for line in f:
            o = json.loads(line)
            static[o["id"]] = o
    generated = set()  # the generated modules' functions: what the static truth speaks of
    for o in static.values():
        generated.update(o["functions"])
    bad = 0
    for tid, o in static.items():
        ex = res["tests"].get(tid)
        if ex is None:
            print(f"check: {tid}: never ran", file=sys.stderr)
            bad += 1
            continue
        ran = set()
        for k in ex:
            path, q = k.split("::", 1)
            dotted = path[:-3].replace("/", ".") + "." + q
            ran.add(dotted)
        ran_gen = {d for d in ran if d in generated}
        want = {q for q in o["functions"] if q in ran or not q[q.rfind(".") + 1:][:1].isupper()}
        if ran_gen != want:
            bad += 1
            if bad <= 10:
                print(f"check: {tid}: executed-only {sorted(ran_gen - want)[:4]} "
                      f"static-only {sorted(want - ran_gen)[:4]}", file=sys.stderr)
    extra = set(res["tests"]) - set(static)
    print(json.dumps({"tests": len(static), "traced": len(res["tests"]), "differ": bad,
                      "not_in_static": len(extra), "trace_seconds": round(secs, 2)}))
    return 1 if bad or extra else 0


def cmd_compare(a):
    """The execution truth against the static truth, commit by commit, where both are exact:
    commits that fall back or affect every test are left out. A test only the static truth
    has must be there by its commit message alone (shape "test_edit", or "X+test_edit" for a
    test of shape X); a test only the
    execution truth has must be in a test file (or import a helper module) whose module-level
    code the commit changed."""
    gt = os.path.join(a.repo, ".ground_truth")
    static = {}
    with open(os.path.join(gt, "commits.jsonl")) as f:
        for line in f:
            o = json.loads(line)
            static[o["id"]] = o
    n = same = bad = module_level = named = 0
    with open(os.path.join(gt, "commits_exec.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            s = static[e["id"]]
            if s["fallback"] or s["affected_all"] or e["affected_all"]:
                continue
            n += 1
            ex, st = set(e["affected"]), dict(zip(s["affected"], s["affected_shapes"]))
            ok = True
            for t in set(st) - ex:
                named += 1
                # named by the message alone; an inherited test keeps its class's shape too
                # ("inherited+test_edit")
                if "test_edit" not in st[t].split("+"):
                    ok = False
                    print(f"compare: {e['id'][:12]} {s['kind']}: {t} ({st[t]}) not executed",
                          file=sys.stderr)
            for t in ex - set(st):
                module_level += 1
                f_ = t.split("::")[0]
                if not any(m == f_ or "/test_helpers/" in m for m in e["modules"]):
                    ok = False
                    print(f"compare: {e['id'][:12]} {s['kind']}: {t} only executed",
                          file=sys.stderr)
            same += ex == set(st)
            bad += not ok
    print(json.dumps({"commits": n, "equal": same, "explained": n - same - bad, "differ": bad,
                      "static_only_named": named, "executed_only_module_level": module_level}))
    return 1 if bad or n == 0 else 0


def cmd_serve(a):
    import trace_fork

    return trace_fork.serve(a.root)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace")
    t.add_argument("--root", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--ids")
    t.add_argument("--files", nargs="*")
    t.add_argument("--fingerprint")
    t.add_argument("--fingerprint-only", action="store_true")
    r = sub.add_parser("truth")
    r.add_argument("--repo", required=True)
    r.add_argument("--commits", type=int, default=500)
    r.add_argument("--out")
    r.add_argument("--exact", action="store_true")
    r.add_argument("--coarse", action="store_true")
    r.add_argument("--contiguous", action="store_true")
    r.add_argument("--no-fork", action="store_true")
    r.add_argument("--progress", action="store_true", help="a line on stderr per commit written")
    r.add_argument("--limit", type=int, default=0,
                   help="stop after writing this many commits (a long walk cut in pieces: "
                   "--commits N --limit K writes the first K of the last N)")
    v = sub.add_parser("serve")
    v.add_argument("--root", required=True)
    c = sub.add_parser("check")
    c.add_argument("--repo", required=True)
    m = sub.add_parser("compare")
    m.add_argument("--repo", required=True)
    a = p.parse_args()
    cmds = {"serve": cmd_serve, "trace": cmd_trace, "truth": cmd_truth, "check": cmd_check,
            "compare": cmd_compare}
    return cmds[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
