#!/usr/bin/env bash
# Checks `spyre-ci run` end to end: a fixture spec with one case per outcome the emulator gives
# (passed, xfailed, a strict xpass that fails, adapted, skipped) and its exit code; the JUnit
# XML read by Python's xml.etree agrees case by case with the JSONL (also for the golden files);
# shards partition the cases (with and without --history durations); a selection on a generated
# upstream runs; SIGINT still writes the reports of what finished; usage errors exit 2.
# Usage: run.sh PATH/TO/spyre-ci SOURCE_ROOT
set -u
cli_name=run-cli cli_sub=run
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$(realpath "$1") || exit 1
cd "$2" || exit 1
cmp_py=tests/cli/junit_vs_jsonl.py
fix=tests/fixtures/executors/specs/run.yaml
adapters=testspecs/specs/adapters/adapters.yaml
# jq-like: the outcome of the JSONL row whose name contains $2
outcome() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if sys.argv[2] in d["name"]: print(d["outcome"] + ("/" + d["adapter"] if d["adapter"] else ""))' "$@"; }

# --- the fixture: one case per outcome; a strict xpass makes the run fail.
expect_rc 1 "run the fixture" "$exe" run --all --specs "$fix" --adapters "$adapters" \
	--out "$tmp/r1" --jobs 2 --no-progress
check "summary line" grep -q "^7 cases: 4 passed, 1 failed, 0 error, 1 skipped, 1 xfailed" "$out"
for f in junit.xml results.jsonl summary.json; do check "$f written" test -s "$tmp/r1/$f"; done
check "no temp files left" test "$(ls "$tmp/r1" | wc -l)" = 3
r=$tmp/r1/results.jsonl
check "add passed" test "$(outcome "$r" 'test_add[add-67x256')" = passed
check "div xfailed" test "$(outcome "$r" test_div_exact)" = xfailed
check "strict xpass failed" test "$(outcome "$r" test_sub_strict)" = failed
check "softsign via adapter" test "$(outcome "$r" softsign-63)" = passed/softsign
check "hypot via adapter" test "$(outcome "$r" hypot-64)" = passed/hypot
check "mish skipped" test "$(outcome "$r" mish)" = skipped
check "mish says why" grep -q '"message":"no emulator op for this name' "$r"
py "$tmp/r1/summary.json" 'd["failed"] == 1 and d["passed"] == 4 and not d["ok"]'
check "junit agrees with jsonl" python3 "$cmp_py" "$tmp/r1/junit.xml" "$r"
check "golden junit agrees with golden jsonl" python3 "$cmp_py" \
	tests/fixtures/executors/golden.junit.xml tests/fixtures/executors/golden.jsonl
# without the adapter table the adapted cases are skipped with their reason
expect_rc 1 "run without adapters" "$exe" run --all --specs "$fix" --out "$tmp/r0" --no-progress
check "no adapters: 3 skipped" grep -q " 3 skipped" "$out"

# --- specs list counts how cases run: before (no table beside the specs) and after.
mkdir -p "$tmp/sp/adapters" && cp "$fix" "$tmp/sp/" && cp "$adapters" "$tmp/sp/adapters/"
expect_rc 0 "specs list without adapters" "$exe" specs list "$fix"
check "before: 4 native, 0 adapted, 3 unsupported" grep -q "^4 native, 0 adapted, 3 unsupported" "$out"
expect_rc 0 "specs list with the table beside" "$exe" specs list "$tmp/sp"
check "after: 4 native, 2 adapted, 1 unsupported" grep -q "^4 native, 2 adapted, 1 unsupported" "$out"
expect_rc 0 "specs list --json" "$exe" specs list --json "$tmp/sp"
py "$out" 'd["summary"]["native"] == 4 and d["summary"]["adapted"] == 2 and d["summary"]["unsupported_after_adapters"] == 1'
expect_rc 1 "run finds the table beside the specs (the strict xpass fails)" "$exe" run --all --specs "$tmp/sp" \
	--out "$tmp/r5" --no-progress
check "beside: hypot adapted" test "$(outcome "$tmp/r5/results.jsonl" hypot-64)" = passed/hypot

