#!/usr/bin/env python3
"""Checks message bodies against the wire contracts, field by field, as docs/contracts.md
states them. Written from that text alone (the encoder is C; this is Python's json module
and a table), so the two can disagree, and a disagreement fails the test.

Usage: schema_check.py --format crcr|hud [--self-test] FILE...
  Every FILE is one message body. With --self-test, each file must pass, and then a list of
  mutations of it (each breaking one rule) must each be refused: the check itself can fail.
"""
import copy
import json
import re
import sys

BODY_MAX = 2 * 1024 * 1024  # HUD: body at most 2 MB
FAILED_MAX, MESSAGE_MAX, TRACE_MAX = 1000, 1024, 4096  # failed_tests_json caps
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")
NUMERIC = re.compile(r"^[0-9]+$")

# docs/contracts.md: the callback's workflow object of schema version 1. For each field: its test,
# given the status. "strings, though numeric" for run_id and run_attempt.
def is_str(v):
    return isinstance(v, str) and v != ""

def workflow_rules(status):
    done = status == "completed"
    return {
        "schema_version": lambda v: v == "1",
        "status": lambda v: v in ("in_progress", "completed"),
        # null until completed; then "success" | "failure" | "cancelled" | "timed_out" | ...
        "conclusion": (lambda v: is_str(v)) if done else (lambda v: v is None),
        "name": is_str,
        "url": is_str,
        "run_id": lambda v: is_str(v) and NUMERIC.match(v) is not None,
        "run_attempt": lambda v: is_str(v) and NUMERIC.match(v) is not None,
        "job_name": is_str,      # HUD's record key needs it
        "check_run_id": is_str,  # HUD's record key needs it
        "started_at": lambda v: isinstance(v, str) and TIME.match(v) is not None,
        "completed_at": (lambda v: isinstance(v, str) and TIME.match(v) is not None)
        if done else (lambda v: v is None),
        "test_results": lambda v: isinstance(v, dict)
        and set(v) >= {"passed", "failed", "skipped"}
        and all(isinstance(v[k], int) and not isinstance(v[k], bool) and v[k] >= 0
                for k in ("passed", "failed", "skipped")),
        "artifact_url": is_str,
    }


def check_failed_tests(text, errors):
    """HUD's failed_tests_json column: a JSON array, at most 1000 entries, message <= 1 KB,
    stack trace <= 4 KB (bytes of UTF-8)."""
    if not isinstance(text, str):
        errors.append("failed_tests_json is not a string")
        return
    try:
        arr = json.loads(text)
    except ValueError as e:
        errors.append(f"failed_tests_json is not JSON: {e}")
        return
    if not isinstance(arr, list) or len(arr) > FAILED_MAX:
        errors.append("failed_tests_json is not an array of at most 1000 entries")
        return
    for i, e in enumerate(arr):
        if not isinstance(e, dict) or not is_str(e.get("name")):
            errors.append(f"failed_tests_json[{i}] has no name")
            continue
        for key, cap in (("message", MESSAGE_MAX), ("stacktrace", TRACE_MAX)):
            v = e.get(key)
            if v is not None and (not isinstance(v, str) or len(v.encode()) > cap):
                errors.append(f"failed_tests_json[{i}].{key} is over {cap} bytes")


def check_callback(cb, errors):
    """The CRCR callback: the body echoes the dispatch payload and adds workflow."""
    if not isinstance(cb, dict):
        errors.append("the callback is not an object")
        return
    for key in ("event_type", "delivery_id", "payload", "workflow"):
        if key not in cb:
            errors.append(f"missing {key}")
    if errors:
        return
    if not is_str(cb["event_type"]) or not is_str(cb["delivery_id"]):
        errors.append("event_type and delivery_id must be strings")
    if not isinstance(cb["payload"], dict):
        errors.append("payload must be an object")
    w = cb["workflow"]
    if not isinstance(w, dict):
        errors.append("workflow must be an object")
        return
    status = w.get("status")
    for key, ok in workflow_rules(status).items():
        if key not in w:
            errors.append(f"workflow.{key} is missing")
        elif not ok(w[key]):
            errors.append(f"workflow.{key} = {w[key]!r} breaks the contract ({status})")
    if "failed_tests_json" in w:
        if status != "completed":
            errors.append("failed_tests_json on a transition other than completed")
        check_failed_tests(w["failed_tests_json"], errors)
    # Periodic runs: event_type nightly|periodic, delivery_id = the upstream SHA, payload =
    # {"repository":{"full_name":"pytorch/pytorch"},"head_sha":"<sha>"}, only completed.
    if cb["event_type"] in ("nightly", "periodic"):
        p = cb["payload"]
        if status != "completed":
            errors.append(f"a {cb['event_type']} run sends only completed")
        if set(p) != {"repository", "head_sha"} or p.get("head_sha") != cb["delivery_id"] \
                or not is_str((p.get("repository") or {}).get("full_name")):
            errors.append("a periodic payload is {repository: {full_name}, head_sha = delivery_id}")
    elif cb["event_type"] not in ("pull_request", "push"):
        errors.append(f"event_type {cb['event_type']!r} is no upstream event")


