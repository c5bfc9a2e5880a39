"""End to end: commits to a local upstream reach a local dashboard receiver through the poller
and through webhooks (a push, and a CRCR repository_dispatch whose delivery id and payload the
messages echo), each job as in_progress then completed, the completed message's counts
equal to the job's results.jsonl; then the receiver goes down for a while and comes back: every
message is delivered, in order per job, and the outbox empties. Usage: dashboard.py SPYRE_CI."""
import json
import os
import subprocess
import sys
import time

from daemonlib import Daemon, Receiver, dashboard_config, dispatch

failures = []
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SPECS = os.path.join(ROOT, "tests", "fixtures", "daemon", "specs")
TALLY = {"passed": "passed", "xpassed": "passed", "flaky": "passed", "failed": "failed",
         "error": "failed", "crashed": "failed", "timed_out": "failed", "skipped": "skipped",
         "xfailed": "skipped"}
TEST_FILE = """from torch.testing._internal.common_utils import TestCase, run_tests


class TestRun(TestCase):
    def test_add(self):
        self.edit = %d

    def test_div_exact(self):
        self.edit = %d

    def test_sub_strict(self):
        self.edit = %d
"""


def check(what, cond, detail=""):
    print("ok  " if cond else "FAIL", what, "" if cond else detail)
    if not cond:
        failures.append(what)


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x")
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def upstream(path):
    os.makedirs(os.path.join(path, "test"))
    git(path, "init", "-q", "-b", "main")
    return commit(path, 0)


def commit(repo, n):
    with open(os.path.join(repo, "test", "test_run_fixture.py"), "w") as f:
        f.write(TEST_FILE % (n, n, n))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "edit %d" % n)
    return git(repo, "rev-parse", "HEAD")


def wait(pred, what, timeout=90):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    check(what, False)
    return False


def counts_of(d, job_id):
    out = {"passed": 0, "failed": 0, "skipped": 0}
    with open(os.path.join(d.dir, "state", "reports", str(job_id), "results.jsonl")) as f:
        for line in f:
            if line.strip():
                out[TALLY[json.loads(line)["outcome"]]] += 1
    return out


def check_jobs(d, rec, jobs, label):
    """Every job reported; its completed message's counts are its results.jsonl's; its
    in_progress arrived (first) before its completed."""
    done = rec.by_status("completed")
    by_job = {b["workflow"]["run_id"]: b for b in done.values()}
    for j in jobs:
        b = by_job.get(str(j["id"]))
        if not b:
            check("%s: job %d completed at the receiver" % (label, j["id"]), False)
            continue
        want = counts_of(d, j["id"])
        check("%s: job %d counts match results.jsonl" % (label, j["id"]),
              b["workflow"]["test_results"] == want and sum(want.values()) > 0,
              "%s vs %s" % (b["workflow"]["test_results"], want))
        with rec.lock:
            order = [x["workflow"]["status"] for _, x in rec.posts
                     if x["workflow"]["run_id"] == str(j["id"])]
        first_done = order.index("completed")
        check("%s: job %d in_progress before completed" % (label, j["id"]),
              "in_progress" in order[:first_done], str(order))


def job_state(d, jid):
    return d.get("/api/jobs/%d" % jid)[1].get("state")


def reported(d, n):
    jobs = d.jobs()
    return len(jobs) >= n and all(j["state"] == "reported" for j in jobs)


def delivered_all(d, rec, n):
    st, m = d.get("/metrics")
    return (len(rec.by_status("completed")) >= n and
            "spyre_ci_outbox_depth 0\n" in m)