# --- every mandatory case passes: exit 0 (two shipped spec files' smoke tier).
smoke=(--specs testspecs/specs/unary_ufuncs.yaml --specs testspecs/specs/nn_functional.yaml --tier smoke)
expect_rc 0 "run the shipped smoke tier" "$exe" run --all "${smoke[@]}" \
	--out "$tmp/r2" --jobs 2 --no-progress
check "smoke: junit agrees with jsonl" python3 "$cmp_py" "$tmp/r2/junit.xml" "$tmp/r2/results.jsonl"

# --- shards: 1/3, 2/3, 3/3 partition the cases.
for s in 1 2 3; do
	expect_rc 0 "shard $s/3" "$exe" run --all "${smoke[@]}" --shard "$s/3" \
		--out "$tmp/s$s" --jobs 2 --no-progress
done
# with durations (the selector's history file) the shards still partition the cases
echo '{"x": {"mean_seconds": 30, "flaky": true}}' >"$tmp/hist.json"
for s in 1 2 3; do
	expect_rc 0 "shard $s/3 with --history" "$exe" run --all "${smoke[@]}" --shard "$s/3" \
		--history "$tmp/hist.json" --out "$tmp/h$s" --jobs 2 --no-progress
done
python3 - "$tmp" <<'PY' && ok || bad "shards partition the smoke cases"
import json, sys
ids = lambda p: [json.loads(l)["case_id"] for l in open(p)]
t = sys.argv[1]
whole = ids(t + "/r2/results.jsonl")
for pre in "sh":
    parts = [ids("%s/%s%d/results.jsonl" % (t, pre, s)) for s in (1, 2, 3)]
    flat = [i for p in parts for i in p]
    if not (sorted(flat) == sorted(whole) and len(set(flat)) == len(flat) and all(parts)):
        sys.exit(1)
PY

# --- a selection on a generated upstream.
"$exe" fixture upstream --out "$tmp/up" --seed 3 >/dev/null 2>&1 || bad "fixture upstream"
expect_rc 0 "run a selection" "$exe" run --repo "$tmp/up" --base HEAD~3 --head HEAD \
	--out "$tmp/r3" --jobs 2 --no-progress
check "selection: junit agrees with jsonl" python3 "$cmp_py" "$tmp/r3/junit.xml" "$tmp/r3/results.jsonl"

# --- SIGINT: the workers stop, the reports hold what finished (every case is either in the
# JSONL or counted as not run).
"$exe" run --all --specs testspecs/specs --out "$tmp/r4" --jobs 1 --no-progress >"$out" 2>"$err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
check "stopped run: exit 0 or 1 (not killed), got $rc" test "$rc" -le 1
check "stopped run: reports" test -s "$tmp/r4/summary.json"
py "$tmp/r4/summary.json" "d['total'] == d['not_run'] + sum(1 for _ in open('$tmp/r4/results.jsonl'))"
check "stopped run: junit agrees" python3 "$cmp_py" "$tmp/r4/junit.xml" "$tmp/r4/results.jsonl"

# --- usage errors
usage_error "no arguments" "--repo DIR is required" 
usage_error "--all needs --specs" "--all needs --specs" --all
usage_error "--all and --base" "--all excludes" --all --specs "$fix" --base HEAD
usage_error "bad shard" "--shard" --all --specs "$fix" --shard 3/2
echo '[1]' >"$tmp/hist-list.json"
usage_error "history not an object (no --shard)" "not a JSON object of test ids" --all --specs "$fix" \
	--history "$tmp/hist-list.json" --out "$tmp/never"
echo '{"t": {"mean_seconds": "slow"}}' >"$tmp/hist-bad.json"
usage_error "history entry without a number" "'t': want" --all --specs "$fix" \
	--history "$tmp/hist-bad.json" --out "$tmp/never"
usage_error "bad jobs" "--jobs" --all --specs "$fix" --jobs 0
usage_error "--post without a token" "go together" --all --specs "$fix" --post http://x
usage_error "missing specs" "nope" --all --specs "$tmp/nope.yaml"
usage_error "unknown option" "unknown option" --all --specs "$fix" --frob 1
expect_rc 2 "a broken adapter table" "$exe" run --all --specs "$fix" --adapters "$fix"
check "broken adapter table named" grep -q "run.yaml" "$err"
expect_rc 0 "help" "$exe" run --help
check "help mentions --shard" grep -q -- "--shard I/N" "$out"
summary
