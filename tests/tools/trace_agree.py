#!/usr/bin/env python3
"""Two execution truths of the same commits (trace_tests.py truth): the precise one, then one
made with --coarse (every test dirty on a module-level change of torch's own modules, which it
reports as "affected_all"). Exit 1 unless they list the same commits and agree on every commit
the coarse one traced."""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        a = [json.loads(line) for line in f]
    with open(sys.argv[2]) as f:
        b = [json.loads(line) for line in f]
    if [x["id"] for x in a] != [y["id"] for y in b]:
        print("trace_agree: the two truths are of different commits")
        return 1
    only = sum(y["affected_all"] and not x["affected_all"] for x, y in zip(a, b))
    bad = [x["id"] for x, y in zip(a, b)
           if not y["affected_all"] and (x["affected"], x["affected_all"]) != (y["affected"], False)
           ]
    print(f"trace_agree: {len(a)} commits, {only} traced by the precise rule only, "
          f"{len(bad)} differing {bad[:3]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
