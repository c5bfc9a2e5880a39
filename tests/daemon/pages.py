"""The dashboard's pages from jobs the real worker ran (a local upstream, a spec set with drift
on purpose, tests/fixtures/daemon/drift/): each job page links its junit.xml and results.jsonl,
served byte for byte as the run wrote them (results.jsonl rebuilt from the store when the file
is gone), and nothing else under /jobs/{id}/; the funnel starts from the changed files; /trends
charts queue and run time from the store's own stamps; /specs lists the three kinds of drift
(a new test under an unlisted mode, a spec entry matching no test, an op the emulator lacks);
a case the store records as flaky (passed on its retry) counts as passed and is listed on
/trends.
Usage: pages.py SPYRE_CI."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

from daemonlib import Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
SPECS = os.path.join(HERE, "..", "fixtures", "daemon", "drift")
TEST_FILE = """from torch.testing._internal.common_utils import TestCase, run_tests


class TestRun(TestCase):
    def test_add(self):
        self.edit = %d

    def test_frob(self):
        self.edit = %d
%s"""
NEW_TEST = """
    def test_brand_new(self):
        self.edit = 1
"""
failures = []


def check(what, cond, detail=""):
    print("ok  " if cond else "FAIL", what, "" if cond else str(detail)[:1500])
    if not cond:
        failures.append(what)


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x")
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def commit(repo, n, extra=""):
    with open(os.path.join(repo, "test", "test_run_fixture.py"), "w") as f:
        f.write(TEST_FILE % (n, n, extra))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "edit %d" % n)
    return git(repo, "rev-parse", "HEAD")


def reported(d, n):
    jobs = d.jobs()
    return len(jobs) >= n and all(j["state"] == "reported" for j in jobs)


def wait(pred, what, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    raise AssertionError(what)


def raw(d, path):
    st, data = d.request("GET", path)
    return st, data


def downloads(d, job):
    rdir = os.path.join(d.dir, "state", "reports", str(job))
    for name, ctype in (("junit.xml", "xml"), ("results.jsonl", "ndjson")):
        with open(os.path.join(rdir, name), "rb") as f:
            want = f.read()
        st, got = raw(d, "/jobs/%d/%s" % (job, name))
        check("/jobs/%d/%s: the run's file as written (%d bytes)" % (job, name, len(want)),
              st == 200 and got == want and len(want) > 0, (st, got[:200]))
    st, html = d.get("/jobs/%d" % job)
    check("job page links both downloads",
          'href="/jobs/%d/junit.xml"' % job in html and
          'href="/jobs/%d/results.jsonl"' % job in html, html[:1500])
    for bad in ("/jobs/%d/junit.xml/" % job, "/jobs/%d/JUNIT.XML" % job,
                "/jobs/%d/summary.json" % job, "/jobs/%d/job.json" % job,
                "/jobs/%d/../%d/junit.xml" % (job, job), "/jobs/%dx/junit.xml" % job,
                "/jobs/+%d" % job, "/jobs/-1", "/jobs/ %d" % job, "/jobs/%d/" % job,
                "/jobs//junit.xml", "/api/dashboard/jobs/%d/junit.xml" % job,
                "/jobs/99999999999999999999999", "/jobs/%d/junit.xml%%00" % job,
                "/jobs/%d/junit.xml%%00.txt" % job, "/jobs/%d%%00/junit.xml" % job):
        st, _ = raw(d, bad.replace(" ", "%20"))
        check("strict path: %s is 404" % bad, st == 404, st)
    # escapes decode, except to a NUL
    st, got = raw(d, "/jobs/%d/junit%%2Exml" % job)
    check("/jobs/%d/junit%%2Exml is the report" % job, st == 200 and got.startswith(b"<?xml"),
          (st, got[:100]))
    # the run's results.jsonl gone (an older daemon's job): rebuilt from the store's rows
    with open(os.path.join(rdir, "results.jsonl")) as f:
        names = sorted(json.loads(x)["name"] for x in f if x.strip())
    os.rename(os.path.join(rdir, "results.jsonl"), os.path.join(rdir, "results.jsonl.bak"))
    os.rename(os.path.join(rdir, "junit.xml"), os.path.join(rdir, "junit.xml.bak"))
    st, got = raw(d, "/jobs/%d/results.jsonl" % job)
    lines = [json.loads(x) for x in got.decode().splitlines() if x.strip()] if st == 200 else []
    check("results.jsonl without the file: one line per stored case",
          sorted(x.get("case") for x in lines) == names, (st, got[:600], names))
    st, _ = raw(d, "/jobs/%d/junit.xml" % job)
    check("junit.xml without the file: 404", st == 404, st)
    os.rename(os.path.join(rdir, "results.jsonl.bak"), os.path.join(rdir, "results.jsonl"))
    os.rename(os.path.join(rdir, "junit.xml.bak"), os.path.join(rdir, "junit.xml"))


def funnel(d, job):
    st, v = d.get("/api/dashboard/jobs/%d" % job)
    f = v.get("funnel") or {}
    check("job JSON: the funnel starts from 1 changed file",
          f.get("changed_files") == 1 and "candidates" not in f and
          f.get("impacted", -1) >= f.get("eligible", -1) >= f.get("scheduled", -1) >= 0, f)
    st, html = d.get("/jobs/%d" % job)
    check("job page: the changed files' bar", "<th>changed files</th><td class=\"num\">1 file"
          in html, html[html.find("Funnel"):][:600])
    st, v = d.get("/api/dashboard")
    mine = [j for j in v["jobs"] if j["id"] == job]
    check("index JSON: the job's funnel from its changed files",
          mine and (mine[0].get("funnel") or {}).get("changed_files") == 1, mine)
    st, html = d.get("/")
    check("index: a changed files column", "<th>changed files</th>" in html)


def svg_of(html, title):
    m = re.search(r"<svg[^>]*><title>%s</title>.*?</svg>" % re.escape(title), html, re.S)
    return m.group(0) if m else ""


def trends(d, jobs):
    st, v = d.get("/api/dashboard/trends")
    pts = {p["id"]: p for p in v.get("jobs", [])}
    for j in jobs:
        p = pts.get(j["id"], {})
        check("trends JSON: job %d's queue and run time from the store" % j["id"],
              isinstance(p.get("queue_s"), float) and p["queue_s"] >= 0 and
              isinstance(p.get("run_s"), float) and p["run_s"] >= 0 and
              p.get("started_ms", 0) >= p.get("created_ms", 1 << 62), p)
    st, html = d.get("/trends")
    for title in ("Queue time (s)", "Run time (s)"):
        svg = svg_of(html, title)
        check("/trends: the %s chart has a line through the jobs" % title,
              "<polyline" in svg and svg.count("<circle") == len(jobs) and
              "no data yet" not in svg, svg[:600])


def specs(d, newest):
    st, v = d.get("/api/dashboard/specs")
    unl = [e["test"] for e in v.get("unlisted", [])]
    stale = [e["test"] for e in v.get("stale", [])]
    ops = {o["op"]: o["cases"] for o in v.get("unsupported_ops", [])}
    check("specs JSON from the newest selection", v.get("from_job") == newest, v)
    check("specs JSON: the new test under the unlisted mode",
          any(t.endswith("TestRun::test_brand_new") for t in unl) and
          all(e.get("mode") == "skip" for e in v.get("unlisted", [])), v.get("unlisted"))
    check("specs JSON: the entry that matches no test", "TestRun::test_gone" in stale, stale)
    check("specs JSON: the op the emulator lacks, by count",
          ops.get("frobnicate", 0) >= 1 and "add" not in ops, ops)
    st, html = d.get("/specs")
    for what, text in (("unlisted", "test_brand_new"), ("stale", "TestRun::test_gone"),
                       ("unsupported op", "<code>frobnicate</code>: %d case"
                        % ops.get("frobnicate", 0))):
        check("/specs shows the %s" % what, st == 200 and text in html)
    check("/specs: the three headings with their counts",
          "New upstream tests under an unlisted mode (%d)" % len(unl) in html and
          "Spec entries that match no test any more (%d)" % len(stale) in html and
          "Unsupported ops by count" in html)


def flaky(d, job):
    """A stored case marked flaky, as the worker records one that passed on its retry (the
    emulator is deterministic, so the row is set here)."""
    st, before = d.get("/api/dashboard/jobs/%d" % job)
    db = sqlite3.connect(os.path.join(d.dir, "state", "spyre-ci.db"), timeout=30)
    name = db.execute("SELECT case_id FROM results WHERE job_id = ? AND outcome = 'passed' "
                      "ORDER BY case_id LIMIT 1", (job,)).fetchone()[0]
    db.execute("UPDATE results SET outcome = 'flaky' WHERE job_id = ? AND case_id = ?",
               (job, name))
    db.commit()
    db.close()
    st, v = d.get("/api/dashboard/trends")
    check("trends JSON: the flaky case, in 1 job", v.get("flaky") == [{"case": name, "jobs": 1}],
          v.get("flaky"))
    st, html = d.get("/trends")
    check("/trends lists the flaky case", "<code>%s</code> flaky in 1 job<" % name in html)
    st, after = d.get("/api/dashboard/jobs/%d" % job)
    check("job JSON: a flaky case counts as passed, and as flaky",
          after["cases"]["passed"] == before["cases"]["passed"] and
          after["cases"]["flaky"] == 1 and before["cases"]["flaky"] == 0,
          (before["cases"], after["cases"]))


def main(binary):
    d = Daemon(binary, "")
    up = os.path.join(d.dir, "upstream")
    os.makedirs(os.path.join(up, "test"))
    git(up, "init", "-q", "-b", "main")
    commit(up, 0)
    d.write_config("upstream:\n  repo: o/r\n  url: %s\n  branches: [main]\n  poll_interval_s: 1\n"
                   "workers:\n  count: 1\n  lease_s: 30\nspecs: [%s]\n" % (up, SPECS))
    d.start()
    try:
        wait(lambda: reported(d, 1), "the first tip reported")
        commit(up, 1, NEW_TEST)
        wait(lambda: reported(d, 2), "the second job reported")
        jobs = d.jobs()
        newest = max(j["id"] for j in jobs)
        downloads(d, newest)
        funnel(d, newest)
        trends(d, jobs)
        specs(d, newest)
        flaky(d, newest)
    finally:
        d.stop()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
