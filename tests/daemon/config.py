"""`spyre-ci serve --config FILE [--check-config]` and SIGHUP: a valid file passes, each kind
of bad file is refused with file:line:col, and a reload changes what is reloadable and keeps
what is not; a second daemon on a state directory in use is refused. Usage: config.py
SPYRE_CI."""
import json
import os
import signal
import subprocess
import sys
import time

from daemonlib import Daemon, free_port, scratch

failures = []


def check(what, cond, detail=""):
    print("ok  " if cond else "FAIL", what, "" if cond else detail)
    if not cond:
        failures.append(what)


def check_config(binary, text, secret=True):
    d = scratch("spyre-ci-config-")
    path = os.path.join(d, "c.yaml")
    if secret:
        with open(os.path.join(d, "secret"), "w") as f:
            f.write("s3cret\n")
        line = "  secret_file: %s/secret\n" % d
        text = text.replace("webhook:\n", "webhook:\n" + line) if "webhook:\n" in text \
            else "webhook:\n" + line + text
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([binary, "serve", "--config", path, "--check-config"],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


BAD = [
    ("unknown key", "upstream:\n  bogus: 1\n", ":4:3: upstream.bogus: unknown key"),
    ("unknown top key", "listn: 1\n", ":3:1: listn: unknown key"),
    ("integer out of range", "upstream:\n  poll_interval_s: 90000\n",
     ":4:20: upstream.poll_interval_s: expected an integer in [0, 86400]"),
    ("not an integer", "workers:\n  count: two\n", ":4:10: workers.count: expected an integer"),
    ("bad listen", "listen: localhost:80\n", ":3:9: listen: \"localhost\" is not an IPv4"),
    ("bad bool", "webhook:\n  refs:\n    tags: yes\n", ":4:11: webhook.refs.tags: expected true or false"),
    ("list expected", "upstream:\n  branches: main\n", ":4:13: upstream.branches: expected a list"),
    ("duplicate key", "state_dir: a\nstate_dir: b\n", ":4:1: state_dir: duplicate key"),
    ("anchor", "state_dir: &a x\n", ":3:12: anchors and tags are not allowed"),
    ("section is scalar", "upstream: 3\n", ":3:11: upstream: expected a mapping"),
    ("bad yaml", "upstream: [\n", "c.yaml:"),
    ("ciflow without tags", "webhook:\n  refs:\n    ciflow: true\n", "needs webhook.refs.tags"),
    ("string expected", "log_level: [x]\n", ":3:12: log_level: string"),
    ("bad bytes", "executor:\n  memory_max: lots\n", ":4:15: executor.memory_max"),
]


def reference_matches(binary):
    """docs/configuration.md carries the table the loader uses, row for row."""
    doc = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "configuration.md")).read()
    out = subprocess.run([binary, "serve", "--config-reference"], capture_output=True,
                         text=True).stdout
    missing = [l for l in out.splitlines() if l not in doc]
    check("docs/configuration.md matches --config-reference", out and not missing,
          "\n".join(missing))


def main(binary):
    reference_matches(binary)
    rc, out = check_config(binary, "listen: 127.0.0.1:9\nupstream:\n  branches: [main, v2]\n")
    check("valid file", rc == 0 and out.endswith("ok\n"), out)
    for name, text, want in BAD:
        rc, out = check_config(binary, text)
        check("refused: " + name, rc == 2 and want in out, "rc=%d %s" % (rc, out))
    rc, out = check_config(binary, "state_dir: x\n", secret=False)
    check("missing secret file", rc == 2 and "webhook.secret_file" in out, out)

    # SIGHUP: branches reload (a push to the new branch is accepted), listen does not.
    base = "upstream:\n  repo: o/r\n  branches: [main]\n  poll_interval_s: 0\n" \
           "workers:\n  count: 0\n"
    d = Daemon(binary, base).start()
    try:
        push = json.dumps({"ref": "refs/heads/dev", "after": "4" * 40,
                           "repository": {"full_name": "o/r"}}).encode()
        st, b = d.deliver("push", "r-1", push)
        check("dev not watched before reload", st == 200 and b.get("ignored"), str(b))
        port = d.port
        d.port = port + 1 if port < 65000 else port - 1
        d.write_config(base.replace("[main]", "[main, dev]"))
        d.port = port
        d.proc.send_signal(signal.SIGHUP)
        for _ in range(200):
            st, b = d.deliver("push", "r-%d" % _, push)
            if st == 202:
                break
            time.sleep(0.02)
        check("dev watched after reload", st == 202, str(b))
        log = open(d.log).read()
        check("listen kept, needs a restart", "config key listen changed" in log, log)
        with open(d.config, "a") as f:
            f.write("bogus: 1\n")
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        check("bad reload refused, daemon alive", d.get("/healthz")[0] == 200 and
              "reload refused" in open(d.log).read())

        # A second daemon on the same state directory (another port) is refused, naming the
        # first one's pid; the first keeps serving.
        second = os.path.join(d.dir, "second.yaml")
        with open(d.config) as f:
            text = f.read().replace("127.0.0.1:%d" % d.port, "127.0.0.1:%d" % free_port())
        with open(second, "w") as f:
            f.write(text.replace("bogus: 1\n", ""))
        p = subprocess.run([binary, "serve", "--config", second], capture_output=True,
                           text=True, timeout=60)
        want = "is in use by another spyre-ci (pid %d)" % d.proc.pid
        check("second daemon on the state directory refused", p.returncode != 0 and
              want in p.stderr, "rc=%d %s" % (p.returncode, p.stderr))
        check("first daemon still serving", d.get("/healthz")[0] == 200)
    finally:
        d.stop()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
