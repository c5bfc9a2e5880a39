"""Crash safety from delivery to dashboard: a stream of signed push deliveries (each a new tip of
a local upstream, each job a few kernel cases) while the daemon, with jobs running, is killed with
SIGKILL at random moments and restarted, KILLS times over. Afterwards every acknowledged
delivery's job must have reached the receiver as exactly one `completed` message (counted by
idempotency key: no duplicate, none lost), and the outbox must be empty. Re-sends of one key
(at least once) are printed. Usage: crash_report.py SPYRE_CI [DELIVERIES] [KILLS] [SEED]."""
import json
import os
import random
import sys
import threading
import time

from daemonlib import Daemon, Receiver, dashboard_config
from dashboard import SPECS, commit, git, upstream

SENDERS = 2


def main(binary, total, kills, seed):
    rng = random.Random(seed)
    rec = Receiver().start()
    d = Daemon(binary, "")
    up = os.path.join(d.dir, "upstream")
    upstream(up)
    tips = [git(up, "rev-parse", "HEAD")]
    for i in range(1, total + 1):
        tips.append(commit(up, i))
    d.write_config("upstream:\n  repo: o/r\n  url: %s\n  branches: [main]\n"
                   "  poll_interval_s: 0\nworkers:\n  count: 2\n  lease_s: 5\n"
                   "  max_attempts: 100\nexecutor:\n  jobs: 1\nspecs: [%s]\n"
                   % (up, SPECS) + dashboard_config(d, rec))
    acked = {}  # delivery id -> job id
    lock = threading.Lock()
    next_i = [1]
    stats = {"interrupted": 0}
    alive = threading.Event()

    def sender():
        while True:
            with lock:
                i = next_i[0]
                if i > total:
                    return
                next_i[0] += 1
            body = json.dumps({"ref": "refs/heads/main", "before": tips[i - 1],
                               "after": tips[i], "repository": {"full_name": "o/r"}}).encode()
            did = "crash-report-%06d" % i
            while True:
                alive.wait()
                try:
                    st, b = d.deliver("push", did, body)
                except (OSError, ValueError):
                    with lock:
                        stats["interrupted"] += 1
                    time.sleep(0.02)
                    continue  # not acknowledged: sent again, as a redelivery
                if st in (200, 202):
                    with lock:
                        acked[did] = b["job_id"]
                    break
                time.sleep(0.02)
            time.sleep(0.15)  # a stream, not a burst: jobs run while deliveries arrive

    d.start()
    alive.set()
    threads = [threading.Thread(target=sender) for _ in range(SENDERS)]
    for t in threads:
        t.start()
    running_at_kill = 0
    for k in range(kills):
        time.sleep(rng.uniform(0.3, 1.5))
        try:
            running_at_kill += sum(1 for j in d.jobs() if j["state"] == "running") > 0
        except OSError:
            pass
        alive.clear()
        d.kill9()
        d.start()
        alive.set()
    for t in threads:
        t.join()
    jobs = set(acked.values())
    end = time.time() + 240
    while time.time() < end:
        done = {b["workflow"]["run_id"] for b in rec.by_status("completed").values()}
        st, m = d.get("/metrics")
        if all(str(j) in done for j in jobs) and "spyre_ci_outbox_depth 0\n" in m:
            break
        time.sleep(0.5)
    all_jobs = d.jobs()
    reclaimed = sum(1 for j in all_jobs if j["attempts"] > 1)
    lost_detail = []
    for j in all_jobs:
        if j["id"] in jobs and str(j["id"]) not in done:
            st, body = d.get("/api/dashboard/jobs/%d" % j["id"])
            lost_detail.append(json.dumps({"job": j, "outbox": (body or {}).get("outbox")}))
    d.stop()
    rec.stop()

    per_job = {}
    for key, b in rec.by_status("completed").items():
        per_job.setdefault(int(b["workflow"]["run_id"]), set()).add(key)
    lost = [j for j in jobs if j not in per_job]
    dups = sum(len(k) - 1 for k in per_job.values())
    extra = [j for j in per_job if j not in jobs]
    with rec.lock:
        resent = len(rec.posts) - len(rec.keys)
    print("%d deliveries acknowledged (%d jobs), %d kills (%d with a job running), "
          "%d sends interrupted, %d jobs reclaimed after a kill; receiver: %d completed, "
          "%d lost, %d duplicate keys, %d re-sends of a key" %
          (len(acked), len(jobs), kills, running_at_kill, stats["interrupted"], reclaimed,
           len(per_job), len(lost), dups, resent))
    ok = len(acked) == total and not lost and dups == 0 and not extra
    if not ok:
        print("FAIL: lost %s, extra %s" % (lost[:10], extra[:10]))
        for line in lost_detail[:10]:
            print("lost job: " + line)
        with rec.lock:
            for key, b in rec.posts:
                if int(b["workflow"]["run_id"]) in lost:
                    print("received for a lost job: %s %s" % (key, b["workflow"]["status"]))
        print(open(d.log).read()[-3000:])
    return 0 if ok else 1


if __name__ == "__main__":
    a = sys.argv
    sys.exit(main(a[1], int(a[2]) if len(a) > 2 else 200, int(a[3]) if len(a) > 3 else 20,
                  int(a[4]) if len(a) > 4 else 14))
