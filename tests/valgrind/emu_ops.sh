#!/usr/bin/env bash
# Runs every op of `spyre-ci emu ops` once per float dtype under valgrind memcheck (invalid
# reads and writes, uses of uninitialised values, definite and indirect leaks), on a small shape
# from the op's samples with 4 cores. A run the planner refuses (exit 2) is listed as refused and
# does not fail the check: its error path still runs under valgrind and must not leak.
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
	[transpose]="4x150x67"
)
declare -A opts=(
	[pow]="--exponent 2"
	[clamp]="--min -0.5 --max 0.5"
	[transpose]="--perm 0,1"
	[permute]="--perm 1,0,2"
	[gelu]="--approximate tanh"
	[scaled_dot_product_attention]="--causal"
	[sum]="--dim 0 --keepdim"
)
# Runs the planner refuses today, kept so that the refusal path is checked for leaks too.
extra=(
	"transpose|float16|67x256|--perm 0,1"
	"permute|float16|4x67x129|--perm 0,2,1"
)

"$exe" emu ops --json >"$tmp/ops.json" || {
	echo "FAIL: emu ops --json" >&2
	exit 1
}
python3 -c '
import json, sys
for o in json.load(open(sys.argv[1]))["ops"]:
    print(o["name"], o["dtypes"], o["samples"].split(";")[0].replace(",", ";"))
' "$tmp/ops.json" >"$tmp/ops.txt" || exit 1

# One line per run: op|dtype|shapes|options.
n=0
while read -r op dtypes sample; do
	for dt in float16 float32; do
		[[ ,$dtypes, == *,$dt,* ]] || continue
		echo "$op|$dt|${shape[$op]:-$sample}|${opts[$op]:-}"
		n=$((n + 1))
	done
done <"$tmp/ops.txt" >"$tmp/runs.txt"
printf '%s\n' "${extra[@]}" >>"$tmp/runs.txt"
if ((n < 45)); then
	echo "FAIL: only $n runs from the op table" >&2
	exit 1
fi

# run_one INDEX LINE: writes INDEX.line with "STATUS op dtype shapes options (seconds)".
run_one() {
	local i=$1 op dt shapes o args=() s
	IFS='|' read -r op dt shapes o <<<"$2"
	IFS=';' read -ra s <<<"$shapes"
	for x in "${s[@]}"; do args+=(--shape "$x"); done
	# shellcheck disable=SC2206 # options are words by design
	args+=($o)
	local t0=$SECONDS
	valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --log-file="$tmp/$i.vg" \
		"$exe" emu run --op "$op" "${args[@]}" --dtype "$dt" --cores 4 \
		>"$tmp/$i.out" 2>"$tmp/$i.err"
	local rc=$? status
	case $rc in
	0) status=ok ;;
	2) status=refused ;;
	99) status=VALGRIND ;;
	*) status="EXIT-$rc" ;;
	esac
	echo "$status $op $dt ${shapes//;/ } $o ($((SECONDS - t0)) s)" >"$tmp/$i.line"
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
