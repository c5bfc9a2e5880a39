#!/usr/bin/env bash
# Checks `spyre-ci emu` as a kernel developer meets it: the layout example of docs/emu.md, the JSON
# keys of run/plans/ops/hw, that the digest does not depend on the core count but does on the
# seed, traces, named plans, exit codes 0/1/2 with a message for every usage error, and that
# every example of the help page runs.
# Usage: emu.sh PATH/TO/spyre-ci
set -u
cli_name=emu-cli cli_sub=emu
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$(realpath "$1") || exit 1
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# --- layout: the example of docs/emu.md, default order, another order, text.
expect_rc 0 "layout json" "$exe" emu layout --shape 5x100x150 --dtype float16 --json
check "layout device_size/stride_map" py "$out" \
	'd["device_size"] == [100, 3, 5, 64] and d["stride_map"] == [150, 64, 15000, 1]'
expect_rc 0 "layout --dim-order" "$exe" emu layout --shape 5x100x150 --dtype float16 \
	--dim-order 1,0,2 --json
check "layout 1,0,2 device_size/stride_map" py "$out" \
	'd["device_size"] == [5, 3, 100, 64] and d["stride_map"] == [15000, 64, 150, 1]'
expect_rc 0 "layout text" "$exe" emu layout --shape 5x100x150 --dtype float16
check "layout text device_size" grep -q '^device_size  \[100, 3, 5, 64\] dlfloat16$' "$out"
check "layout text stride_map" grep -q '^stride_map   \[150, 64, 15000, 1\]$' "$out"
check "layout text sticks" grep -q '^sticks       1500 of 64 elements' "$out"

# --- run: keys, digest independent of cores, dependent on seed.
add=(--op add --shape 67x256 --shape 67x256 --dtype float16)
expect_rc 0 "run add json" "$exe" emu run "${add[@]}" --json
cp "$out" "$tmp/add.json"
check "run json keys" py "$tmp/add.json" 'all(k in d for k in ("passed", "max_abs_err",
	"max_rel_err", "modeled_us", "plan", "utilization", "lx_peak_bytes", "output_digest"))'
check "run json values" py "$tmp/add.json" 'd["passed"] is True and d["modeled_us"] > 0 and
	d["output_shape"] == [67, 256] and len(d["output_digest"]) == 16 and
	d["max_abs_err"] <= d["atol"] + d["rtol"] and isinstance(d["utilization"], dict)'
digest=$(field "$tmp/add.json" output_digest)
for c in 1 8 32; do
	expect_rc 0 "run add --cores $c" "$exe" emu run "${add[@]}" --json --cores "$c"
	check "digest on $c cores" py "$out" "d['output_digest'] == '$digest' and d['cores'] == $c"
done
expect_rc 0 "run add --seed 7" "$exe" emu run "${add[@]}" --json --seed 7
check "another seed, another digest" py "$out" "d['output_digest'] != '$digest'"
expect_rc 0 "run add text" "$exe" emu run "${add[@]}"
check "run text digest" grep -q "digest $digest\$" "$out"
check "run text PASS" grep -q '^numerics  PASS' "$out"

# --- trace
expect_rc 0 "run --trace" "$exe" emu run "${add[@]}" --trace "$tmp/trace.json" --json
check "trace parses with traceEvents" py "$tmp/trace.json" \
	'isinstance(d["traceEvents"], list) and any(e.get("ph") == "X" for e in d["traceEvents"])'
expect_rc 1 "trace into a missing folder" "$exe" emu run "${add[@]}" --trace "$tmp/no/t.json"
check "trace failure names the file" grep -q "$tmp/no/t.json" "$err"

# --- plans: shape of the JSON, order, and --plan runs the named plan.
mm=(--op mm --shape 67x129 --shape 129x150 --dtype float16 --cores 4)
expect_rc 0 "plans mm json" "$exe" emu plans "${mm[@]}" --json
cp "$out" "$tmp/plans.json"
check "plans json shape" py "$tmp/plans.json" 'len(d["plans"]) >= 2 and
	all(isinstance(p["name"], str) and isinstance(p["modeled_us"], float) for p in d["plans"])'