def main(binary):
    rec = Receiver().start()
    d = Daemon(binary, "")
    up = os.path.join(d.dir, "upstream")
    c0 = upstream(up)
    base = ("upstream:\n  repo: o/r\n  url: %s\n  branches: [main]\n  poll_interval_s: %%d\n"
            "workers:\n  count: 1\n  lease_s: 30\n  max_attempts: 1\nspecs: [%s]\n" % (up, SPECS))
    d.write_config(base % 1 + dashboard_config(d, rec))
    d.start()
    try:
        # the poller: the first tip, then two more, one at a time
        wait(lambda: reported(d, 1), "poller: first job reported")
        for n in (1, 2):
            commit(up, n)
            wait(lambda: reported(d, n + 1), "poller: job %d reported" % (n + 1))
        wait(lambda: delivered_all(d, rec, 3), "poller: three completed delivered")
        check_jobs(d, rec, d.jobs(), "poller")
        st, m = d.get("/metrics")
        check("metrics: cases and job run time",
              'spyre_ci_cases_total{outcome="passed"} 6' in m and
              "spyre_ci_job_run_seconds_count 3" in m, m[-2500:])
    finally:
        d.stop()

    # the webhook, with the poller off
    d.write_config(base % 0 + dashboard_config(d, rec))
    d.start()
    try:
        prev = git(up, "rev-parse", "HEAD")
        c = commit(up, 3)
        push = json.dumps({"ref": "refs/heads/main", "before": prev, "after": c,
                           "repository": {"full_name": "o/r"}}).encode()
        st, b = d.deliver("push", "hook-1", push)
        check("webhook accepted", st == 202, str(b))
        wait(lambda: reported(d, 4) and delivered_all(d, rec, 4), "webhook: job delivered")
        hook = [j for j in d.jobs() if j["head"] == c]
        check("webhook: one job for the push", len(hook) == 1, json.dumps(d.jobs()))
        check_jobs(d, rec, hook, "webhook")

        # a CRCR repository_dispatch: its messages echo the dispatch's delivery id and payload
        prev = c
        c = commit(up, 6)
        inner = {"ref": "refs/heads/main", "before": prev, "after": c,
                 "repository": {"full_name": "o/r"}, "marker": "echo me"}
        st, b = d.deliver("repository_dispatch", "hook-crcr", dispatch(
            {"event_type": "push", "delivery_id": "crcr-up-1", "payload": inner}))
        check("dispatch accepted", st == 202, str(b))
        wait(lambda: reported(d, 5) and delivered_all(d, rec, 5), "dispatch: job delivered")
        msgs = [x for x in rec.by_status("completed").values()
                if x["workflow"]["run_id"] == str(b.get("job_id"))]
        check("dispatch: the completed message echoes the CRCR delivery and payload",
              len(msgs) == 1 and msgs[0]["delivery_id"] == "crcr-up-1" and
              msgs[0]["payload"] == inner and msgs[0]["event_type"] == "push",
              json.dumps(msgs)[:800])

        # the outage: the receiver down while two more jobs run, then back
        rec.stop()
        for n, hid in ((7, "hook-2"), (8, "hook-3")):
            prev = git(up, "rev-parse", "HEAD")
            c = commit(up, n)
            push = json.dumps({"ref": "refs/heads/main", "before": prev, "after": c,
                               "repository": {"full_name": "o/r"}}).encode()
            d.deliver("push", hid, push)
        wait(lambda: reported(d, 7), "outage: jobs reported while the receiver is down")

        def retried():
            st, m = d.get("/metrics")
            line = [x for x in m.splitlines() if x.startswith("spyre_ci_outbox_retries_total")]
            return line and int(line[0].split()[1]) >= 2
        wait(retried, "outage: posts failed and were retried")
        st, m = d.get("/metrics")
        check("outage: messages wait in the outbox", "spyre_ci_outbox_depth 0\n" not in m)
        time.sleep(2)
        rec.start()
        wait(lambda: delivered_all(d, rec, 7), "outage: every message delivered after it")
        check_jobs(d, rec, d.jobs(), "after the outage")
        print("posts %d, distinct keys %d" % (len(rec.posts), len(rec.keys)))
        check("every job: exactly one completed key", len(rec.by_status("completed")) == 7)

        # a job that fails after its in_progress went out (its report cannot be written)
        # still ends: completed, conclusion failure, no counts (max_attempts 1: an I/O failure
        # is not retried here; tests/unit/relay/job.c has the retries)
        nxt = max(j["id"] for j in d.jobs()) + 1
        os.makedirs(os.path.join(d.dir, "state", "reports", str(nxt), "junit.xml", "x"))
        prev = git(up, "rev-parse", "HEAD")
        c = commit(up, 9)
        push = json.dumps({"ref": "refs/heads/main", "before": prev, "after": c,
                           "repository": {"full_name": "o/r"}}).encode()
        st, b = d.deliver("push", "hook-fail", push)
        check("failing job is job %d" % nxt, b.get("job_id") == nxt, str(b))
        wait(lambda: job_state(d, nxt) == "failed" and delivered_all(d, rec, 8),
             "failed job: its completed delivered")
        msgs = [x for x in rec.by_status("completed").values()
                if x["workflow"]["run_id"] == str(nxt)]
        check("failed job: completed with conclusion failure",
              len(msgs) == 1 and msgs[0]["workflow"]["conclusion"] == "failure",
              json.dumps(msgs)[:600])
    finally:
        d.stop()
        rec.stop()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