def check_hud(env, errors):
    """The HUD envelope: {trusted: {verified_repo, downstream_repo_level, ci_metrics: {queue_time,
    execution_time}}, untrusted: {callback_payload: <callback>}}."""
    if not isinstance(env, dict) or set(env) != {"trusted", "untrusted"}:
        errors.append("the envelope has exactly trusted and untrusted")
        return
    t, u = env["trusted"], env["untrusted"]
    if not isinstance(t, dict) or not is_str(t.get("verified_repo")) \
            or "/" not in t.get("verified_repo", ""):
        errors.append("trusted.verified_repo must be owner/name")
    if not isinstance(t, dict) or t.get("downstream_repo_level") not in ("L1", "L2", "L3", "L4"):
        errors.append("trusted.downstream_repo_level must be L1..L4")
    m = t.get("ci_metrics") if isinstance(t, dict) else None
    if not isinstance(m, dict) or set(m) != {"queue_time", "execution_time"} or not all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
            for v in m.values()):
        errors.append("trusted.ci_metrics has queue_time and execution_time, numbers or null")
    if not isinstance(u, dict) or set(u) != {"callback_payload"}:
        errors.append("untrusted holds callback_payload only")
        return
    check_callback(u["callback_payload"], errors)


def check(raw, fmt):
    errors = []
    if len(raw) > BODY_MAX:
        errors.append(f"the body is {len(raw)} bytes, over 2 MB")
    try:
        body = json.loads(raw)
    except ValueError as e:
        return [f"not JSON: {e}"]
    (check_hud if fmt == "hud" else check_callback)(body, errors)
    return errors


def callback_in(body, fmt):
    return body["untrusted"]["callback_payload"] if fmt == "hud" else body


def mutations(body, fmt):
    """Each breaks exactly one rule of the contract."""
    def m(fn):
        b = copy.deepcopy(body)
        fn(b)
        return b
    w = lambda b: callback_in(b, fmt)["workflow"]
    out = [
        ("no check_run_id", m(lambda b: w(b).pop("check_run_id"))),
        ("no job_name", m(lambda b: w(b).pop("job_name"))),
        ("run_id a number", m(lambda b: w(b).__setitem__("run_id", 1001))),
        ("schema_version 2", m(lambda b: w(b).__setitem__("schema_version", "2"))),
        ("bad started_at", m(lambda b: w(b).__setitem__("started_at", "2026-10-01 12:00"))),
        ("test_results without skipped", m(lambda b: w(b)["test_results"].pop("skipped"))),
        ("no payload", m(lambda b: callback_in(b, fmt).pop("payload"))),
        ("1001 failed tests", m(lambda b: w(b).__setitem__(
            "failed_tests_json", json.dumps([{"name": "t"}] * 1001)))),
        ("a 1025-byte message", m(lambda b: w(b).__setitem__(
            "failed_tests_json", json.dumps([{"name": "t", "message": "é" * 513}])))),
        ("a 4097-byte stack trace", m(lambda b: w(b).__setitem__(
            "failed_tests_json", json.dumps([{"name": "t", "stacktrace": "x" * 4097}])))),
    ]
    if w(body)["status"] == "in_progress":
        out.append(("completed_at on in_progress",
                    m(lambda b: w(b).__setitem__("completed_at", "2026-10-01T12:00:00Z"))))
    else:
        out.append(("no conclusion on completed", m(lambda b: w(b).__setitem__("conclusion", None))))
    if fmt == "hud":
        out.append(("no verified_repo", m(lambda b: b["trusted"].pop("verified_repo"))))
        out.append(("level L7", m(lambda b: b["trusted"].__setitem__("downstream_repo_level", "L7"))))
        out.append(("no ci_metrics", m(lambda b: b["trusted"].pop("ci_metrics"))))
    return out


def main(argv):
    fmt, self_test, files = None, False, []
    it = iter(argv)
    for a in it:
        if a == "--format":
            fmt = next(it, None)
        elif a == "--self-test":
            self_test = True
        else:
            files.append(a)
    if fmt not in ("crcr", "hud") or not files:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for f in files:
        raw = open(f, "rb").read().rstrip(b"\n")
        errors = check(raw, fmt)
        for e in errors:
            print(f"{f}: {e}", file=sys.stderr)
        failed += bool(errors)
        if self_test and not errors:
            for what, bad in mutations(json.loads(raw), fmt):
                if not check(json.dumps(bad).encode(), fmt):
                    print(f"{f}: the mutation '{what}' was not refused", file=sys.stderr)
                    failed += 1
    print(f"schema ({fmt}): {len(files)} bodies, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
