"""One builder of kernel cases: for the same change of a generated upstream, `select --json`,
`select --explain` test by test, `run` (its results.jsonl) and the daemon (the job's
results.jsonl and the selection it stored) count the same kernel cases, test by test; and
`select --cases`, `run`, the daemon, `specs explain --upstream` and `specs list --upstream` give
each test the same kernel-case ids, for the change and then for every test of the upstream
(tests/tools/same_cases_real.py's comparison, the one its runs on a real upstream make). Each
path goes through the funnel; this checks that none of them expands a test again its own way.
Usage: same_cases.py SPYRE_CI."""
import json
import os
import re
import subprocess
import sys
import time

from daemonlib import Daemon, scratch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import same_cases_real as real  # noqa: E402 (the comparison, shared with the real upstream)

failures = []


def check(what, cond, detail=""):
    print("ok  " if cond else "FAIL", what, "" if cond else str(detail)[:2000])
    if not cond:
        failures.append(what)


def spyre(exe, *args, ok=(0,)):
    p = subprocess.run([exe] + list(args), capture_output=True, text=True)
    if p.returncode not in ok:
        raise AssertionError("spyre-ci %s: exit %d\n%s" % (" ".join(args), p.returncode,
                                                           p.stderr[-3000:]))
    return p


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True,
                          text=True).stdout.strip()


def scheduled(sel):
    """{test id: kernel cases} of the scheduled tests (the tests a select --json report
    lists)."""
    return {t["id"]: t["kernel_cases"] for t in sel["tests"]}


def per_test(results_jsonl):
    out = {}
    with open(results_jsonl) as f:
        for line in f:
            if line.strip():
                t = json.loads(line)["test_id"]
                out[t] = out.get(t, 0) + 1
    return out


def pick_change(exe, up):
    """A first-parent commit of the upstream whose selection schedules a few tests with kernel
    cases, without the fallback (a fallback would run every test: slow, and no sharper)."""
    for k in range(1, 60):
        head, base = git(up, "rev-parse", "HEAD~%d" % (k - 1)), git(up, "rev-parse",
                                                                     "HEAD~%d" % k)
        sel = json.loads(spyre(exe, "select", "--repo", up, "--base", base, "--head", head,
                               "--json").stdout)
        n = sum(scheduled(sel).values())
        if not sel["fallback"]["active"] and 0 < n <= 400 and len(scheduled(sel)) >= 2:
            return base, head, sel
    raise AssertionError("no commit of the generated upstream schedules kernel cases")


def main():
    exe = os.path.abspath(sys.argv[1])
    tmp = scratch("spyre-ci-same-cases-")
    up = os.path.join(tmp, "up")
    spyre(exe, "fixture", "upstream", "--out", up, "--seed", "5")
    base, head, sel = pick_change(exe, up)
    want = scheduled(sel)
    specs = os.path.join(up, "spyre", "specs")
    total = sum(want.values())
    with_cases = {t: n for t, n in want.items() if n}
    print("change %s..%s: %d scheduled tests, %d kernel cases" % (base[:10], head[:10],
                                                                  len(want), total))

    # --explain, test by test
    for tid, n in sorted(want.items()):
        ex = spyre(exe, "select", "--repo", up, "--base", base, "--head", head, "--explain",
                   tid).stdout
        m = re.search(r"(\d+) kernel cases by rule", ex)
        check("select --explain %s: %d cases" % (tid.split("::")[-1], n),
              m is not None and int(m.group(1)) == n, ex)

    # run
    out = os.path.join(tmp, "run")
    p = spyre(exe, "run", "--repo", up, "--base", base, "--head", head, "--out", out,
              "--jobs", "2", "--no-progress", ok=(0, 1))
    check("run: says how many cases it runs", "%d kernel cases" % total in p.stderr, p.stderr)
    got = per_test(os.path.join(out, "results.jsonl"))
    check("run: results.jsonl has the same cases per test as select", got == with_cases,
          (got, with_cases))

    # the ids, test by test: select --cases, run, specs explain and specs list --upstream
    sides = {
        "select": real.from_select_cases(spyre(exe, "select", "--repo", up, "--base", base,
                                               "--head", head, "--cases").stdout),
        "run": real.from_results(os.path.join(out, "results.jsonl")),
        "explain": real.from_explain(exe, up, head, [specs], want, 2,
                                     os.path.join(tmp, "cache"))[0],
        "list": real.from_list(json.loads(spyre(exe, "specs", "list", "--upstream", up,
                                                "--rev", head, "--json", specs).stdout)),
    }
    check("select --cases: as many cases per test as select --json",
          {t: len(v) for t, v in sides["select"].items()} == with_cases,
          (sides["select"].keys(), with_cases))
    bad = real.compare(sides, want)
    check("select, run, explain and list give each test the same case ids",
          not bad, "\n".join(real.describe(t, got) for t, got in bad[:5]))

    # the daemon, from a push webhook for the same range
    d = Daemon(exe, extra="upstream:\n  repo: o/r\n  url: %s\n  branches: [main]\n"
               "  poll_interval_s: 0\nworkers:\n  count: 1\nspecs: [%s]\n"
               "executor:\n  jobs: 2\n" % (up, os.path.join(up, "spyre", "specs")))
    d.start()
    try:
        push = json.dumps({"ref": "refs/heads/main", "before": base, "after": head,
                           "repository": {"full_name": "o/r"}}).encode()
        st, b = d.deliver("push", "same-cases-1", push)
        check("daemon: the push is accepted", st == 202, b)
        end, job = time.time() + 240, None
        while time.time() < end:
            jobs = [j for j in d.jobs() if j["head"] == head]
            if jobs and jobs[0]["state"] in ("reported", "failed"):
                job = jobs[0]
                break
            time.sleep(0.2)
        check("daemon: the job is reported", job and job["state"] == "reported", job)
        if job:
            rdir = os.path.join(d.dir, "state", "reports", str(job["id"]))
            got = per_test(os.path.join(rdir, "results.jsonl"))
            check("daemon: results.jsonl has the same cases per test as select",
                  got == with_cases, (got, with_cases))
            bad = real.compare({"select": sides["select"], "daemon": real.from_results(
                os.path.join(rdir, "results.jsonl"))}, want)
            check("daemon: the same case ids as select", not bad,
                  "\n".join(real.describe(t, g) for t, g in bad[:5]))
            check("daemon: the job's detail counts them", ("%d kernel cases run" % total) in
                  job.get("detail", ""), job)
    finally:
        d.stop()

    # every test of the upstream at HEAD (a selection that falls back to every test)
    n, bad = real.revision(exe, up, specs, "HEAD", 2, tmp)
    check("every test at HEAD: the four sides agree (%d tests)" % n, n > 100 and bad == 0, bad)
    if failures:
        print("%d failed: %s" % (len(failures), ", ".join(failures)))
        sys.exit(1)
    print("same-cases: all passed")


main()
