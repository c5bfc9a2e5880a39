#!/usr/bin/env bash
# Test variants by execution: the generated upstream's test/test_op_variants.py is imported
# under plain python3 and the test methods its instantiation creates (tests/tools/
# variants_exec.py) are exactly .ground_truth/variants.jsonl, which the catalog equals test by
# test (tests/unit/selector/fixture_variants.c).
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
# a truth that says one variant too many is caught
up=$tmp/up1
sed -i '0,/"variants":\["/s//"variants":["bogus_variant","/' "$up/.ground_truth/variants.jsonl"
expect_rc 1 "a wrong truth is caught" python3 "$script" --repo "$up"
summary
