#!/usr/bin/env bash
# Test variants by execution: the generated upstream's test/test_op_variants.py is imported
# under plain python3 and the test methods its instantiation creates (tests/tools/
# variants_exec.py) are exactly .ground_truth/variants.jsonl, which the catalog equals test by
# test (tests/unit/selector/catalog_variants_truth.c).
# Usage: variants.sh PATH/TO/spyre-ci PATH/TO/variants_exec.py
set -u
cli_name=variants-cli
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$1 script=$2
for seed in 1 4; do
	up=$tmp/up$seed
	expect_rc 0 "generate (seed $seed)" "$exe" fixture upstream --out "$up" --seed "$seed" \
		--commits 6 --no-checkout
	git -C "$up" checkout -q HEAD -- . 2>/dev/null || git -C "$up" reset -q --hard
	expect_rc 0 "executed variants == truth (seed $seed)" python3 "$script" --repo "$up"
	cat "$out" "$err" | head -5
	grep -q '"differ": 0' "$out" && ok || bad "seed $seed: variants differ"
done
# select --explain, variant by variant: an edit of an @ops(reduction_ops) test under a config
# that lists the generic test, one variant `skip`; that variant's kernel cases are removed
ex=$tmp/ex
git clone -q "$tmp/up1" "$ex"
python3 - "$ex/test/test_op_variants.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    def test_reduction(self, device, dtype, op):\n"
assert old in s
open(p, "w").write(s.replace(old, old + "        self.assertIsNotNone(op.name)\n"))
PY
git -C "$ex" -c user.name=t -c user.email=t@t commit -qam "edit a test"
cat >"$tmp/v.yaml" <<'YAML'
test_suite_config:
  files:
    - path: ${TORCH_ROOT}/test/test_op_variants.py
      unlisted_test_mode: skip
      tests:
        - names: [TestOpVariants::test_reduction_sum]
          mode: skip
        - names: [TestOpVariants::test_reduction]
          mode: mandatory_success
  global:
    supported_dtypes:
      - {name: float16, precision: {atol: 0.1, rtol: 0.1}}
    supported_ops: [mean, sum]
YAML
id=test/test_op_variants.py::TestOpVariants::test_reduction
sel=("$exe" select --repo "$ex" --base HEAD~1 --head HEAD --specs "$tmp/v.yaml")
expect_rc 0 "select --explain" "${sel[@]}" --explain "$id"
cp "$out" "$tmp/explain"
check "each variant shown" grep -q "^    [0-9]* variants$" "$tmp/explain"
check "mean: the generic entry" grep -q "^      mean: eligible, mode mandatory_success, entry at $tmp/v.yaml:8$" "$tmp/explain"
check "sum: its own skip entry" grep -q "^      sum: not eligible, mode skip, entry at $tmp/v.yaml:6" "$tmp/explain"
check "an op outside supported_ops" grep -q "^      amax: not eligible, .*not supported" "$tmp/explain"
with=$(sed -n 's/^    \([0-9]*\) kernel cases.*/\1/p' "$tmp/explain")
sed -i '/test_reduction_sum/,+1d' "$tmp/v.yaml"
expect_rc 0 "select --explain, no variant skipped" "${sel[@]}" --explain "$id"
without=$(sed -n 's/^    \([0-9]*\) kernel cases.*/\1/p' "$out")
sed -i 's/supported_ops: \[mean, sum\]/supported_ops: [sum]/' "$tmp/v.yaml"
expect_rc 0 "select --explain, sum alone" "${sel[@]}" --explain "$id"
sum_alone=$(sed -n 's/^    \([0-9]*\) kernel cases.*/\1/p' "$out")
[[ -n $with && -n $without && -n $sum_alone && $with -gt 0 && $sum_alone -gt 0 &&
	$without == $((with + sum_alone)) ]] && ok ||
	bad "a skipped variant's cases are not removed ($with with it skipped, $without without, $sum_alone of sum)"
# the generic test unlisted, two of its variants listed: each eligible variant runs its own
# op's cases (mean and sum), an unlisted one (amax) none; one listed variant runs its op alone
cat >"$tmp/v2.yaml" <<'YAML'
test_suite_config:
  files:
    - path: ${TORCH_ROOT}/test/test_op_variants.py
      unlisted_test_mode: skip
      tests:
        - names: [TestOpVariants::test_reduction_mean, TestOpVariants::test_reduction_sum]
          mode: mandatory_success
  global:
    supported_dtypes:
      - {name: float16, precision: {atol: 0.1, rtol: 0.1}}
    supported_ops: [mean, sum, amax]
