"""Git shapes the selector cannot read as ordinary edits, each judged by a truth made apart from
the selector: the generated upstream's own tests run under python3's unittest at the commit.

For every shape (a NUL byte, a byte that is not UTF-8 or a size over the scanner's bound in a
torch/ module and in a test file, a torch/ module turned into a symlink, a submodule added,
moved and removed, .gitmodules, a c10/ header, a torch/csrc source, pyproject.toml, a binary
under torch/, a helper module under test/ (imported absolutely and relatively), a function one
test file imports from another, and
paths that are not UTF-8 with --json) a commit is made on the base and `select --json` is run:
every test that fails at the commit (and passed at the base) must be selected, or the fallback
must say why; the answer is never "0 tests, no reason" for a shape that can break tests. Shapes
no test can read (docs, a non-UTF-8 docs path) select nothing, and the JSON stays valid.

Usage: git_shapes.py SPYRE_CI. Prints a table, one row per shape; exit 1 on a failed check."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

PY = sys.executable
failures = []
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x")
SPECS = """test_suite_config:
  files:
    - path: ${TORCH_ROOT}/test/*.py
      unlisted_test_mode: mandatory_success
    - path: ${TORCH_ROOT}/test/*/*.py
      unlisted_test_mode: mandatory_success
    - path: ${TORCH_ROOT}/test/*/*/*.py
      unlisted_test_mode: mandatory_success
