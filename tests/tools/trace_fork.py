"""A long-lived interpreter for trace_tests.py truth: torch imported once, a fork per trace.

Importing the generated torch at scale pytorch takes ~4.5 s, a new interpreter per traced
revision hours over 500 revisions. The server imports torch once, at the revision the walk
starts from (under trace_tests.ImportRecorder, which records which module imports which). For
each trace it forks; the child brings its modules to the revision now in the tree and runs the
trace as a fresh interpreter would:

  - every module whose file changed since the server started, and every module importing one
    of those (directly or not: the recorded edges, reversed), leaves sys.modules;
  - the prelude is imported again: only those modules run again, in the order a fresh import
    runs them, and they bind the untouched modules they import, which are the very objects a
    fresh import would build (their code and everything they import is unchanged, and the
    generated upstream's module code has no effect beyond its own namespace but binding
    names);
  - a module no longer reachable from the prelude's imports leaves sys.modules, and a
    re-imported package gets back its loaded submodules as attributes (a fresh import sets
    them when it loads the submodule).

The result is checked, not only argued: `truth --no-fork` traces each revision in a new
interpreter, and tests/cli/trace.sh compares the two truths line for line.
"""

import json
import os
import sys
import traceback

import trace_tests as T


def importers(edges):
    rev = {}
    for src, dsts in edges.items():
        for d in dsts:
            rev.setdefault(d, set()).add(src)
    return rev


def refresh(root, rec, changed):
    """Brings sys.modules to the tree's revision (see the module's text); `changed` holds
    the paths of the files changed since the server imported torch."""
    names = [n for n in sys.modules if T.module_file(root, n) in changed]
    rev = importers(rec.edges)
    drop, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n not in drop:
            drop.add(n)
            todo.extend(rev.get(n, ()))
    for n in drop:
        sys.modules.pop(n, None)
        rec.edges.pop(n, None)
    rec.bind = True
    try:
        with rec:
            T.import_prelude()
    finally:
        rec.bind = False
    reach = rec.closure("torch") | rec.closure("torch.testing._internal.common_utils")
    reach |= rec.closure("torch.testing._internal.common_methods_invocations")
    for n in list(sys.modules):
        if T.module_file(root, n) is not None and n not in reach:
            del sys.modules[n]
    for n, m in list(sys.modules.items()):
        parent, _, child = n.rpartition(".")
        if parent in drop and parent in sys.modules and T.module_file(root, n) is not None:
            if child not in vars(sys.modules[parent]):
                setattr(sys.modules[parent], child, m)


def serve(root):
    """Reads one JSON request a line on stdin ({"changed": [...], "out", "ids", "files",
    "fingerprint", "fingerprint_only"}), answers {"rc": N} on stdout when its trace is done."""
    root = os.path.abspath(root)
    sys.path.insert(0, root)
    rec = T.ImportRecorder()
    with rec:
        T.import_prelude()
    T.record_module_reads(root, list(sys.modules))
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            rc = 1
            try:
                a = T.argparse.Namespace(root=root, out=req["out"], ids=req.get("ids"),
                                         files=req.get("files"),
                                         fingerprint=req.get("fingerprint"),
                                         fingerprint_only=req.get("fingerprint_only", False))
                refresh(root, rec, set(req["changed"]))
                files, wanted, whole = T.selection(root, a)
                rc = T.trace_tree(root, a, rec, files, wanted, whole)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(rc)
        _, st = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(st)
        sys.stdout.write(json.dumps({"rc": rc}) + "\n")
        sys.stdout.flush()
    return 0


class Server:
    """The walker's side: starts `trace_tests.py serve` on the tree, sends requests. Each fork
    re-imports what changed since the server imported torch, which grows along a walk: past
    `refresh_limit` changed files the server is started again on the tree as it is (a fresh
    import, ~4.5 s at scale pytorch), and the set starts empty."""

    def __init__(self, root, refresh_limit=int(os.environ.get("TRACE_REFRESH_LIMIT", "40"))):
        self.root = root
        self.refresh_limit = refresh_limit
        self.forks = 0
        self.restarts = 0
        self.start()

    def start(self):
        self.changed = set()
        self.proc = T.subprocess.Popen(
            [sys.executable, os.path.abspath(T.__file__), "serve", "--root", self.root],
            stdin=T.subprocess.PIPE, stdout=T.subprocess.PIPE, text=True)

    def trace(self, out, ids=None, files=None, fp=None, fp_only=False):
        if self.refresh_limit > 0 and len(self.changed) > self.refresh_limit:
            self.close()
            self.start()
            self.restarts += 1
        req = {"changed": sorted(self.changed), "out": out, "ids": ids, "files": files,
               "fingerprint": fp, "fingerprint_only": fp_only}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("trace_tests: the trace server died")
        self.forks += 1
        return json.loads(line)["rc"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
