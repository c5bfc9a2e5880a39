#!/usr/bin/env bash
# Ground truth by execution (tests/tools/trace_tests.py) on a generated upstream with every
# shape: the upstream's torch package imports and every test runs under plain python3, the
# functions each test executes at HEAD are exactly those the generator's static truth says it
# reaches (check), and over N commits of the history the execution truth agrees with the static
# truth wherever the two can agree (compare: a test named only by a commit message, a test whose
# file's module-level code changed).
# Usage: trace.sh PATH/TO/spyre-ci PATH/TO/trace_tests.py [SCALE [COMMITS [EVAL [RUN [BENCH]]]]]
#   SCALE small (default) or pytorch; COMMITS of history (default: the scale's, "" for it);
#   EVAL commits whose execution truth is written (default 12); RUN "contiguous": the last
#   EVAL single commits instead of EVAL spread over the history; BENCH: bench-select-eval,
#   which then measures the selector against both truths over those commits (recall per
#   shape >= 99.5%, mean selection <= 10%: its exit status).
# At scale small the truth is made three times more: by a new interpreter per trace (--no-fork),
# which must give the same lines as the forked one, the same again with the fork server
# started afresh past every changed file, and with every test dirty on a module-level change of
# torch's own modules (--coarse), which must agree wherever it traces.
set -u
cli_name=trace-cli
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$1 script=$2 scale=${3:-small} commits=${4:-} eval=${5:-12} run=${6:-} bench=${7:-}
up=$tmp/up

gen=("$exe" fixture upstream --out "$up" --scale "$scale" --seed 5 --json)
[[ -n $commits ]] && gen+=(--commits "$commits")
expect_rc 0 "generate ($scale)" "${gen[@]}"
cat "$out"
expect_rc 0 "import torch" python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import torch
sys.exit(0 if callable(torch.randn) and torch.nn.functional else 1)' "$up"

# every test runs, and executes exactly what the static truth says: the tests of the call-graph
# shapes too (a chain of 31 to 46 functions, a diamond, a cycle that must end), which are there
check "tests of every call-graph shape" python3 -c 'import json, sys
seen = set()
for line in open(sys.argv[1]):
    seen.update(json.loads(line)["shapes"])
sys.exit(0 if {"deep_chain", "diamond", "cycle"} <= seen else 1)' "$up/.ground_truth/tests.jsonl"
expect_rc 0 "check: executed == static, per test" python3 "$script" check --repo "$up"
cat "$out" "$err" | head -20

# the execution truth of EVAL commits, written beside the static one
truth=(python3 "$script" truth --repo "$up" --commits "$eval")
[[ $run == contiguous ]] && truth+=(--contiguous)
expect_rc 0 "truth" "${truth[@]}"
cat "$out"
check "truth lines" test "$(wc -l <"$up/.ground_truth/commits_exec.jsonl")" -ge $((eval / 2))
if [[ $scale == small ]]; then
	expect_rc 0 "truth, a new interpreter per trace" "${truth[@]}" --no-fork --out "$tmp/fresh.jsonl"
	check "forked == fresh interpreters" cmp "$up/.ground_truth/commits_exec.jsonl" "$tmp/fresh.jsonl"
	# the fork server started again past one changed file (past 40 by default)
	TRACE_REFRESH_LIMIT=1 expect_rc 0 "truth, the fork server restarted often" "${truth[@]}" \
		--out "$tmp/restarted.jsonl"
	check "server restarts happened" grep -q '"server_restarts": [1-9]' "$out"
	check "restarted == fresh interpreters" cmp "$tmp/restarted.jsonl" "$tmp/fresh.jsonl"
	expect_rc 0 "truth, coarse" "${truth[@]}" --coarse --out "$tmp/coarse.jsonl"
	check "precise == coarse where both trace" python3 "$(dirname "$script")/trace_agree.py" \
		"$up/.ground_truth/commits_exec.jsonl" "$tmp/coarse.jsonl"
	cat "$out"
fi
expect_rc 0 "compare: executed vs static, per commit" python3 "$script" compare --repo "$up"
cat "$out" "$err" | head -20

# the selector against the execution truth (and the static one) of those commits
if [[ -n $bench ]]; then
	sel=("$bench" --repo "$up" --commits "$eval")
	[[ $run == contiguous ]] && sel+=(--contiguous)
	expect_rc 0 "selector: recall per shape against both truths" "${sel[@]}"
	cat "$out"
	check "the selector was measured against the execution truth" \
		grep -q '^recall (executed)   [0-9]' "$out"
fi

# a broken generated module makes the check fail (the check can fail)
victim=$(grep -l '^def ' "$up"/torch/nn/functional.py)
printf '\n\ndef broken(:\n' >>"$victim"
expect_rc 1 "check fails on a module that does not import" python3 "$script" check --repo "$up"

echo "trace-cli: $pass passed, $fail failed"
[[ $fail == 0 ]]
