#!/usr/bin/env bash
# Checks graph cases of the specs' `kernels:` extension end to end: `spyre-ci run` runs the
# fixture's graphs whole (passed, xfailed, a bfloat16 case skipped), results.jsonl carries each
# graph's file, modeled time and per-step plans, the JUnit agrees with it; `specs list` and
# `specs explain` show the graph a case runs; a spec naming a missing graph is refused by lint,
# list and run at file:line:col.
# Usage: graph_case.sh PATH/TO/spyre-ci SOURCE_ROOT
set -u
cli_name=graph-case-cli cli_sub=run
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$(realpath "$1") || exit 1
cd "$2" || exit 1
fix=tests/fixtures/executors/graph/spec.yaml
bad_spec=tests/fixtures/executors/graph/bad_path.yaml
# the JSONL row whose name contains $2, as "outcome|plan|steps"
row() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if sys.argv[2] in d["name"]: print(d["outcome"] + "|" + d["plan"] + "|" + (d.get("steps") or ""))' "$@"; }

# --- run: every graph case gives its outcome; the run passes (the xfail is expected).
expect_rc 0 "run the graph fixture" "$exe" run --all --specs "$fix" --out "$tmp/r" --jobs 2 --no-progress
check "summary line" grep -q "^6 cases: 4 passed, 0 failed, 0 error, 1 skipped, 1 xfailed" "$out"
r=$tmp/r/results.jsonl
check "mlp passed with five kernels" grep -q '^passed|graph: 5 kernels, 0 relayouts|gate mm ' \
	<(row "$r" "test_mlp[graph-mlp.yaml-best-64x512")
check "ring relayout step" grep -q '^passed|graph: 2 kernels, 1 relayouts|h mm .*; t relayout ring ' \
	<(row "$r" "graph-relayout.yaml-ring-")
check "devmem relayout step, 8 cores" grep -q '; t relayout devmem ' \
	<(row "$r" "graph-relayout.yaml-devmem-c8-")
check "exact tolerance xfailed" grep -q '^xfailed|' <(row "$r" test_exact)
check "bfloat16 skipped" grep -q '^skipped|' <(row "$r" test_bf16)
check "graph file in the row" grep -q '"graph":"tests/fixtures/executors/graph/graphs/mlp.yaml"' "$r"
py "$tmp/r/summary.json" 'd["passed"] == 4 and d["ok"]'
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ring = [d for d in rows if "-ring-" in d["name"]][0]
dev = [d for d in rows if "-devmem-" in d["name"]][0]
sys.exit(0 if 0 < ring["device_us"] < dev["device_us"] else 1)' "$r" && ok || bad "modeled time: ring below devmem"
check "junit agrees with jsonl" python3 tests/cli/junit_vs_jsonl.py "$tmp/r/junit.xml" "$r"
check "junit names the graph" grep -q "graph tests/fixtures/executors/graph/graphs/relayout.yaml: h mm" "$tmp/r/junit.xml"

# --- specs list and explain show the graph behind a case.
expect_rc 0 "specs list" "$exe" specs list "$fix"
check "list: graph line" grep -q "graph tests/fixtures/executors/graph/graphs/relayout.yaml (3 ops, relayout devmem)" "$out"
check "list: counts" grep -q "^4 tests, 6 cases (1 unsupported)" "$out"
expect_rc 0 "specs list --json" "$exe" specs list --json "$fix"
py "$out" 'all(c["kind"] == "graph" and c["op"] == "graph" for c in d["cases"]) and
	[c["relayout"] for c in d["cases"]].count("ring") == 1 and
	{c["graph"] for c in d["cases"]} == {"graphs/mlp.yaml", "graphs/relayout.yaml"} and
	d["unsupported"][0]["why"] == "an op graph runs in float16 or float32"'
expect_rc 0 "specs explain" "$exe" specs explain --test test/test_graph_fixture.py::TestGraph::test_mlp "$fix"
check "explain: graph line" grep -q "graph tests/fixtures/executors/graph/graphs/mlp.yaml (5 ops, relayout best)" "$out"

# --- a missing graph: refused at the graph: node, by lint, list and run alike.
want="bad_path.yaml:9:22: error: graph 'graphs/no_such_graph.yaml': cannot open [^ ]*no_such_graph.yaml: No such file"
expect_rc 2 "lint refuses a missing graph" "$exe" specs lint "$bad_spec"
check "lint: file:line:col" grep -Eq "$want" "$out" "$err"
expect_rc 2 "list refuses a missing graph" "$exe" specs list "$bad_spec"
check "list: file:line:col" grep -Eq "$want" "$err"
expect_rc 2 "run refuses a missing graph" "$exe" run --all --specs "$bad_spec" --out "$tmp/rb" --no-progress
check "run: file:line:col" grep -Eq "$want" "$err"
check "run: no report" test ! -e "$tmp/rb/results.jsonl"
summary