"""
# Runs every test of the tree under unittest; prints {"all": [...], "failed": [...]} with the
# selector's ids (path::Class::method); a module that cannot be imported fails as "path::*".
RUNNER = r"""
import json, os, sys, unittest
sys.path.insert(0, os.getcwd())
def ids(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from ids(t)
        else:
            yield t
def name(t):
    if type(t).__name__ == "_FailedTest":
        return t._testMethodName.replace(".", "/") + ".py::*"
    mod = type(t).__module__.replace(".", "/") + ".py"
    return "%s::%s::%s" % (mod, type(t).__qualname__, t._testMethodName)
suite = unittest.TestLoader().discover("test", pattern="test_*.py", top_level_dir=".")
tests = list(ids(suite))
res = unittest.TestResult()
for t in tests:
    t.run(res)
bad = [name(t) for t, _ in res.failures + res.errors]
print(json.dumps({"all": [name(t) for t in tests], "failed": bad}))
"""

HELPER = "def expected():\n    return 3\n"
HELPER_TEST = """import unittest

from test.shape_helpers import expected


def util():
    return 1


class TestShapeHelper(unittest.TestCase):
    def test_expected(self):
        self.assertEqual(expected(), 3)
"""
CROSS_TEST = """import unittest

from test.test_shape_helper import util


class TestShapeCross(unittest.TestCase):
    def test_util(self):
        self.assertEqual(util(), 1)
"""


REL_TEST = """import unittest

from .rel_helpers import val


class TestRel(unittest.TestCase):
    def test_val(self):
        self.assertEqual(val(), 5)
"""


def check(what, cond, detail=""):
    if not cond:
        failures.append(what)
        print("FAIL", what, detail)
    return cond


def git(repo, *args, check_rc=True):
    return subprocess.run(["git", "-C", repo] + list(args), check=check_rc, capture_output=True,
                          env=GIT_ENV).stdout.decode("utf-8", "surrogateescape").strip()


def write(repo, path, data):
    full = os.path.join(repo, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    if os.path.islink(full):
        os.remove(full)
    with open(full, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def append(repo, path, data):
    with open(os.path.join(repo, path), "ab") as f:
        f.write(data)


def commit(repo, what, add=True):
    if add:  # (not for a gitlink made in the index: its directory is not checked out)
        git(repo, "add", "-A")
    git(repo, "commit", "-qm", what, "--allow-empty")
    return git(repo, "rev-parse", "HEAD")


def run_tests(repo):
    out = subprocess.run([PY, "-c", RUNNER], cwd=repo, capture_output=True, timeout=600)
    d = json.loads(out.stdout)
    return set(d["all"]), set(d["failed"])


def expand(failed, all_ids):
    """A module that failed to import fails each of its tests (as they were at the base)."""
    out = set()
    for f in failed:
        if f.endswith("::*"):
            prefix = f[:-1]
            out |= {t for t in all_ids if t.startswith(prefix)} or {f}
        else:
            out.add(f)
    return out


def select(exe, repo, specs, base, head):
    p = subprocess.run([exe, "select", "--repo", repo, "--base", base, "--head", head,
                        "--specs", specs, "--json"], capture_output=True)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr.decode(errors="replace")
    except ValueError:
        return p.returncode, None, p.stderr.decode(errors="replace")


def torch_module(repo):
    """A torch/ module that `import torch` imports (a line of torch/__init__.py)."""
    for line in open(os.path.join(repo, "torch", "__init__.py")):
        if line.startswith("from torch.") and " import " in line:
            mod = line.split()[1]
            path = mod.replace(".", "/") + ".py"
            if os.path.isfile(os.path.join(repo, path)):
                return path
    raise SystemExit("no torch module imported by torch/__init__.py")


def main(exe):
    tmp = tempfile.mkdtemp(prefix="git-shapes-")
    try:
        run(exe, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def run(exe, tmp):
    up = os.path.join(tmp, "up")
    subprocess.run([exe, "fixture", "upstream", "--out", up, "--seed", "5", "--scale", "small",
                    "--commits", "10"], check=True, capture_output=True)
    specs = os.path.join(tmp, "specs")
    os.makedirs(specs)
    with open(os.path.join(specs, "all.yaml"), "w") as f:
        f.write(SPECS)
    write(up, "test/shape_helpers.py", HELPER)
    write(up, "test/test_shape_helper.py", HELPER_TEST)
    write(up, "test/test_shape_cross.py", CROSS_TEST)
    write(up, "test/shapes_pkg/__init__.py", "")
    write(up, "test/shapes_pkg/rel_helpers.py", "def val():\n    return 5\n")
    write(up, "test/shapes_pkg/test_rel.py", REL_TEST)
    base = commit(up, "shapes: a test helper module and a test file importing another")
    all_base, failed_base = run_tests(up)
    check("base: the upstream's tests pass", not failed_base, sorted(failed_base)[:5])
    check("base: the shape tests run", "test/test_shape_cross.py::TestShapeCross::test_util"
          in all_base and "test/shapes_pkg/test_rel.py::TestRel::test_val" in all_base,
          len(all_base))
    mod = torch_module(up)
    test_file = "test/test_shape_helper.py"
    big = b"# " + b"x" * 1000 + b"\n"
    over = big * (17 * 1024 + 1)  # over PYTHON_FILE_MAX (16 MiB)

    def sub_add(r):
        git(r, "update-index", "--add", "--cacheinfo", "160000,%s,third_party/sub" % base)

    def sub_bump(r):
        git(r, "update-index", "--cacheinfo",
            "160000,%s,third_party/sub" % git(r, "rev-parse", base + "~1"))

    def sub_remove(r):
        git(r, "rm", "-q", "--cached", "third_party/sub")

    def symlink(r):
        os.remove(os.path.join(r, mod))
        os.symlink("gone_module.py", os.path.join(r, mod))

    # (name, steps: each a function of the repository made into one commit, breaks: whether
    # the shape can break tests (then 0 tests without a reason is wrong))
    shapes = [
        ("NUL byte in a torch module", [lambda r: append(r, mod, b"x_nul = 1\n\0\n")], True),
        ("non-UTF-8 byte in a torch module", [lambda r: append(r, mod, b"# \xff\n")], True),
        ("torch module over the size bound", [lambda r: append(r, mod, over)], True),
        ("NUL byte in a test file", [lambda r: append(r, test_file, b"\0\n")], True),
        ("non-UTF-8 byte in a test file", [lambda r: append(r, test_file, b"# \xff\n")], True),
        ("test file over the size bound", [lambda r: append(r, test_file, over)], True),
        ("torch module replaced by a symlink", [symlink], True),
        ("submodule added, moved, removed", [sub_add, sub_bump, sub_remove], True),
        (".gitmodules", [lambda r: write(r, ".gitmodules",
                                         '[submodule "sub"]\n\tpath = third_party/sub\n'
                                         "\turl = https://example.invalid/sub\n")], True),
        ("c10/ header", [lambda r: write(r, "c10/core/Shape.h", "#pragma once\n")], True),
        ("torch/csrc source", [lambda r: write(r, "torch/csrc/Shape.cpp", "int x;\n")], True),
        ("pyproject.toml", [lambda r: write(r, "pyproject.toml", "[project]\nname='t'\n")], True),
        ("binary under torch/lib", [lambda r: write(r, "torch/lib/libshape.so",
                                                    b"\x7fELF\0\0\x01")], True),
        ("test helper module edited", [lambda r: write(r, "test/shape_helpers.py",
                                                       HELPER.replace("3", "4"))], True),
        ("helper imported relatively (from .x import)",
         [lambda r: write(r, "test/shapes_pkg/rel_helpers.py", "def val():\n    return 6\n")],
         True),
        ("function a test file imports from another",
         [lambda r: write(r, test_file, HELPER_TEST.replace("return 1", "return 2"))], True),
        ("non-UTF-8 path under torch/", [lambda r: write(r, "torch/data_\udcff.bin".encode(
            "utf-8", "surrogateescape").decode("utf-8", "surrogateescape"), b"x")], True),
        ("docs only", [lambda r: write(r, "docs/source/shape.rst", "Shapes\n======\n")], False),
        ("non-UTF-8 docs path", [lambda r: write(r, "docs/sh\udcffpe.md", "x\n")], False),
    ]
    print("%-44s %-6s %8s %8s  %s" % ("shape", "step", "failing", "selected", "fallback reason"))
    for name, steps, breaks in shapes:
        git(up, "checkout", "-qf", base)
        git(up, "clean", "-qfdx")
        prev = base
        for k, step in enumerate(steps):
            step(up)
            head = commit(up, "%s %d" % (name, k), add=not name.startswith("submodule"))
            rc, out, err = select(exe, up, specs, prev, head)
            label = "%s (step %d)" % (name, k + 1)
            if not check(label + ": select --json answers 0 with a JSON document",
                         rc == 0 and out is not None, "rc %d: %s" % (rc, err[-300:])):
                prev = head
                continue
            all_head, failed_head = run_tests(up)
            failing = expand(failed_head, all_base | all_head) - failed_base
            fb = out["fallback"]
            selected = {t["id"] for t in out["tests"]}
            print("%-44s %-6d %8d %8s  %s" % (name[:44], k + 1, len(failing),
                                              "all" if fb["active"] else len(selected),
                                              fb["reason"] or ""))
            if fb["active"]:
                check(label + ": the fallback says why", bool(fb["reason"]))
                kept = {t for t in all_base if t.startswith(test_file + "::")}
                if "test file" in name:  # its tests are still selected, from the base
                    check(label + ": the unscannable file's tests are selected",
                          kept <= selected, sorted(kept - selected)[:3])
            else:
                missed = failing - selected
                check(label + ": every failing test is selected", not missed,
                      sorted(missed)[:5])
            if breaks:
                check(label + ": not 0 tests without a reason", fb["active"] or selected)
            else:
                check(label + ": nothing selected, no fallback",
                      not fb["active"] and not selected, json.dumps(out)[:300])
            prev = head


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(os.path.abspath(sys.argv[1])))
