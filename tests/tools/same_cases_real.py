#!/usr/bin/env python3
"""One test, one set of kernel cases, on a real upstream: for every test of a directory of spec
files, `select --cases`, `run` (its results.jsonl), `specs explain --upstream` and `specs list
--upstream` must give the same kernel-case ids. Every path goes through the funnel's stage 3;
this finds a test for which one of them does not.

The selection must reach every test, so it is made from a unified diff that touches setup.py
(the selector's fallback: every test of the revision is a candidate) against a bare, shared
clone of the upstream whose HEAD is the revision (in a scratch directory, removed at the end;
the upstream itself is only read). `specs list` and `specs explain` read the upstream at the
revision with --rev.

Usage:
  same_cases_real.py SPYRE_CI UPSTREAM SPECS_DIR [--rev REV ...] [--jobs N] [--keep]
e.g. same_cases_real.py build/relay/spyre-ci /tmp/realup \\
         /tmp/spyre-configs/tests/configs/upstream_tests_beta --rev main --rev sample

Prints, per revision, the tests compared (every test a side gives cases or a decision for),
those with cases, and each disagreement: the test, and each side's ids where they differ.
Exit 0 when every side agrees on every test, 1 on a disagreement, 2 on bad usage or a failed
command. Not in any suite (it needs a real upstream); tests/daemon/same_cases.py imports its
comparison and runs it on a generated upstream in the quick suite.

stdlib only, python3 >= 3.9."""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

SIDES = ("select", "run", "explain", "list")

# A change the selector cannot trace (a build file): every test becomes a candidate.
FALLBACK_DIFF = """diff --git a/setup.py b/setup.py
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/setup.py
@@ -0,0 +1 @@
+# every test
"""


class Failed(Exception):
    pass


def spyre(exe, *args, ok=(0,)):
    p = subprocess.run([exe] + list(args), capture_output=True, text=True)
    if p.returncode not in ok:
        raise Failed("spyre-ci %s: exit %d\n%s" % (" ".join(args), p.returncode,
                                                   p.stderr[-3000:]))
    return p


def git(*args):
    return subprocess.run(["git"] + list(args), check=True, capture_output=True,
                          text=True).stdout.strip()


def add(by_test, test, case_id):
    by_test.setdefault(test, []).append(case_id)


# ---- each side's ids, test by test ----

def from_select_cases(text):
    """`select --cases`: one case a line."""
    out = {}
    for line in text.splitlines():
        if line.strip():
            c = json.loads(line)
            add(out, c["test"], c["id"])
    return out


def from_results(path):
    """`run`'s results.jsonl."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                add(out, r["test_id"], r["case_id"])
    return out


def from_list(doc):
    """`specs list --json`: the cases and the unsupported ones."""
    out = {}
    for c in doc["cases"] + doc["unsupported"]:
        add(out, c["test"], c["id"])
    return out


def explain_one(exe, upstream, rev, specs, cache, test):
    p = spyre(exe, "specs", "explain", "--upstream", upstream, "--rev", rev, "--cache", cache,
              "--test", test, "--json", *specs)
    d = json.loads(p.stdout)
    return test, d.get("eligible"), [c["id"] for c in d["cases"]]


def from_explain(exe, upstream, rev, specs, tests, jobs, cache):
    """`specs explain --upstream --rev` once per test, `jobs` at a time (the upstream's files
    read once into `cache`): ids and eligibility."""
    ids, eligible = {}, {}
    if not tests:
        return ids, eligible
    explain_one(exe, upstream, rev, specs, cache, sorted(tests)[0])  # fills the cache
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for test, elig, got in pool.map(
                lambda t: explain_one(exe, upstream, rev, specs, cache, t), sorted(tests)):
            eligible[test] = elig
            if got:
                ids[test] = got
    return ids, eligible


# ---- the comparison ----

def compare(sides, tests):
    """[(test, {side: sorted ids})] for every test on which the sides differ. `sides`:
    {name: {test: [ids]}}; a side without the test gives it no case."""
    bad = []
    for t in sorted(tests):
        got = {name: sorted(by_test.get(t, [])) for name, by_test in sides.items()}
        if len({tuple(v) for v in got.values()}) > 1:
            bad.append((t, got))
    return bad


def describe(test, got, limit=6):
    """A disagreement in a few lines: each side's count and the ids only some sides have."""
    lines = ["  %s" % test]
    every = set.intersection(*(set(v) for v in got.values()))
    for name, v in got.items():
        extra = [i for i in v if i not in every]
        lines.append("    %-8s %4d cases%s" % (name, len(v), (", not on every side: " +
                     " ".join(extra[:limit]) + (" ..." if len(extra) > limit else ""))
                     if extra else ""))
    return "\n".join(lines)


