"""Reads a JUnit XML report with a real consumer (xml.etree, as PyTorch's upload_test_stats.py
does) and its JSONL twin, and checks that they agree case by case: the same testcases in the
same order, the same classname, name, file and time, and the child element each outcome gives
(failure; error for error, crashed, timed_out; skipped with pytest.skip or pytest.xfail; none
for passed, flaky and xpassed), and that every testsuite's counts add up.
Usage: junit_vs_jsonl.py junit.xml results.jsonl; exit 0 when they agree."""
import json
import sys
import xml.etree.ElementTree as ET

CHILD = {"passed": None, "xpassed": None, "failed": ("failure", "AssertionError"),
         "error": ("error", "EmulatorError"), "crashed": ("error", "crashed"),
         "timed_out": ("error", "timed_out"), "skipped": ("skipped", "pytest.skip"),
         "xfailed": ("skipped", "pytest.xfail")}


def fail(msg):
    print("junit_vs_jsonl: " + msg, file=sys.stderr)
    sys.exit(1)


root = ET.parse(sys.argv[1]).getroot()
rows = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
if root.tag != "testsuites":
    fail("root is <%s>" % root.tag)
cases = []
for suite in root.iter("testsuite"):
    tcs = list(suite.iter("testcase"))
    counts = {k: 0 for k in ("failure", "error", "skipped")}
    for tc in tcs:
        for k in counts:
            counts[k] += len(tc.findall(k))
    if int(suite.get("tests")) != len(tcs):
        fail("suite %s: tests=%s, %d testcases" % (suite.get("name"), suite.get("tests"), len(tcs)))
    for k, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        if int(suite.get(attr)) != counts[k]:
            fail("suite %s: %s=%s, counted %d" % (suite.get("name"), attr, suite.get(attr), counts[k]))
    cases.extend(tcs)
if int(root.get("tests")) != len(cases):
    fail("testsuites tests=%s, %d testcases" % (root.get("tests"), len(cases)))
if len(cases) != len(rows):
    fail("%d testcases, %d JSONL rows" % (len(cases), len(rows)))
# the XML groups by file in order of first appearance: match by (file, classname, name), in order
by_key = {}
for tc in cases:
    by_key.setdefault((tc.get("file"), tc.get("classname"), tc.get("name")), []).append(tc)
for r in rows:
    found = by_key.get((r["file"], r["classname"], r["name"]))
    if not found:
        fail("case %s (%s) is not in the XML" % (r["case_id"], r["name"]))
    tc = found.pop(0)
    for k in ("classname", "name", "file"):
        if tc.get(k) != r[k]:
            fail("%s: %s %r vs %r" % (r["name"], k, tc.get(k), r[k]))
    if abs(float(tc.get("time")) - r["time"]) > 0.0011:
        fail("%s: time %s vs %s" % (r["name"], tc.get("time"), r["time"]))
    kids = [c for c in tc if c.tag != "system-out"]
    want = CHILD[r["outcome"]]
    if want is None:
        if kids:
            fail("%s: %s has <%s>" % (r["name"], r["outcome"], kids[0].tag))
    else:
        if len(kids) != 1 or kids[0].tag != want[0] or kids[0].get("type") != want[1]:
            fail("%s: %s wants <%s type=%s>, got %s" % (r["name"], r["outcome"], want[0], want[1],
                                                        [(k.tag, k.get("type")) for k in kids]))
        if kids[0].get("message") != r["message"]:
            fail("%s: message %r vs %r" % (r["name"], kids[0].get("message"), r["message"]))
