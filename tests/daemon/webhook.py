"""The webhook intake end to end: the real binary, the real GitHub and CRCR payloads of
tests/fixtures/github-webhooks/, and the hostile deliveries; each must get the documented
answer and make exactly the jobs it should. Usage: webhook.py SPYRE_CI."""
import json
import socket
import sys

from daemonlib import Daemon, dispatch, fixture, sign

failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append("%s: %s" % (what, detail))
        print("FAIL", what, detail)
    else:
        print("ok  ", what)


def expect(what, got, status, **fields):
    st, body = got
    ok = st == status and all(body is not None and body.get(k) == v for k, v in fields.items())
    check(what, ok, "got %s %s, want %s %s" % (st, body, status, fields))
    return body


def github_payloads(binary):
    """octokit's payloads, with upstream set to their repository."""
    d = Daemon(binary, "upstream:\n  repo: Codertocat/Hello-World\n  branches: [master]\n"
               "  poll_interval_s: 0\nworkers:\n  count: 0\n").start()
    try:
        b = expect("push to a watched branch", d.deliver("push", "g-1",
                   fixture("octokit-push-new-branch.json")), 202)
        push_job = b and b.get("job_id")
        expect("push deleting a tag", d.deliver("push", "g-2", fixture("octokit-push.json")),
               200, ignored=True, reason="deleted ref refs/tags/simple-tag")
        b = expect("pull_request opened", d.deliver("pull_request", "g-3",
                   fixture("octokit-pull_request-opened.json")), 202)
        pr_job = b and b.get("job_id")
        # synchronize with the same head sha (as in these fixtures): the same tip, no new job
        expect("pull_request synchronize, same head", d.deliver("pull_request", "g-4",
               fixture("octokit-pull_request-synchronize.json")), 202, job_id=pr_job)
        expect("ping", d.deliver("ping", "g-5", fixture("octokit-ping.json")), 200, ok=True)
        expect("repository_dispatch without a CRCR payload",
               d.deliver("repository_dispatch", "g-6", fixture("octokit-repository_dispatch.json")),
               200, ignored=True)
        jobs = d.jobs()
        check("two jobs made", len(jobs) == 2 and {j["id"] for j in jobs} == {push_job, pr_job},
              str(jobs))
        byid = {j["id"]: j for j in jobs}
        check("push job range", byid.get(push_job, {}).get("head") ==
              "6113728f27ae82c7b1a177c8d03f9e96e0adf246" and byid[push_job]["base"] is None,
              str(byid.get(push_job)))
        check("pr job range", byid.get(pr_job, {}).get("base") ==
              "f95f852bd8fca8fcc58a9a2d6c842781e32a215e" and byid[pr_job].get("pr_number") == 2,
              str(byid.get(pr_job)))
        st, one = d.get("/api/jobs/%s" % pr_job)
        check("GET /api/jobs/{id}", st == 200 and one["id"] == pr_job, str(one))
        check("GET /api/jobs/999 is 404", d.get("/api/jobs/999")[0] == 404)
    finally:
        d.stop()