check "valid plans first, sorted by modeled_us" py "$tmp/plans.json" '
	(lambda v, f: v == sorted(v) and all(p["valid"] for p in d["plans"][:len(v)]) and
		not any(p["valid"] for p in d["plans"][len(v):]))(
	[p["modeled_us"] for p in d["plans"] if p["valid"]], 0)'
slow=$(python3 -c 'import json, sys
print([p["name"] for p in json.load(open(sys.argv[1]))["plans"] if p["valid"]][-1])' \
	"$tmp/plans.json")
slow_us=$(python3 -c 'import json, sys
print([p["modeled_us"] for p in json.load(open(sys.argv[1]))["plans"] if p["valid"]][-1])' \
	"$tmp/plans.json")
expect_rc 0 "run --plan $slow" "$exe" emu run "${mm[@]}" --plan "$slow" --json
check "run --plan runs that plan" py "$out" "d['plan'] == '$slow' and d['passed'] and
	abs(d['modeled_us'] - $slow_us) < 1e-9"
expect_rc 0 "run mm default plan" "$exe" emu run "${mm[@]}" --json
check "the default plan is a fastest one" py "$out" "abs(d['modeled_us'] -
	json.load(open('$tmp/plans.json'))['plans'][0]['modeled_us']) < 1e-9"
usage_error "unknown plan" "no plan named 'no_such_plan'" run "${mm[@]}" --plan no_such_plan
expect_rc 0 "plans text" "$exe" emu plans "${mm[@]}"
check "plans text marks the fastest" grep -Eq '\((default|tied fastest)\)$' "$out"

# --- numerics failure is exit 1, with the run still reported.
expect_rc 1 "gelu with zero tolerance" "$exe" emu run --op gelu --shape 67x256 --dtype float16 \
	--atol 0 --rtol 0 --json
check "failed run reports passed false" py "$out" 'd["passed"] is False and d["mismatches"] > 0'
expect_rc 1 "gelu with zero tolerance, text" "$exe" emu run --op gelu --shape 67x256 \
	--dtype float16 --atol 0 --rtol 0
check "failed run says FAIL" grep -q '^numerics  FAIL' "$out"

# --- usage errors: exit 2 and a message naming the problem.
two=(--shape 5 --shape 5)
usage_error "no action at all" "expected an action"
usage_error "unknown action" "unknown action 'frob'" frob
usage_error "unknown op" "unknown op 'nope'" run --op nope --shape 5 --dtype float16
usage_error "missing --op" "--op is required" run --shape 5 --dtype float16
usage_error "missing --dtype" "--dtype is required" run --op add "${two[@]}"
usage_error "layout without --dtype" "needs --dtype" layout --shape 5x6
usage_error "bad --dtype" "unknown dtype 'bogus'" run --op add "${two[@]}" --dtype bogus
usage_error "one shape for add" "add takes 2 --shape options .*got 1" run --op add --shape 5 \
	--dtype float16
usage_error "three shapes for add" "add takes 2 --shape options .*got 3" run --op add "${two[@]}" \
	--shape 5 --dtype float16
for s in 5x0 5xx abc x5 "" 5x-1; do
	usage_error "--shape '$s'" "--shape" run --op neg --shape "$s" --dtype float16
done
usage_error "--cores 0" "--cores: 0 is out of range \[1, 32\]" run --op add "${two[@]}" \
	--dtype float16 --cores 0
usage_error "--cores 33" "--cores: 33 is out of range \[1, 32\]" run --op add "${two[@]}" \
	--dtype float16 --cores 33
usage_error "--seed -1" "--seed: '-1'" run --op add "${two[@]}" --dtype float16 --seed -1
usage_error "--atol abc" "--atol: 'abc' is not a number" run --op add "${two[@]}" \
	--dtype float16 --atol abc
usage_error "--atol -1" "--atol: -1 is out of range" run --op add "${two[@]}" --dtype float16 \
	--atol -1
usage_error "shape past the element limit" "more than [0-9]+ elements" run --op neg \
	--shape 65536x65536 --dtype float16
usage_error "unknown option" "unknown option '--frob'" run --op add "${two[@]}" \
	--dtype float16 --frob 1
usage_error "unknown option last" "unknown option '--frob'" run --op add "${two[@]}" \
	--dtype float16 --frob
usage_error "option without its value" "--cores needs a value" run --op add "${two[@]}" \
	--dtype float16 --cores
usage_error "stray argument" "unexpected argument 'add'" run add
usage_error "option of another action" "--plan is not an option of .emu plans." plans \
	--op add "${two[@]}" --dtype float16 --plan x
usage_error "--dim-order on run" "--dim-order is not an option of .emu run." run --op add \
	"${two[@]}" --dtype float16 --dim-order 0
usage_error "--dim-order too short" "--dim-order needs one entry per dimension" layout \
	--shape 5x100x150 --dtype float16 --dim-order 1,0
usage_error "--dim-order out of range" "--dim-order: .*'9'" layout --shape 5x100x150 \
	--dtype float16 --dim-order 1,0,9
usage_error "permute without --perm" "permute needs --perm" run --op permute --shape 4x6x8 \
	--dtype float16
usage_error "--perm on add" "add takes no --perm" run --op add "${two[@]}" --dtype float16 \
	--perm 1,0
usage_error "--approximate bad" "--approximate takes tanh or none" run --op gelu --shape 5 \
	--dtype float16 --approximate fast
usage_error "dtype the op lacks" "exp does not support int64" run --op exp --shape 5 \
	--dtype int64
usage_error "--hw missing file" "$tmp/missing.yaml" run --op add "${two[@]}" --dtype float16 \
	--hw "$tmp/missing.yaml"
printf 'name: broken\ncores: [\n' >"$tmp/broken.yaml"
usage_error "--hw broken file" "$tmp/broken.yaml:[0-9]+" run --op add "${two[@]}" \
	--dtype float16 --hw "$tmp/broken.yaml"
usage_error "hw --hw broken file" "$tmp/broken.yaml:[0-9]+" hw --hw "$tmp/broken.yaml"

# --- ops and hw tables
expect_rc 0 "ops json" "$exe" emu ops --json
check "ops json has the 61 ops" py "$out" 'len(d["ops"]) == 61 and
	len({o["name"] for o in d["ops"]}) == 61 and
	all({"float16", "bfloat16"} <= set(o["dtypes"].split(",")) and
	    ((o["inputs"] and o["samples"]) or o["name"] in ("zeros", "arange")) for o in d["ops"])'
expect_rc 0 "ops text" "$exe" emu ops
check "ops text names softmax" grep -q '^softmax ' "$out"
expect_rc 0 "hw json" "$exe" emu hw --json
check "hw json labels every key" py "$out" 'len(d) >= 10 and
	all(v["label"] in ("fact", "estimate") and v["source"] for v in d.values())'
check "hw json has facts and estimates" py "$out" \
	'{v["label"] for v in d.values()} == {"fact", "estimate"}'
check "hw json values" py "$out" 'd["cores"]["value"] == 32 and
	d["lx_bytes"]["value"] == 2097152 and d["stick_bytes"]["value"] == 128 and
	isinstance(d["name"]["value"], str)'
expect_rc 0 "hw --hw eight_cores" "$exe" emu hw --json --hw "$(dirname "$0")/../fixtures/hw/eight_cores.yaml"
check "hw --hw gives that file's values" py "$out" 'd["cores"]["value"] == 8'
expect_rc 0 "hw text" "$exe" emu hw
check "hw text labels" grep -Eq '^  lx_bytes +2097152  fact ' "$out"

# --- help pages, and every example on them runs.
expect_rc 0 "emu --help" "$exe" emu --help
cp "$out" "$tmp/help.txt"
expect_rc 0 "help emu" "$exe" help emu
check "both help pages agree" cmp -s "$out" "$tmp/help.txt"
check "help has Examples" grep -q '^Examples:$' "$tmp/help.txt"
check "help names the exit codes" grep -q '^Exit codes: 0 ok; 1 ' "$tmp/help.txt"
# The examples: lines after "Examples:", a trailing backslash continues one.
sed -n '/^Examples:$/,$p' "$tmp/help.txt" | tail -n +2 |
	awk '{ sub(/^ +/, ""); if (sub(/ *\\$/, " ")) { acc = acc $0 } else { print acc $0; acc = "" } }' \
		>"$tmp/examples.txt"
nex=$(grep -c '^spyre-ci emu ' "$tmp/examples.txt")
((nex >= 3)) && ok || bad "help page has $nex examples, want at least 3"
while read -r prog words; do
	[[ $prog == spyre-ci ]] || {
		bad "example is not a spyre-ci command: $prog $words"
		continue
	}
	# shellcheck disable=SC2086 # the examples are plain words
	(cd "$tmp" && "$exe" $words >"$out" 2>"$err")
	rc=$?
	[[ $rc == 0 ]] && ok || bad "example '$prog $words': exit $rc: $(head -c 300 "$err")"
done <"$tmp/examples.txt"

# --plan-cache DIR: the second run takes the choice from the file the first wrote
mkdir -p "$tmp/plans"
expect_rc 0 "run --plan-cache cold" "$exe" emu run "${add[@]}" --plan-cache "$tmp/plans" --json
check "cold run chose its plan" py "$out" 'd["plan_cached"] is False'
expect_rc 0 "run --plan-cache again" "$exe" emu run "${add[@]}" --plan-cache "$tmp/plans" --json
check "second run read the cache" py "$out" 'd["plan_cached"] is True'

# emu hw: the derived compute peak, labelled
expect_rc 0 "hw json peak" "$exe" emu hw --json
check "hw peak is 32.8 TFLOPS, an estimate" py "$out" \
	'abs(d["peak_fp16_tflops"]["value"] - 32.768) < 1e-9 and d["peak_fp16_tflops"]["label"] == "estimate"'

# emu graph: a small graph with a relayout, JSON as documented, forced relayout paths, errors
gdir="$(dirname "$0")/../fixtures/graph"
expect_rc 0 "graph json" "$exe" emu graph "$gdir/small.yaml" --dtype float16 --cores 3 --json
check "graph json keys" py "$out" 'd["passed"] is True and d["modeled_us"] > 0 and
	[o["name"] for o in d["ops"]] == ["h", "hb", "n", "m"] and
	all(set(o) >= {"name", "op", "plan", "modeled_us"} for o in d["ops"]) and
	len(d["relayouts"]) == 1 and d["relayouts"][0]["tensor"] == "t" and
	d["relayouts"][0]["via"] in ("ring", "devmem") and d["relayouts"][0]["bytes"] > 0'
expect_rc 0 "graph --relayout devmem" "$exe" emu graph "$gdir/small.yaml" --dtype float16 \
	--cores 3 --relayout devmem --json
check "graph devmem forced" py "$out" 'd["relayouts"][0]["via"] == "devmem"'
expect_rc 0 "graph text + trace" "$exe" emu graph "$gdir/small.yaml" --dtype float16 \
	--trace "$tmp/graph-trace.json"
check "graph trace parses" py "$tmp/graph-trace.json" 'len(d["traceEvents"]) > 0'
check "graph text PASS" grep -q '^numerics  PASS' "$out"
expect_rc 2 "graph bad file" "$exe" emu graph "$gdir/bad/unknown_op.yaml"
check "graph error placed" grep -q 'unknown_op.yaml:3:19: unknown op' "$err"
expect_rc 2 "graph no file" "$exe" emu graph --dtype float16
expect_rc 2 "graph bad --relayout" "$exe" emu graph "$gdir/small.yaml" --relayout sideways
expect_rc 2 "graph takes no --op" "$exe" emu graph "$gdir/small.yaml" --op add

summary
