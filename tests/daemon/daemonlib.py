"""Helpers for the daemon's integration tests: a state directory with a configuration and a
webhook secret, the real `spyre-ci serve` started on 127.0.0.1 with a free port, signed
deliveries, and a clean stop (SIGTERM must exit 0)."""
import hashlib
import hmac
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

SECRET = b"It's a Secret to Everybody"
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                        "github-webhooks")


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


_outcome = {"failed": False}


def _note_exit():
    """Records whether the test failed (a non-zero sys.exit, an uncaught exception), for
    scratch()'s cleanup at exit."""
    real_exit, real_hook = sys.exit, sys.excepthook

    def exit_(code=0):
        _outcome["failed"] |= code not in (0, None)
        real_exit(code)

    def hook(*a):
        _outcome["failed"] = True
        real_hook(*a)

    sys.exit, sys.excepthook = exit_, hook


_note_exit()


def scratch(prefix):
    """A temporary directory removed when the test's process exits, unless the test failed or
    SPYRE_CI_KEEP_TMP is set: then it is kept, and its path printed, with the daemon's log and
    state for a post-mortem."""
    import atexit
    import shutil
    d = tempfile.mkdtemp(prefix=prefix)

    def done():
        if _outcome["failed"] or os.environ.get("SPYRE_CI_KEEP_TMP"):
            print("kept " + d)
        else:
            shutil.rmtree(d, True)

    atexit.register(done)
    return d


def sign(body, secret=SECRET):
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


class Daemon:
    def __init__(self, binary, extra="", workdir=None, port=None):
        self.binary = binary
        self.dir = workdir or scratch("spyre-ci-daemon-")
        self.port = port or free_port()
        self.secret_path = os.path.join(self.dir, "secret")
        with open(self.secret_path, "wb") as f:
            f.write(SECRET + b"\n")
        self.config = os.path.join(self.dir, "config.yaml")
        self.write_config(extra)
        self.proc = None
        self.log = os.path.join(self.dir, "daemon.log")

    def write_config(self, extra):
        with open(self.config, "w") as f:
            f.write("listen: 127.0.0.1:%d\nstate_dir: %s/state\n" % (self.port, self.dir))
            f.write("webhook:\n  secret_file: %s\n" % self.secret_path)
            f.write(extra)

    def start(self):
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen([self.binary, "serve", "--config", self.config],
                                     stdout=logf, stderr=logf)
        for _ in range(500):
            if self.proc.poll() is not None:
                raise AssertionError("daemon exited %d: %s" % (self.proc.returncode,
                                                               open(self.log).read()))
            try:
                if self.get("/healthz")[0] == 200:
                    return self
            except OSError:
                time.sleep(0.02)
        raise AssertionError("daemon did not answer /healthz")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=60)
        assert rc == 0, "SIGTERM: exit %d\n%s" % (rc, open(self.log).read())

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def get(self, path):
        st, data = self.request("GET", path)
        return st, (json.loads(data) if data[:1] == b"{" else data.decode())

    def deliver(self, event, delivery, body, signature=True, content_type="application/json"):
        headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
                   "Content-Type": content_type}
        if signature is True:
            headers["X-Hub-Signature-256"] = sign(body)
        elif signature:
            headers["X-Hub-Signature-256"] = signature
        st, data = self.request("POST", "/github/webhook", body, headers)
        return st, json.loads(data) if data else None

    def jobs(self):
        out, before = [], ""
        while True:
            st, page = self.get("/api/jobs?limit=100" + before)
            assert st == 200, page
            out += page["jobs"]
            if "next_before" not in page:
                return out
            before = "&before=%d" % page["next_before"]


def dispatch(client_payload, repo="torch-spyre/torch-spyre"):
    return json.dumps({"action": client_payload.get("event_type", "x"),
                       "client_payload": client_payload,
                       "repository": {"full_name": repo}}).encode()


class Receiver:
    """A dashboard receiver on loopback (CRCR's callback endpoint as far as spyre-ci can tell):
    records every POST with its Idempotency-Key and answers 200, or "already recorded" for a key
    it has. stop() takes it down (connections refused), start() brings it back on the same
    port."""

    def __init__(self, port=None):
        import threading
        self.port = port or free_port()
        self.lock = threading.Lock()
        self.posts = []    # (key, body dict) in arrival order, repeats included
        self.keys = {}     # key -> body dict, the first arrival
        self.server = None

    def start(self):
        import http.server
        import threading
        rec = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(n))
                key = self.headers.get("Idempotency-Key", "")
                with rec.lock:
                    rec.posts.append((key, body))
                    again = key in rec.keys
                    rec.keys.setdefault(key, body)
                out = b'{"status":"already recorded"}' if again else b'{"ok":true}'
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:
                    pass  # the sender was killed mid-post: it sends again

            def log_message(self, *a):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def url(self):
        return "http://127.0.0.1:%d/github/callback" % self.port

    def by_status(self, status):
        """The first arrival of every key whose body has workflow.status == status."""
        with self.lock:
            return {k: b for k, b in self.keys.items() if b["workflow"]["status"] == status}


def dashboard_config(d, receiver, retry_max_s=1):
    tok = os.path.join(d.dir, "crcr-token")
    with open(tok, "w") as f:
        f.write("t0ken\n")
    return ("dashboard:\n  crcr_url: %s\n  crcr_token_file: %s\n  retry_max_s: %d\n"
            % (receiver.url(), tok, retry_max_s))