YAML
sel2=("$exe" select --repo "$ex" --base HEAD~1 --head HEAD --specs "$tmp/v2.yaml")
expect_rc 0 "select --explain, two variants listed" "${sel2[@]}" --explain "$id"
two=$(sed -n 's/^    \([0-9]*\) kernel cases.*/\1/p' "$out")
sed -i 's/TestOpVariants::test_reduction_mean, TestOpVariants::test_reduction_sum/TestOpVariants::test_reduction_mean/' "$tmp/v2.yaml"
expect_rc 0 "select --explain, one variant listed" "${sel2[@]}" --explain "$id"
one=$(sed -n 's/^    \([0-9]*\) kernel cases.*/\1/p' "$out")
[[ -n $two && -n $one && $one == "$with" && $two == "$without" ]] && ok ||
	bad "listed variants' cases: $two with mean and sum listed (want $without), $one with mean (want $with)"
# @ops(..., allowed_dtypes=...): PyTorch instantiates the test for those dtypes only, so its
# cases keep the OpInfo dtypes that are allowed
cat >"$tmp/v3.yaml" <<'YAML'
test_suite_config:
  files:
    - path: ${TORCH_ROOT}/test/test_op_variants.py
      tests:
        - names: [TestOpVariants::test_reduction]
          mode: mandatory_success
  global:
    supported_dtypes:
      - {name: float16, precision: {atol: 0.1, rtol: 0.1}}
      - {name: float32, precision: {atol: 0.01, rtol: 0.01}}
    supported_ops: [mean, sum]
YAML
sel3=("$exe" select --repo "$ex" --base HEAD~1 --head HEAD --specs "$tmp/v3.yaml")
expect_rc 0 "select --explain, every dtype" "${sel3[@]}" --explain "$id"
all_dt=$(sed -n 's/^    \([0-9]*\) kernel cases.*/\1/p' "$out")
sed -i 's/^    @ops(reduction_ops)$/    @ops(reduction_ops, allowed_dtypes=(torch.float32,))/' "$ex/test/test_op_variants.py"
grep -q "allowed_dtypes=(torch.float32,)" "$ex/test/test_op_variants.py" && ok ||
	bad "the generated test_reduction is not decorated @ops(reduction_ops) any more"
git -C "$ex" -c user.name=t -c user.email=t@t commit -qam "allow float32 only"
sel3=("$exe" select --repo "$ex" --base HEAD~2 --head HEAD --specs "$tmp/v3.yaml")
expect_rc 0 "select --explain, float32 allowed" "${sel3[@]}" --explain "$id"
f32=$(sed -n 's/^    \([0-9]*\) kernel cases.*/\1/p' "$out")
[[ -n $all_dt && -n $f32 && $f32 -gt 0 && $f32 -lt $all_dt ]] && ok ||
	bad "allowed_dtypes=(torch.float32,): $f32 cases, $all_dt without it (want fewer, not none)"

# a @parametrize variant of a device-generic test is decided by the variant rule, not as an op
cat >"$tmp/p.yaml" <<'YAML'
test_suite_config:
  files:
    - path: ${TORCH_ROOT}/test/test_op_variants.py
      unlisted_test_mode: skip
      tests:
        - names: [TestOpVariants::test_fn_name_fn_name_amax]
          mode: mandatory_success
  global:
    supported_ops: [mean]
YAML
python3 - "$ex/test/test_op_variants.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    def test_fn_name(self, device, fn_name):\n        self.assertTrue(fn_name)"
assert old in s
open(p, "w").write(s.replace(old, old.replace("assertTrue", "assertIsNotNone")))
PY
git -C "$ex" -c user.name=t -c user.email=t@t commit -qam "edit a parametrized test"
expect_rc 0 "select --explain, parametrize" "$exe" select --repo "$ex" --base HEAD~1 --head HEAD \
	--specs "$tmp/p.yaml" --explain test/test_op_variants.py::TestOpVariants::test_fn_name
cp "$out" "$tmp/explain2"
check "the listed value runs" grep -q "^      fn_name_amax: eligible, mode mandatory_success, entry at $tmp/p.yaml:6" "$tmp/explain2"
check "the other is unlisted" grep -q "^      fn_name_amin: not eligible, mode skip, the file's unlisted mode" "$tmp/explain2"

# a truth that says one variant too many is caught
up=$tmp/up1
sed -i '0,/"variants":\["/s//"variants":["bogus_variant","/' "$up/.ground_truth/variants.jsonl"
expect_rc 1 "a wrong truth is caught" python3 "$script" --repo "$up"
summary
