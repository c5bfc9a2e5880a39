"""`spyre-ci demo --once` end to end, then the failure it stages, seen on the dashboard.

Runs the demo in a new state directory: it must exit 0 once the first job's `completed` report
reached the dashboard, after showing the delivery and the funnel. Then `spyre-ci serve` on the
demo's own configuration finishes the second job (the commit that breaks a kernel case on
purpose), and its page must show the failing softmax case with its error. A second demo run on
the same directory must reuse it.
Usage: demo.py SPYRE_CI."""
import json
import os
import re
import subprocess
import sys
import time

from daemonlib import Daemon, scratch

failures = []


def check(what, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else " " + str(detail)[-3000:]))
    if not cond:
        failures.append(what)


def demo(binary, state):
    t0 = time.time()
    r = subprocess.run([binary, "demo", "--state", state, "--once", "--timeout", "100"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    out = r.stdout.decode() + r.stderr.decode()
    print(out)
    print("demo --once: exit %d in %.1f s" % (r.returncode, time.time() - t0))
    return r.returncode, out


def broken_job_page(binary, state, out):
    """Serves the demo's configuration until the breaking commit's job reported, then reads its
    page."""
    heads = re.findall(r"committed ([0-9a-f]{10}) on main", out)
    cfg = os.path.join(state, "config.yaml")
    port = int(re.search(r"listen: 127\.0\.0\.1:(\d+)", open(cfg).read()).group(1))
    d = Daemon(binary, port=port)
    d.config = cfg
    d.start()
    try:
        end, job = time.time() + 120, None
        while time.time() < end:
            jobs = [j for j in d.jobs() if j["head"].startswith(heads[-1])]
            if jobs:
                st, v = d.get("/api/dashboard/jobs/%d" % jobs[0]["id"])
                if any(m["status"] == "completed" for m in v.get("reports") or []):
                    job = v
                    break
            time.sleep(0.5)
        check("the breaking commit's job reported to the dashboard", job is not None)
        if job:
            st, html = d.get("/jobs/%d" % job["id"])
            check("its page shows the failing softmax case and its error",
                  "softmax" in html and "beyond atol 0 + rtol 0" in html, html[:3000])
            check("its report counts the failure",
                  any(m["status"] == "completed" and m["failed"] >= 1 for m in job["reports"]))
    finally:
        d.stop()


def main(binary):
    state = scratch("spyre-ci-demo-")
    rc, out = demo(binary, state)
    check("demo --once exits 0", rc == 0, out)
    check("it generated the sample upstream", "generated a sample upstream" in out)
    check("it showed the delivery and the funnel",
          "delivered by the poller" in out and
          re.search(r"funnel: [1-9]\d* changed files? -> \d+ impacted -> \d+ eligible -> "
                    r"\d+ scheduled", out), out)
    check("the completed report reached the dashboard",
          "the dashboard received `completed`" in out and "done in" in out)
    if rc == 0:
        broken_job_page(binary, state, out)
    rc2, out2 = demo(binary, state)
    check("a second run reuses the state directory",
          rc2 == 0 and "reusing the sample upstream" in out2, out2)
    if failures:
        print("%d failures" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
