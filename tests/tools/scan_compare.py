#!/usr/bin/env python3
"""Compares the Python scanner with the reference of tests/tools/scan_ref.py (Python's own
parser) on files and directories (every *.py under them): classes, defs, imports,
instantiate_*_tests calls, op database entries and module- and class-level bindings, as
described in scan_ref.py. A file Python cannot parse is counted
and skipped (the scanner's recovery from bad Python has its own unit tests); a file that is not
UTF-8 must be skipped by both. Prints each disagreement as a diff of fact lines and the
figures; exits 1 on any disagreement, 2 on bad usage or when the scanner fails.

  scan_compare.py --dump BUILD/tests/tools/scan-dump [--time] [--min-files N] PATH...
"""
import argparse
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scan_ref  # noqa: E402


def python_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _dirs, files in os.walk(p):
                out += [os.path.join(root, f) for f in files if f.endswith(".py")]
        else:
            out.append(p)
    return sorted(out)


def split_by_file(text):
    facts, cur = {}, None
    for line in text.splitlines():
        if line.startswith("file "):
            cur = facts.setdefault(line[5:], [])
        elif cur is not None:
            cur.append(line)
    return facts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True, help="the scan-dump program")
    ap.add_argument("--time", action="store_true", help="also measure the scanner's speed")
    ap.add_argument("--min-files", type=int, default=1, help="fail when fewer were compared")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    files = python_files(args.paths)
    if not files:
        print("scan_compare: no Python files", file=sys.stderr)
        return 2
    run = subprocess.run([args.dump] + files, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"scan_compare: scan-dump failed: {run.stderr}", file=sys.stderr)
        return 2
    ours = split_by_file(run.stdout)
    n = collections.Counter()
    mismatches = 0
    for path in files:
        ref = scan_ref.facts(path)[1:]
        if ref and ref[0].startswith("unparsable"):
            n["unparsable"] += 1
            print(f"skip {path}: {ref[0]}")
            continue
        got = ours.get(path, [])
        if ref == ["skipped"] or got == ["skipped"]:
            n["not utf-8"] += 1
        else:
            n["files"] += 1
            n["bytes"] += os.path.getsize(path)
        for line in ref:
            kind = line.split(" ", 1)[0]
            n[kind] += 1
            if kind == "def" and line.split(" ", 2)[1].rsplit(".", 1)[-1].startswith("test"):
                n["tests"] += 1
        a, b = collections.Counter(ref), collections.Counter(got)
        if a == b:
            continue
        missing, extra = sorted((a - b).elements()), sorted((b - a).elements())
        mismatches += len(missing) + len(extra)
        print(f"MISMATCH {path}")
        for line in missing:
            print(f"  - python:  {line}")
        for line in extra:
            print(f"  + scanner: {line}")
    print(
        f"files {n['files']} ({n['bytes']} bytes), not UTF-8 {n['not utf-8']}, "
        f"unparsable {n['unparsable']}; compared: classes {n['class']}, bases {n['base']}, "
        f"defs {n['def']} (tests {n['tests']}), imports {n['import']}, "
        f"instantiate calls {n['instantiate']}, op entries {n['opinfo']}, "
        f"globals {n['global']}; "
        f"disagreements {mismatches}"
    )
    if args.time:
        t = subprocess.run([args.dump, "--time"] + files, capture_output=True, text=True)
        m = re.search(r"scan-dump: (\d+) bytes in ([0-9.]+) s", t.stderr)
        if t.returncode == 0 and m:
            nbytes, secs = int(m.group(1)), float(m.group(2))
            print(f"scanner: {nbytes} bytes in {secs:.4f} s = {nbytes / secs / 1e6:.1f} MB/s")
    if n["files"] < args.min_files:
        print(f"scan_compare: only {n['files']} files compared", file=sys.stderr)
        return 1
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
