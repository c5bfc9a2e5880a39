#!/usr/bin/env python3
"""Checks .ground_truth/variants.jsonl of a generated upstream by execution: imports the test
modules that the truth names (as tests/tools/trace_tests.py does), collects the test methods
their instantiation created, and derives each template's variants from the names (the test's
name, then `_<variant>`, then `_cpu` and a dtype for a device-generic class). Prints a JSON
summary; exit 1 when any test differs.

    python3 tests/tools/variants_exec.py --repo DIR
"""
import argparse
import importlib.util
import json
import os
import sys
import unittest


def collect(root, rel):
    spec = importlib.util.spec_from_file_location("_variants_" + str(abs(hash(rel))),
                                                  os.path.join(root, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    found = {}
    for cname, cls in sorted(vars(mod).items()):
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        if cls.__module__ != mod.__name__:
            continue
        for meth in unittest.TestLoader().getTestCaseNames(cls):
            tcls, tname = getattr(getattr(cls, meth), "template", (cname, meth))
            rest = meth[len(tname):]
            dtype = None
            if cname.endswith("CPU"):
                head, sep, tail = rest.rpartition("_cpu")
                if not sep:
                    raise SystemExit(f"variants_exec: {cname}.{meth}: no device suffix")
                rest, dtype = head, tail.lstrip("_") or None
            entry = found.setdefault(f"{rel}::{tcls}::{tname}", (set(), set()))
            if rest:
                entry[0].add(rest[1:])
            if dtype:
                entry[1].add(dtype)
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    a = ap.parse_args()
    root = os.path.abspath(a.repo)
    sys.path.insert(0, root)
    truth = []
    with open(os.path.join(root, ".ground_truth", "variants.jsonl")) as f:
        truth = [json.loads(line) for line in f if line.strip()]
    files = sorted({t["id"].split("::")[0] for t in truth})
    found = {}
    for rel in files:
        found.update(collect(root, rel))
    bad = 0
    for t in truth:
        got = found.get(t["id"])
        if got is None:
            print(f"variants_exec: {t['id']}: not instantiated", file=sys.stderr)
            bad += 1
            continue
        want_dtypes = set(t["dtypes"]) or got[1]  # no @dtypes: the stand-in's default
        if got[0] != set(t["variants"]) or got[1] != want_dtypes:
            bad += 1
            print(f"variants_exec: {t['id']}: executed-only {sorted(got[0] - set(t['variants']))} "
                  f"truth-only {sorted(set(t['variants']) - got[0])}", file=sys.stderr)
    extra = sorted(set(found) - {t["id"] for t in truth})
    for x in extra:
        print(f"variants_exec: {x}: instantiated, not in the truth", file=sys.stderr)
    print(json.dumps({"tests": len(truth), "variants": sum(len(t["variants"]) for t in truth),
                      "differ": bad, "not_in_truth": len(extra)}))
    return 1 if bad or extra else 0


if __name__ == "__main__":
    sys.exit(main())
