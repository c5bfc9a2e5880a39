"""The built-in dashboard's receiver (POST /api/crcr/results) and its pages, end to end: the
real binary, the HUD envelope goldens of tests/fixtures/dashboard/ (what the dashboard client
sends), and hostile bodies: a wrong or missing token, malformed JSON, a missing field, an
oversized body, script in a test id. Each must get its documented answer; what is accepted must
show on the pages, escaped. Usage: receiver.py SPYRE_CI."""
import http.client
import json
import os
import socket
import sys

from daemonlib import Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
DASH = os.path.join(HERE, "..", "fixtures", "dashboard")
TOKEN = "hud-token-for-tests"
HEAD = "0123456789abcdef0123456789abcdef01234567"
failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append("%s: %s" % (what, detail))
        print("FAIL", what, detail)
    else:
        print("ok  ", what)


def golden(name):
    with open(os.path.join(DASH, name), "rb") as f:
        return f.read()


def post(d, body, token=TOKEN, key=None, ctype="application/json"):
    h = {"Content-Type": ctype}
    if token is not None:
        h["x-hud-internal-bot"] = token
    if key:
        h["Idempotency-Key"] = key
    st, data = d.request("POST", "/api/crcr/results", body, h)
    try:
        return st, json.loads(data)
    except ValueError:
        return st, data


def expect(what, got, status, contains=None):
    st, body = got
    ok = st == status and (contains is None or contains in json.dumps(body))
    check(what, ok, "got %s %s, want %s %s" % (st, body, status, contains or ""))


def hostile_envelope():
    env = json.loads(golden("hud-completed.json"))
    wf = env["untrusted"]["callback_payload"]["workflow"]
    wf["job_name"] = "<script>alert('job')</script>"
    wf["check_run_id"] = "50002"
    tests = json.loads(wf["failed_tests_json"])
    tests[0]["name"] = "test_x_<img src=x onerror=alert(1)>"
    tests[0]["message"] = "</td></table><script>alert('msg')</script>"
    wf["failed_tests_json"] = json.dumps(tests)
    return json.dumps(env).encode()


