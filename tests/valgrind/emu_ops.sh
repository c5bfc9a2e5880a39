#!/usr/bin/env bash
# Runs every op of `spyre-ci emu ops` once per float dtype under valgrind memcheck (invalid
# reads and writes, uses of uninitialised values, definite and indirect leaks), on a small shape
# from the op's samples with 4 cores, then a few runs of the other actions and of error paths.
# A run the planner refuses (exit 2) is listed as refused and does not fail the check: its
# error path still runs under valgrind and must not leak. Any valgrind error fails it.
# Usage: emu_ops.sh PATH/TO/spyre-ci   (VG_JOBS=N runs N at once, default 2)
set -u
exe=$1
njobs=${VG_JOBS:-2}
if ! command -v valgrind >/dev/null; then
	echo "SKIP: valgrind is not installed (scripts/lib.sh installs it)" >&2
	exit 77
fi
tmp=$(mktemp -d /tmp/vg-emu.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Per-op choices where the first sample is slow under valgrind or the op needs options. Keys are
# op names; values replace the sample ("S" is the --shape list, ';' between inputs) and add
# options. An op not listed runs its first sample with no options.
declare -A shape=(
	[mm]="67x129;129x150"
	[addmm]="150;67x129;129x150"
	[swiglu_mlp]="67x129;129x150;129x150;150x129"
	[scaled_dot_product_attention]="2x67x64;2x67x64;2x67x64"
	[transpose]="67x256"
)
declare -A opts=(
	[pow]="--exponent 2"
	[clamp]="--min -0.5 --max 0.5"
	[transpose]="--perm 0,1"
	[permute]="--perm 1,0,2"
	[gelu]="--approximate tanh"
	[scaled_dot_product_attention]="--causal"
	[sum]="--dim 0 --keepdim"
	[mul_scalar]="--exponent 3"
	[add_scalar]="--exponent 3"
	[div_scalar]="--exponent 3"
)
# More runs, kept so that error paths and the other actions are checked for leaks too, as
# "WANT|spyre-ci arguments" (WANT: the exit code; "op" for 0, or 2 when the planner refuses).
# TMP and FIXTURES stand for the scratch folder and tests/fixtures.
extra=(
	"op|emu run --op transpose --shape 67x256 --dtype float16 --cores 4 --perm 0,1"
	"op|emu run --op permute --shape 4x67x129 --dtype float16 --cores 4 --perm 0,2,1"
	"0|emu plans --op mm --shape 67x129 --shape 129x150 --dtype float16 --cores 4 --json"
	"0|emu run --op softmax --shape 63x129 --dtype float16 --cores 4 --trace TMP/trace.json"
	"0|emu run --op add --shape 63x129 --shape 129 --dtype float32 --cores 4 --plan rows8_double_buffered"
	"0|emu run --op linear --shape 63x129 --shape 256x129 --shape 256 --dtype float16 --hw FIXTURES/hw/eight_cores.yaml"
	"0|emu layout --shape 5x100x150 --dtype float16 --dim-order 1,0,2 --json"
	"0|emu hw --json"
	"1|emu run --op gelu --shape 67x256 --dtype float16 --cores 4 --atol 0 --rtol 0"
	"1|emu run --op add --shape 5 --shape 5 --dtype float16 --trace TMP/missing/trace.json"
	"2|emu run --op add --shape 5 --shape 5 --dtype float16 --plan no_such_plan"
	"2|emu hw --hw FIXTURES/hw/bad/bad_label.yaml"
	"2|emu run --op add --shape 5x0 --shape 5 --dtype float16"
	"0|emu graph FIXTURES/graph/small.yaml --dtype float16 --cores 3 --trace TMP/graph.json --json"
	"2|emu graph FIXTURES/graph/bad/undefined_input.yaml --dtype float16"
)
fixtures=$(cd "$(dirname "$0")/../fixtures" && pwd) || exit 1

"$exe" emu ops --json >"$tmp/ops.json" || {
	echo "FAIL: emu ops --json" >&2
	exit 1
}
python3 -c '
import json, sys
for o in json.load(open(sys.argv[1]))["ops"]:
    print(o["name"], o["dtypes"], o["samples"].split(";")[0].replace(",", ";"))
' "$tmp/ops.json" >"$tmp/ops.txt" || exit 1

# One line per run: WANT|arguments.
n=0
while read -r op dtypes sample; do
	[[ -n ${sample:-} ]] || continue # zeros, arange: no inputs, their size from spec params
	for dt in float16 float32; do
		[[ ,$dtypes, == *,$dt,* ]] || continue
		shapes=${shape[$op]:-$sample}
		echo "op|emu run --op $op --shape ${shapes//;/ --shape } --dtype $dt --cores 4 ${opts[$op]:-}"
		n=$((n + 1))
	done
done <"$tmp/ops.txt" >"$tmp/runs.txt"
printf '%s\n' "${extra[@]}" | sed "s|TMP|$tmp|g; s|FIXTURES|$fixtures|g" >>"$tmp/runs.txt"
if ((n < 116)); then
	echo "FAIL: only $n runs from the op table (59 ops with samples, float16 and float32)" >&2
	exit 1
fi

# run_one INDEX LINE: writes INDEX.line with "STATUS arguments (seconds)".
run_one() {
	local i=$1 want args
	IFS='|' read -r want args <<<"$2"
	local t0=$SECONDS
	# shellcheck disable=SC2086 # the arguments are plain words
	valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --log-file="$tmp/$i.vg" \
		"$exe" $args >"$tmp/$i.out" 2>"$tmp/$i.err"
	local rc=$? status
	if ((rc == 99)); then
		status=VALGRIND
	elif [[ $want == op && $rc == 0 ]]; then
		status=ok
	elif [[ $want == op && $rc == 2 ]]; then
		status=refused
	elif [[ $want == "$rc" ]]; then
		status=ok
	else
		status="EXIT-$rc"
	fi
	echo "$status ${args#emu } ($((SECONDS - t0)) s)" >"$tmp/$i.line"
}

i=0
while IFS= read -r line; do
	i=$((i + 1))
	run_one "$i" "$line" &
	while (($(jobs -rp | wc -l) >= njobs)); do wait -n; done
done <"$tmp/runs.txt"
wait

pass=0 fail=0 refused=()
for ((k = 1; k <= i; k++)); do
	read -r status rest <"$tmp/$k.line"
	echo "$status $rest"
	case $status in
	ok) pass=$((pass + 1)) ;;
	refused)
		pass=$((pass + 1))
		refused+=("$rest: $(head -c 200 "$tmp/$k.err")")
		;;
	*)
		fail=$((fail + 1))
		echo "FAIL: $rest" >&2
		grep -v '^==[0-9]*== *$' "$tmp/$k.vg" | head -n 60 >&2
		head -c 2000 "$tmp/$k.err" >&2
		;;
	esac
done
for r in "${refused[@]}"; do echo "refused: $r"; done
echo "valgrind: $pass passed, $fail failed"
[[ $fail == 0 ]]
