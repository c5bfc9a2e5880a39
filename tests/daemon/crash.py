"""Crash safety of the intake: a stream of signed deliveries from several senders while the
daemon is killed with SIGKILL at random moments and restarted, KILLS times over (every fifth
stop is a SIGTERM drain instead, which must exit 0). Afterwards,
every delivery that was acknowledged (202) must be in the store exactly once, with its job and
the job's head; a delivery that was not acknowledged may or may not be there (it was never
promised). Usage: crash.py SPYRE_CI [DELIVERIES] [KILLS] [SEED]."""
import hashlib
import json
import os
import random
import sqlite3
import sys
import threading
import time

from daemonlib import Daemon

SENDERS = 4


def body_for(i):
    head = hashlib.sha1(b"tip %d" % i).hexdigest()
    return head, json.dumps({"ref": "refs/heads/main", "after": head,
                             "before": "0" * 40,
                             "repository": {"full_name": "pytorch/pytorch"}}).encode()


def main(binary, total, kills, seed):
    rng = random.Random(seed)
    d = Daemon(binary, "upstream:\n  branches: [main]\n  poll_interval_s: 0\n"
               "workers:\n  count: 0\n")
    acked = {}  # delivery id -> (job id, head)
    lock = threading.Lock()
    next_i = [0]
    stats = {"interrupted": 0, "committed_unacked": 0}
    up = threading.Event()

    def sender():
        while True:
            with lock:
                i = next_i[0]
                if i >= total:
                    return
                next_i[0] += 1
            head, body = body_for(i)
            did = "crash-%06d" % i
            while True:
                up.wait()
                try:
                    st, b = d.deliver("push", did, body)
                except (OSError, ValueError):
                    with lock:
                        stats["interrupted"] += 1
                    time.sleep(0.01)
                    # not acknowledged: GitHub would not resend; we do, as a redelivery
                    continue
                if st in (200, 202):
                    with lock:
                        if b.get("duplicate"):  # committed before a kill, never answered
                            stats["committed_unacked"] += 1
                        acked[did] = (b["job_id"], head)
                    break
                time.sleep(0.01)

    d.start()
    up.set()
    threads = [threading.Thread(target=sender) for _ in range(SENDERS)]
    for t in threads:
        t.start()
    for k in range(kills):
        time.sleep(rng.uniform(0.02, 0.25))
        up.clear()
        if k % 5 == 4:
            d.stop()  # a graceful drain now and then: SIGTERM must exit 0 mid-stream
        else:
            d.kill9()
        d.start()
        up.set()
    for t in threads:
        t.join()
    d.stop()

    db = sqlite3.connect(os.path.join(d.dir, "state", "spyre-ci.db"))
    bad = 0
    for did, (job, head) in sorted(acked.items()):
        rows = db.execute("SELECT job_id FROM deliveries WHERE delivery_id = ?", (did,)).fetchall()
        jrow = db.execute("SELECT head FROM jobs WHERE id = ?", (job,)).fetchall()
        if len(rows) != 1 or rows[0][0] != job or jrow != [(head,)]:
            bad += 1
            print("LOST or WRONG:", did, job, rows, jrow)
    n_jobs = db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
    n_tips = db.execute("SELECT COUNT(DISTINCT tip_key) FROM jobs").fetchone()[0]
    print("deliveries acknowledged: %d of %d, stops: %d (%d SIGKILL, the rest SIGTERM), "
          "sends cut by a stop: %d (of which "
          "committed but unanswered: %d), lost or wrong: %d, jobs: %d (distinct tips %d)"
          % (len(acked), total, kills, kills - kills // 5, stats["interrupted"],
             stats["committed_unacked"], bad, n_jobs, n_tips))
    ok = bad == 0 and len(acked) == total and n_jobs == n_tips == total
    return 0 if ok else 1


if __name__ == "__main__":
    a = sys.argv
    sys.exit(main(a[1], int(a[2]) if len(a) > 2 else 300, int(a[3]) if len(a) > 3 else 25,
                  int(a[4]) if len(a) > 4 else 1))
