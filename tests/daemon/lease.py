"""The lease keeper: a job that runs longer than its lease (workers.lease_s: 2, cases that take
longer on one executor) keeps it, with a second worker idle beside it ready to take an expired
lease: one attempt, one completed message. Then a daemon killed with SIGKILL mid-job: after the
restart the job is reclaimed once its lease expires, run again and reported, and the receiver
holds exactly one completed message for it; the lock files a kill inside a fetch leaves in the
mirror are cleared at the restart, so the next tip's fetch works; with one attempt allowed, a
job killed mid-run is given up at the restart and its dashboard gets a completed message with
the conclusion failure. Usage: lease.py SPYRE_CI [quick]: quick stops after the killed job (the
lease kept, the job reclaimed and reported once); the stale locks and the give-up then run in
CI's slow gate."""
import json
import os
import sys
import time

from daemonlib import Daemon, Receiver, dashboard_config
from dashboard import check, commit, failures, git, upstream, wait

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SLOW = os.path.join(ROOT, "tests", "fixtures", "daemon", "slow")


def metric(d, name):
    st, m = d.get("/metrics")
    for line in m.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def push(d, up, n, did):
    prev = git(up, "rev-parse", "HEAD")
    c = commit(up, n)
    body = json.dumps({"ref": "refs/heads/main", "before": prev, "after": c,
                       "repository": {"full_name": "o/r"}}).encode()
    st, b = d.deliver("push", did, body)
    check("delivery %s accepted" % did, st == 202, str(b))
    return b["job_id"]


def job(d, jid):
    return d.get("/api/jobs/%d" % jid)[1]


def completed_keys(rec, jid):
    return [k for k, b in rec.by_status("completed").items()
            if b["workflow"]["run_id"] == str(jid)]


def main(binary, quick=False):
    rec = Receiver().start()
    d = Daemon(binary, "")
    up = os.path.join(d.dir, "upstream")
    upstream(up)
    def config(attempts):
        d.write_config("upstream:\n  repo: o/r\n  url: %s\n  branches: [main]\n"
                       "  poll_interval_s: 0\nworkers:\n  count: 2\n  lease_s: 2\n"
                       "  max_attempts: %d\nexecutor:\n  jobs: 1\nspecs: [%s]\n"
                       % (up, attempts, SLOW) + dashboard_config(d, rec))
    config(3)
    d.start()
    try:
        j1 = push(d, up, 1, "lease-1")
        wait(lambda: job(d, j1)["state"] == "reported", "long job reported", 300)
        took = metric(d, "spyre_ci_job_run_seconds_sum")
        check("the job ran longer than a lease (%.1f s > 2 s)" % took, took > 2.0)
        check("one attempt: the lease was kept", job(d, j1)["attempts"] == 1, str(job(d, j1)))
        wait(lambda: len(completed_keys(rec, j1)) == 1, "long job: one completed")

        j2 = push(d, up, 2, "lease-2")
        wait(lambda: job(d, j2)["state"] == "running" and os.path.exists(
            os.path.join(d.dir, "state", "reports", str(j2), "job.json")),
            "second job running its cases", 120)
        time.sleep(1)
        d.kill9()
        # what a kill inside a fetch leaves: the lock of the branch's ref and FETCH_HEAD's
        mirror = os.path.join(d.dir, "state", "mirror.git")
        for lock in ("refs/heads/main.lock", "FETCH_HEAD.lock"):
            open(os.path.join(mirror, lock), "w").close()
        d.start()
        wait(lambda: job(d, j2)["state"] == "reported", "killed job reclaimed and reported",
             300)
        check("the killed job ran twice", job(d, j2)["attempts"] == 2, str(job(d, j2)))
        wait(lambda: len(completed_keys(rec, j2)) == 1, "killed job: one completed")
        time.sleep(1)
        check("killed job: exactly one completed key", len(completed_keys(rec, j2)) == 1)
        res = job(d, j2).get("results") or {}
        check("killed job: its results recorded once", res == {"passed": 3}, str(res))
        if quick:
            return finish()

        # the next tip is not in the mirror: its fetch meets no stale lock (the start cleared
        # them) and the job runs on its first attempt
        j3 = push(d, up, 3, "lease-3")
        wait(lambda: job(d, j3)["state"] in ("reported", "failed"), "job after the kill ends",
             300)
        check("job after the kill: fetched and reported on its first attempt",
              job(d, j3)["state"] == "reported" and job(d, j3)["attempts"] == 1, str(job(d, j3)))
        check("stale locks cleared and said", "left by a process that died holding it" in
              open(d.log).read())

        # one attempt allowed: a job killed mid-run is given up at the restart, failed, and
        # the dashboard, which had its in_progress, gets its completed (conclusion failure)
        d.kill9()
        config(1)
        d.start()
        j4 = push(d, up, 4, "lease-4")
        wait(lambda: job(d, j4)["state"] == "running" and os.path.exists(
            os.path.join(d.dir, "state", "reports", str(j4), "job.json")),
            "fourth job running its cases", 120)
        time.sleep(1)
        d.kill9()
        d.start()
        wait(lambda: job(d, j4)["state"] == "failed", "a job past its attempts failed", 120)
        check("the give-up says why", "gave up after 1 attempts" in job(d, j4)["detail"],
              str(job(d, j4)))
        wait(lambda: len(completed_keys(rec, j4)) == 1, "given-up job: one completed")
        msg = rec.by_status("completed")[completed_keys(rec, j4)[0]]
        check("given-up job: conclusion failure", msg["workflow"]["conclusion"] == "failure",
              str(msg["workflow"]))
    finally:
        d.stop()
        rec.stop()
    return finish()


def finish():
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "quick"))
