"""The dashboard in a real browser: Debian's headless Chromium loads /, a job page with a
failure, /trends and /specs from a running daemon (a generated upstream polled by the real
worker, a HUD envelope with failures and hostile names posted to its receiver), checks the text
a user must see, checks from Chromium's own network log that no request left loopback, and
saves screenshots (desktop and phone widths) into OUT_DIR. Skipped (exit 77, with the reason)
only when no chromium binary is installed. Usage: browser.py SPYRE_CI OUT_DIR."""
import glob
import json
import os
import shutil
import subprocess
import sys
import time

from daemonlib import Daemon, scratch

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "fixtures", "dashboard", "hud-completed.json")
TOKEN = "browser-test-token"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--no-pings", "--dns-prefetch-disable",
         "--disable-domain-reliability", "--disable-client-side-phishing-detection",
         "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
         # Chromium's own background requests (sign-in, updates) must not leave either: every
         # name but loopback resolves to nothing, so no DNS query is even sent
         "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]
LOOPBACK = ("127.", "[::1]")
failures = []


def check(what, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else " " + str(detail)[:2000]))
    if not cond:
        failures.append(what)


def chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def browse(exe, url, out, netlog, size="1280,1000", dump=True):
    """Runs Chromium once on `url` with a new empty profile: the DOM as text (or a screenshot
    into `out`), and its network log in `netlog`."""
    args = [exe] + FLAGS + ["--user-data-dir=" + scratch("chromium-"),
                            "--window-size=" + size, "--log-net-log=" + netlog]
    args += ["--dump-dom"] if dump else ["--screenshot=" + out]
    r = subprocess.run(args + [url], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       timeout=120)
    return r.stdout.decode("utf-8", "replace")


def hosts_in(netlog):
    """The remote addresses Chromium opened a TCP connection to or sent a UDP datagram to (a
    DNS query included), from its network log: where anything could have gone. A UDP socket
    that was connected but sent nothing (Chromium's probe of the default route) is not
    traffic."""
    try:
        text = open(netlog).read()
    except OSError:
        return {"(no network log)"}
    text = text.rstrip()
    if not text.endswith("}"):  # a log cut short: close its event list
        text = text.rstrip(",") + "]}"
    log = json.loads(text)
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    out, udp, sent = set(), {}, set()
    for ev in log.get("events", []):
        kind = names.get(ev.get("type"), "")
        src = ev.get("source", {}).get("id")
        addr = ev.get("params", {}).get("address")
        if addr and kind in ("TCP_CONNECT", "TCP_CONNECT_ATTEMPT"):
            out.add(addr)
        elif addr and kind == "UDP_CONNECT":
            udp[src] = addr
        elif kind == "UDP_BYTES_SENT":
            sent.add(src)
    return out | {a for s, a in udp.items() if s in sent}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout.decode().strip()


def wait_job(d, pred, what, timeout=90):
    end = time.time() + timeout
    while time.time() < end:
        jobs = d.jobs()
        hit = [j for j in jobs if pred(j)]
        if hit:
            return hit[0]
        time.sleep(0.2)
    raise AssertionError("%s: %s" % (what, json.dumps(d.jobs())))