# ---- one revision ----

def revision(exe, upstream, specs_dir, rev, jobs, tmp):
    specs = [specs_dir]
    sha = git("-C", upstream, "rev-parse", "--verify", rev + "^{commit}")
    bare = os.path.join(tmp, "up-" + sha[:12] + ".git")
    if not os.path.isdir(bare):
        git("clone", "-q", "--bare", "--shared", upstream, bare)
    git("--git-dir=" + bare, "update-ref", "--no-deref", "HEAD", sha)
    diff = os.path.join(tmp, "fallback.diff")
    with open(diff, "w") as f:
        f.write(FALLBACK_DIFF)

    sel = json.loads(spyre(exe, "select", "--repo", bare, "--diff", diff, "--specs", specs_dir,
                           "--json").stdout)
    if not sel["fallback"]["active"]:
        raise Failed("the selection is no fallback: not every test was a candidate")
    select_ids = from_select_cases(spyre(exe, "select", "--repo", bare, "--diff", diff,
                                         "--specs", specs_dir, "--cases").stdout)
    out = os.path.join(tmp, "run-" + sha[:12])
    spyre(exe, "run", "--repo", bare, "--diff", diff, "--specs", specs_dir, "--out", out,
          "--jobs", str(jobs), "--no-progress", ok=(0, 1))
    run_ids = from_results(os.path.join(out, "results.jsonl"))
    listing = json.loads(spyre(exe, "specs", "list", "--upstream", upstream, "--rev", rev,
                               "--cache", os.path.join(tmp, "cache"), "--json", *specs).stdout)
    list_ids = from_list(listing)

    # every test a side has cases or a decision for
    tests = {t["id"] for t in sel["tests"]} | set(list_ids) | set(run_ids)
    tests |= {r["test"] for r in listing["not_mappable"] + listing["not_eligible"]}
    explain_ids, explain_eligible = from_explain(exe, upstream, rev, specs, tests, jobs,
                                                 os.path.join(tmp, "cache"))
    sides = {"select": select_ids, "run": run_ids, "explain": explain_ids, "list": list_ids}
    bad = compare(sides, tests)
    # eligibility: select schedules exactly the tests explain finds eligible
    scheduled = {t["id"] for t in sel["tests"]}
    elig = {t for t, e in explain_eligible.items() if e}
    with_cases = sum(1 for t in tests if any(t in s for s in sides.values()))
    print("%s (%s): %d tests compared, %d with cases, %d cases (select), %d disagreements"
          % (rev, sha[:12], len(tests), with_cases, sum(len(v) for v in select_ids.values()),
             len(bad)))
    for t, got in bad:
        print(describe(t, got))
    for t in sorted(scheduled ^ elig):
        print("  %s: %s" % (t, "select schedules it, explain finds it not eligible"
                            if t in scheduled else "explain finds it eligible, select does "
                            "not schedule it"))
    return len(tests), len(bad) + len(scheduled ^ elig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("exe")
    ap.add_argument("upstream")
    ap.add_argument("specs_dir")
    ap.add_argument("--rev", action="append", help="a revision (repeatable; default HEAD)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()
    exe = os.path.abspath(a.exe)
    tmp = tempfile.mkdtemp(prefix="spyre-ci-same-cases-real-")
    total = disagreements = 0
    try:
        for rev in a.rev or ["HEAD"]:
            n, bad = revision(exe, a.upstream, a.specs_dir, rev, a.jobs, tmp)
            total += n
            disagreements += bad
    except (Failed, subprocess.CalledProcessError) as e:
        print("same_cases_real: %s" % (e.stderr if hasattr(e, "stderr") and e.stderr else e),
              file=sys.stderr)
        return 2
    finally:
        if a.keep:
            print("scratch kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("all revisions: %d tests compared, %d disagreements" % (total, disagreements))
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