def announced_oversize(port):
    """Announces a body one byte past 2 MB and sends the start of it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /api/crcr/results HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
              b"\r\nx-hud-internal-bot: " + TOKEN.encode() +
              b"\r\nContent-Length: %d\r\n\r\n" % (2 * 1024 * 1024 + 1) + b"{" * 1024)
    head = s.recv(64)
    s.close()
    return int(head.split()[1]) if head.startswith(b"HTTP/1.1") else -1


def chunked_oversize(d):
    """A body past 2 MB with no Content-Length: read up to the cap, then refused."""
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    chunks = (b"x" * 65536 for _ in range(40))
    c.request("POST", "/api/crcr/results", body=chunks, encode_chunked=True,
              headers={"Content-Type": "application/json", "x-hud-internal-bot": TOKEN,
                       "Transfer-Encoding": "chunked"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data)


def answers(d):
    expect("in_progress golden accepted", post(d, golden("hud-in_progress.json")), 202)
    expect("completed golden accepted", post(d, golden("hud-completed.json")), 202)
    expect("completed again: already recorded", post(d, golden("hud-completed.json")), 200,
           "already recorded")
    expect("a body with its own Idempotency-Key accepted",
           post(d, golden("hud-in_progress.json").replace(b"50001", b"59999"),
                key="sci1-k1"), 202)
    expect("a repeat of that key", post(d, golden("hud-completed.json").replace(
        b"50001", b"59998"), key="sci1-k1"), 200, "already recorded")
    expect("wrong token", post(d, golden("hud-completed.json"), token="nope"), 401)
    expect("token with a right prefix", post(d, golden("hud-completed.json"),
                                             token=TOKEN + "x"), 401)
    expect("missing token", post(d, golden("hud-completed.json"), token=None), 401)
    expect("malformed JSON", post(d, b'{"trusted": {'), 400, "malformed JSON")
    expect("not an object", post(d, b'[1, 2]'), 400, "not an object")
    env = json.loads(golden("hud-completed.json"))
    del env["untrusted"]["callback_payload"]["workflow"]["job_name"]
    expect("job_name missing", post(d, json.dumps(env).encode()), 400, "job_name")
    env = json.loads(golden("hud-completed.json"))
    env["untrusted"]["callback_payload"]["workflow"]["status"] = "exploded"
    expect("bad status", post(d, json.dumps(env).encode()), 400, "status")
    env = json.loads(golden("hud-completed.json"))
    env["untrusted"]["callback_payload"]["workflow"]["failed_tests_json"] = "{nope"
    expect("failed_tests_json not JSON", post(d, json.dumps(env).encode()), 400,
           "failed_tests_json")
    check("oversized body announced: 413 before it is read", announced_oversize(d.port) == 413)
    expect("oversized body sent in chunks (no length): 413", chunked_oversize(d), 413)
    expect("wrong content type", post(d, golden("hud-completed.json"), ctype="text/plain"), 415)
    st, _ = d.request("GET", "/api/crcr/results")
    check("GET is 405", st == 405, st)
    expect("script in a test id accepted", post(d, hostile_envelope()), 202)


def pages(d, job):
    st, html = d.get("/jobs/%d" % job)
    check("job page", st == 200 and ("Job #%d" % job) in html, st)
    check("job page: the failing test's message",
          "Mismatched elements: 3 / 1024 (0.3%) — max abs diff 0.0625" in html)
    check("job page: no raw script", "<script" not in html and "<img" not in html)
    check("job page: the hostile texts shown escaped",
          "&lt;script&gt;alert(&#39;job&#39;)&lt;/script&gt;" in html and
          "test_x_&lt;img src=x onerror=alert(1)&gt;" in html and
          "&lt;/td&gt;&lt;/table&gt;&lt;script&gt;" in html)
    st, v = d.get("/api/dashboard/jobs/%d" % job)
    check("job JSON twin", st == 200 and v["id"] == job and len(v["reports"]) == 4, v)
    check("the JSON keeps what was sent",
          any(r["job_name"] == "<script>alert('job')</script>" for r in v["reports"]))
    st, html = d.get("/")
    check("index lists the job", st == 200 and ("/jobs/%d" % job) in html, st)
    check("index: the report's counts", "<td class=\"num\">4</td>" in html)
    st, v = d.get("/api/dashboard")
    check("index JSON twin", st == 200 and v["jobs"][0]["id"] == job and
          v["jobs"][0]["report"]["failed"] == 4, v)
    st, html = d.get("/trends")
    check("trends page with its charts", st == 200 and "<svg" in html and "Pass rate" in html)
    st, v = d.get("/api/dashboard/trends")
    check("trends JSON: the pass rate from the report",
          st == 200 and abs(v["jobs"][-1]["pass_rate"] - 2 / 6) < 1e-9, v)
    st, html = d.get("/specs")
    check("specs page", st == 200 and "Spec drift" in html, st)
    st, v = d.get("/api/dashboard/specs")
    check("specs JSON twin", st == 200 and "unlisted" in v, v)
    st, _ = d.get("/jobs/999999")
    check("no such job: 404", st == 404, st)
    st, _ = d.get("/jobs/1x")
    check("a bad job id: 404", st == 404, st)


def real_sender(d, binary, tok, job_id):
    """The dashboard client's own sender (`spyre-ci report --format hud`) against the receiver:
    what the daemon's outbox will do."""
    import shutil
    import subprocess
    res = os.path.join(d.dir, "results")
    os.makedirs(res, exist_ok=True)
    job = json.load(open(os.path.join(DASH, "job-pr.json")))
    job["workflow"]["check_run_id"] = "report-1"
    with open(os.path.join(res, "job.json"), "w") as f:
        json.dump(job, f)
    shutil.copy(os.path.join(DASH, "results.jsonl"), res)
    url = "http://127.0.0.1:%d/api/crcr/results" % d.port
    for what, extra in (("spyre-ci report --format hud delivers to the receiver", []),
                        ("a repost is answered already recorded, counted delivered",
                         ["--repost"])):
        r = subprocess.run([binary, "report", "--to", url, "--results", res, "--token-file",
                            tok, "--format", "hud", "--json"] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        check(what, r.returncode == 0, r.stdout.decode()[-2000:])
    st, v = d.get("/api/dashboard/jobs/%d" % job_id)
    mine = [m for m in v.get("reports", []) if m["record"].endswith("/report-1")]
    check("the sender's two messages are stored once each",
          sorted(m["status"] for m in mine) == ["completed", "in_progress"], mine)


def main(binary):
    extra = ("upstream:\n  repo: pytorch/pytorch\n  branches: [main]\n  poll_interval_s: 0\n"
             "workers:\n  count: 0\n")
    d = Daemon(binary, extra)
    tok = os.path.join(d.dir, "hud-token")
    with open(tok, "w") as f:
        f.write(TOKEN + "\n")
    off = Daemon(binary, extra).start()
    try:
        expect("receiver off without a token file", post(off, golden("hud-completed.json")),
               404, "receiver_token_file")
    finally:
        off.stop()
    d.write_config(extra + "dashboard:\n  receiver_token_file: %s\n" % tok)
    d.start()
    try:
        push = json.dumps({"ref": "refs/heads/main", "before": "89abcdef" * 5, "after": HEAD,
                           "repository": {"full_name": "pytorch/pytorch"}}).encode()
        st, body = d.deliver("push", "r-1", push)
        check("a job for the golden's commit", st == 202, body)
        job = body["job_id"]
        answers(d)
        pages(d, job)
        real_sender(d, binary, tok, job)
        d.stop()
        d.start()
        expect("after a restart: still already recorded",
               post(d, golden("hud-completed.json")), 200, "already recorded")
    finally:
        d.stop()
    if failures:
        print("%d failures" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