def a_scheduling_job(d, up):
    """Reverts body edits of the generated history until one schedules tests."""
    subjects = git(up, "log", "--no-merges", "--format=%H %s", "-60").splitlines()
    edits = [s.split()[0] for s in subjects if s.split()[1] in ("src_body:", "native_yaml:")]
    for c in edits[:8]:
        if subprocess.run(["git", "-C", up, "revert", "--no-edit", c],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            git(up, "revert", "--abort")
            continue
        head = git(up, "rev-parse", "HEAD")
        j = wait_job(d, lambda j: j["head"] == head and j["state"] != "queued" and
                     j["state"] != "running", "revert of %s selected" % c)
        st, v = d.get("/api/dashboard/jobs/%d" % j["id"])
        if v.get("funnel") and v["funnel"]["scheduled"] > 0:
            return j
    raise AssertionError("no revert scheduled a test")


def envelope(head):
    env = json.load(open(GOLDEN))
    cb = env["untrusted"]["callback_payload"]
    cb["payload"]["pull_request"]["head"]["sha"] = head
    wf = cb["workflow"]
    wf["check_run_id"] = "browser-1"
    tests = json.loads(wf["failed_tests_json"])
    tests.append({"name": "test_<script>document.title='owned'</script>", "classname": "X",
                  "file": "test/x.py", "outcome": "failed", "message": "<b>bold?</b>",
                  "stacktrace": None})
    wf["failed_tests_json"] = json.dumps(tests)
    return json.dumps(env).encode()


def pages(exe, d, job, out):
    base = "http://127.0.0.1:%d" % d.port
    want = {
        "/": ["#%d" % job["id"], job["head"][:10], "changed files", "scheduled", "awaiting"],
        "/jobs/%d" % job["id"]: ["Job #%d" % job["id"], "Mismatched elements: 3 / 1024",
                                 "test_softmax_spyre_float16", "Funnel", "passed 2, failed 4",
                                 "Scheduled tests", "changed files", "junit.xml",
                                 "results.jsonl"],
        "/trends": ["Pass rate", "Selection size (share of all tests)", "Queue time (s)",
                    "Run time (s)", "<svg"],
        "/specs": ["Spec drift", "New upstream tests under an unlisted mode",
                   "Spec entries that match no test any more", "Unsupported ops by count"],
    }
    hosts = set()
    for path, texts in want.items():
        name = "dashboard" + (path.replace("/", "-") if path != "/" else "-index")
        netlog = os.path.join(out, name + ".netlog.json")
        dom = browse(exe, base + path, None, netlog)
        hosts |= hosts_in(netlog)
        missing = [t for t in texts if t not in dom]
        check("%s shows %s" % (path, texts), not missing, "missing %s" % missing)
        check("%s: no script ran, none was injected" % path,
              "<script" not in dom and "owned" not in dom.split("<title>")[1].split("<")[0]
              if "<title>" in dom else False)
        check("%s: no external asset" % path,
              not any(s in dom for s in ('src="http', "href=\"http", "@import", "url(")))
        browse(exe, base + path, os.path.join(out, name + ".png"), netlog, dump=False)
        hosts |= hosts_in(netlog)
        browse(exe, base + path, os.path.join(out, name + "-phone.png"), netlog,
               size="390,844", dump=False)
        hosts |= hosts_in(netlog)
    dom = browse(exe, base + "/jobs/%d" % job["id"], None, os.path.join(out, "x.netlog"))
    check("the hostile test name is shown as text",
          "test_&lt;script&gt;document.title=&#39;owned&#39;&lt;/script&gt;" in dom or
          "test_&lt;script&gt;document.title='owned'&lt;/script&gt;" in dom)
    away = sorted(a for a in hosts if not a.startswith(LOOPBACK))
    check("no request left loopback (%d loopback addresses in Chromium's network log)"
          % len(hosts), hosts and not away, away or "no connection logged")
    shots = glob.glob(os.path.join(out, "*.png"))
    check("screenshots saved (%d in %s)" % (len(shots), out),
          len(shots) == 8 and all(os.path.getsize(s) > 1000 for s in shots))


def main(binary, out):
    exe = chromium()
    if not exe:
        print("SKIP: no chromium binary (scripts/lib.sh installs Debian's chromium; "
              "apt could not here)")
        return 77
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "dashboard-*")):
        os.remove(old)
    d = Daemon(binary, "")
    up = os.path.join(d.dir, "upstream")
    subprocess.run([binary, "fixture", "upstream", "--out", up, "--seed", "1", "--commits",
                    "30", "--shapes", "all"], check=True, stdout=subprocess.DEVNULL)
    git(up, "config", "user.email", "browser@spyre-ci.invalid")
    git(up, "config", "user.name", "Browser Test")
    tok = os.path.join(d.dir, "token")
    with open(tok, "w") as f:
        f.write(TOKEN)
    d.write_config("upstream:\n  repo: o/r\n  url: %s\n  branches: [main]\n"
                   "  poll_interval_s: 1\nworkers:\n  count: 1\nspecs: [%s/spyre/specs]\n"
                   "dashboard:\n  receiver_token_file: %s\n" % (up, up, tok))
    d.start()
    try:
        wait_job(d, lambda j: j["state"] not in ("queued", "running"), "the first tip done")
        job = a_scheduling_job(d, up)
        st, _ = d.request("POST", "/api/crcr/results", envelope(job["head"]),
                          {"Content-Type": "application/json", "x-hud-internal-bot": TOKEN})
        check("the report reached the receiver", st == 202, st)
        pages(exe, d, job, out)
    finally:
        d.stop()
    if failures:
        print("%d failures" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
