"""The poller and the workers on a local upstream (a path URL): a new tip makes one job, a
burst of pushes between two fetches makes one job for the last tip, a webhook for a tip the
poller already saw makes no second job (and the other way round), a force-push sideways,
backwards or onto an orphan history gets the previous tip as its base (never base = head), a
watched branch the upstream lacks is logged once when it goes and once when it comes back and
never holds up the other branch, a branch deleted and made again gets its previous tip as the
base, and a worker claims each job, records its selection, runs the kernel cases it schedules
(none here: these tests are in no spec) and reports the job. Usage: poller.py SPYRE_CI."""
import json
import os
import subprocess
import sys
import time

from daemonlib import Daemon

failures = []
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def check(what, cond, detail=""):
    print("ok  " if cond else "FAIL", what, "" if cond else detail)
    if not cond:
        failures.append(what)


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x")
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def commit(repo, name, text):
    os.makedirs(os.path.join(repo, "test"), exist_ok=True)
    with open(os.path.join(repo, "test", name), "w") as f:
        f.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "edit " + name)
    return git(repo, "rev-parse", "HEAD")


def wait_for(d, pred, what, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        jobs = d.jobs()
        if pred(jobs):
            return jobs
        time.sleep(0.1)
    check(what, False, json.dumps(d.jobs()))
    return d.jobs()


def base_of(d, head, what):
    """The base of the job of tip `head`, once the poller has made it."""
    jobs = wait_for(d, lambda j: any(x["head"] == head for x in j), what + ": tip seen")
    hit = [x for x in jobs if x["head"] == head]
    return hit[0]["base"] if hit else None


def main(binary):
    d = Daemon(binary, "")
    up = os.path.join(d.dir, "upstream")
    os.makedirs(up)
    git(up, "init", "-q", "-b", "main")
    c1 = commit(up, "test_a.py", "def test_a():\n    pass\n")
    specs = os.path.join(ROOT, "testspecs", "specs")
    d.write_config("upstream:\n  repo: o/r\n  url: %s\n  branches: [main, dev]\n"
                   "  poll_interval_s: 1\nworkers:\n  count: 1\n  lease_s: 30\n"
                   "specs: [%s]\n" % (up, specs))
    d.start()
    try:
        jobs = wait_for(d, lambda j: len(j) == 1 and j[0]["state"] == "reported",
                        "first tip selected")
        check("first tip: one poll job", len(jobs) == 1 and jobs[0]["head"] == c1 and
              jobs[0]["event"] == "poll", json.dumps(jobs))
        st, one = d.get("/api/jobs/%d" % jobs[0]["id"])
        check("selection recorded, the job run",
              one.get("funnel") is not None and
              "0 kernel cases run" in one.get("detail", ""), json.dumps(one))

        # a burst: three commits pushed between two fetches make one job, for the last tip
        # (made on a detached HEAD, then main moved once, so no fetch sees a middle tip)
        git(up, "checkout", "-q", "--detach")
        c2 = commit(up, "test_b.py", "def test_b():\n    pass\n")
        c3 = commit(up, "test_c.py", "def test_c():\n    pass\n")
        c4 = commit(up, "test_d.py", "def test_d():\n    pass\n")
        git(up, "update-ref", "refs/heads/main", c4)
        git(up, "checkout", "-q", "main")
        jobs = wait_for(d, lambda j: any(x["head"] == c4 for x in j), "burst tip seen")
        heads = [x["head"] for x in jobs]
        check("burst coalesced", c2 not in heads and c3 not in heads and heads.count(c4) == 1,
              json.dumps(jobs))
        check("burst base is the previous tip",
              [x for x in jobs if x["head"] == c4][0]["base"] == c1, json.dumps(jobs))

        # the webhook for the tip the poller saw: the same job, none new
        push = json.dumps({"ref": "refs/heads/main", "before": c1, "after": c4,
                           "repository": {"full_name": "o/r"}}).encode()
        st, b = d.deliver("push", "p-1", push)
        check("webhook for a polled tip: same job", st == 202 and
              b["job_id"] == [x for x in jobs if x["head"] == c4][0]["id"], str(b))

        # the webhook first, then the poller: one job
        c5 = commit(up, "test_e.py", "def test_e():\n    pass\n")
        push = json.dumps({"ref": "refs/heads/main", "before": c4, "after": c5,
                           "repository": {"full_name": "o/r"}}).encode()
        st, b = d.deliver("push", "p-2", push)
        check("webhook before the poller", st == 202, str(b))
        time.sleep(2.5)  # at least two polls
        jobs = d.jobs()
        check("poller after the webhook: no second job",
              [x["head"] for x in jobs].count(c5) == 1, json.dumps(jobs))

        # a force-push: main rewritten from c4 on; the base is the merge base c4
        git(up, "checkout", "-q", "--detach", c4)
        c6 = commit(up, "test_f.py", "def test_f():\n    pass\n")
        git(up, "update-ref", "refs/heads/main", c6)
        git(up, "checkout", "-q", "main")
        b = base_of(d, c6, "force-push sideways")
        check("force-push sideways: the base is the previous tip", b == c5, str(b))

        # backwards, to a commit that never was a tip (c3), then onto an orphan history
        git(up, "update-ref", "refs/heads/main", c3)
        b = base_of(d, c3, "force-push backwards")
        check("force-push backwards: the base is the previous tip", b == c6, str(b))
        git(up, "checkout", "-q", "--orphan", "orphan")
        git(up, "rm", "-rqf", ".")
        c7 = commit(up, "test_g.py", "def test_g():\n    pass\n")
        git(up, "update-ref", "refs/heads/main", c7)
        git(up, "checkout", "-q", "main")
        b = base_of(d, c7, "orphan history")
        check("orphan history: the base is the previous tip", b == c3, str(b))

        # dev: missing from the start, made, deleted, made again elsewhere
        git(up, "branch", "dev", c2)
        jobs = wait_for(d, lambda j: any(x["head"] == c2 for x in j), "dev's first tip seen")
        git(up, "branch", "-D", "dev")
        time.sleep(2.5)
        git(up, "checkout", "-q", "--detach", c4)
        c8 = commit(up, "test_h.py", "def test_h():\n    pass\n")
        git(up, "branch", "dev", c8)
        git(up, "checkout", "-q", "main")
        b = base_of(d, c8, "dev made again")
        check("dev made again: the base is its previous tip", b == c2, str(b))
        jobs = d.jobs()
        check("no job has base = head", all(x["base"] != x["head"] for x in jobs),
              json.dumps(jobs))
        log = open(d.log).read()
        gone = log.count("the upstream has no branch dev")
        back = log.count("branch dev is upstream again")
        check("dev missing: logged once each time it went (twice)", gone == 2, str(gone))
        check("dev back: logged once each time it came back (twice)", back == 2, str(back))
        check("no poll failure for a missing branch", "poller: upstream has no branch" not in log
              and "failure 1" not in log, log[-2000:])
        jobs = wait_for(d, lambda j: all(x["state"] == "reported" for x in j),
                        "every job run")
        check("every job run and reported", all(x["state"] == "reported" for x in jobs),
              json.dumps(jobs))
        st, m = d.get("/metrics")
        check("metrics: selections and poll jobs counted",
              "spyre_ci_selections_total %d" % len(jobs) in m and
              "spyre_ci_poll_jobs_total 7" in m, m[-1500:])
    finally:
        d.stop()
    # an upstream path that is not there is named as such (and retried, not fatal)
    gone = os.path.join(d.dir, "no-such-upstream")
    d.write_config("upstream:\n  repo: o/r\n  url: %s\n  branches: [main]\n"
                   "  poll_interval_s: 1\nworkers:\n  count: 1\n  lease_s: 30\n"
                   "specs: [%s]\n" % (gone, specs))
    d.start()
    try:
        end = time.time() + 20
        while time.time() < end and "does not exist" not in open(d.log).read():
            time.sleep(0.2)
        check("a missing upstream path is logged as such",
              "upstream path %s does not exist" % gone in open(d.log).read(),
              open(d.log).read()[-1500:])
    finally:
        d.stop()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