def crcr_payloads(binary):
    """CRCR's dispatches around upstream pytorch/pytorch events, and the hostile deliveries."""
    d = Daemon(binary, "upstream:\n  repo: pytorch/pytorch\n  branches: [main]\n"
               "  poll_interval_s: 0\nworkers:\n  count: 0\n").start()
    try:
        cp = {n: json.loads(fixture(n + ".json")) for n in
              ["pull_request_opened", "pull_request_synchronize", "pull_request_closed",
               "push_ciflow_tag", "push_tag_deleted"]}
        b = expect("dispatch: pull_request opened",
                   d.deliver("repository_dispatch", "c-1", dispatch(cp["pull_request_opened"])), 202)
        opened = b and b.get("job_id")
        b = expect("dispatch: pull_request synchronize",
                   d.deliver("repository_dispatch", "c-2", dispatch(cp["pull_request_synchronize"])),
                   202)
        synced = b and b.get("job_id")
        check("synchronize is a new job", opened and synced and opened != synced)
        expect("dispatch: pull_request closed",
               d.deliver("repository_dispatch", "c-3", dispatch(cp["pull_request_closed"])), 200,
               ignored=True, reason="pull_request action closed makes no job")
        expect("dispatch: ciflow tag push",
               d.deliver("repository_dispatch", "c-4", dispatch(cp["push_ciflow_tag"])), 200,
               ignored=True, reason="ciflow tag refs/tags/ciflow/trunk/12345")
        expect("dispatch: deleted ref",
               d.deliver("repository_dispatch", "c-5", dispatch(cp["push_tag_deleted"])), 200,
               ignored=True, reason="deleted ref refs/tags/ciflow/trunk/189663")
        # CRCR dispatches a redelivered webhook twice: a new outer id, the same delivery_id
        expect("dispatch twice (same upstream delivery_id)",
               d.deliver("repository_dispatch", "c-6", dispatch(cp["pull_request_opened"])), 200,
               job_id=opened, duplicate=True)
        # the upstream webhook itself, its GUID the dispatch's delivery_id
        expect("upstream delivery seen through CRCR",
               d.deliver("pull_request", "test-delivery-pr-opened-001",
                         json.dumps(cp["pull_request_opened"]["payload"]).encode()),
               200, job_id=opened, duplicate=True)

        push = json.dumps({"ref": "refs/heads/main", "before": "1" * 40, "after": "2" * 40,
                           "repository": {"full_name": "pytorch/pytorch"}}).encode()
        b = expect("push", d.deliver("push", "h-1", push), 202)
        pushed = b and b.get("job_id")
        expect("the same delivery twice", d.deliver("push", "h-1", push), 200, job_id=pushed,
               duplicate=True)
        expect("no signature", d.deliver("push", "h-2", push, signature=False), 400)
        expect("wrong signature", d.deliver("push", "h-3", push, signature=sign(b"other")), 401)
        expect("malformed signature", d.deliver("push", "h-4", push, signature="sha1=abc"), 400)
        expect("malformed JSON, valid signature", d.deliver("push", "h-5", b'{"ref": '), 400)
        expect("JSON that is not an object", d.deliver("push", "h-6", b'[1]'), 400)
        expect("wrong content type", d.deliver("push", "h-7", b"payload=%7B%7D",
               content_type="application/x-www-form-urlencoded"), 415)
        expect("unknown event", d.deliver("check_run", "h-8", b'{"action": "created"}'), 200,
               ignored=True, reason="event check_run is not handled")
        expect("another repository", d.deliver("push", "h-9",
               fixture("octokit-push-new-branch.json")), 200, ignored=True,
               reason="repository Codertocat/Hello-World is not pytorch/pytorch")
        other = json.dumps({"ref": "refs/heads/feature", "after": "3" * 40,
                            "repository": {"full_name": "pytorch/pytorch"}}).encode()
        expect("unwatched branch", d.deliver("push", "h-10", other), 200, ignored=True)
        check("oversized body is 413", oversized(d.port) == 413)
        jobs = d.jobs()
        check("exactly three jobs", sorted(j["id"] for j in jobs) == sorted([opened, synced,
              pushed]), str(jobs))
        st, metrics = d.get("/metrics")
        # c-1 and c-2 with their upstream ids, c-6 (its upstream id was seen), h-1
        check("metrics: deliveries stored", "spyre_ci_deliveries_stored 6\n" in metrics,
              [l for l in metrics.splitlines() if "stored" in l])
        # h-2 .. h-7 and the oversized body
        check("metrics: rejected pushes counted",
              'spyre_ci_deliveries_total{event="push",outcome="rejected"} 7' in metrics)
        check("readyz", d.get("/readyz")[0] == 200)
    finally:
        d.stop()


def oversized(port):
    """Announces a body one byte past 25 MB and sends the start of it: the answer must come
    before the body is read."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /github/webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"X-GitHub-Event: push\r\nX-GitHub-Delivery: big\r\n"
              b"X-Hub-Signature-256: sha256=" + b"0" * 64 + b"\r\n"
              b"Content-Length: %d\r\n\r\n" % (25 * 1024 * 1024 + 1) + b"{" * 1024)
    head = s.recv(64)
    s.close()
    return int(head.split()[1]) if head.startswith(b"HTTP/1.1") else -1


if __name__ == "__main__":
    github_payloads(sys.argv[1])
    crcr_payloads(sys.argv[1])
    print("%d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)
