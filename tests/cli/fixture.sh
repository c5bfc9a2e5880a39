#!/usr/bin/env bash
# Checks `spyre-ci fixture upstream` as a user meets it: exit codes (0 written, 2 bad usage or a
# non-empty directory), a checked-out repository whose status is clean, the ground truth files,
# and the same head for the same seed.
# Usage: fixture.sh PATH/TO/spyre-ci
set -u
cli_name=fixture
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$1

expect_rc 2 "no action" "$exe" fixture
expect_rc 2 "unknown action" "$exe" fixture downstream
expect_rc 2 "no --out" "$exe" fixture upstream --seed 1
expect_rc 2 "no --seed" "$exe" fixture upstream --out "$tmp/a"
expect_rc 2 "bad scale" "$exe" fixture upstream --out "$tmp/a" --seed 1 --scale huge
expect_rc 2 "bad seed" "$exe" fixture upstream --out "$tmp/a" --seed -1
expect_rc 0 "small" "$exe" fixture upstream --out "$tmp/a" --seed 1 --commits 40 --json
grep -q '"commits":40' "$out" && ok || bad "--json does not say 40 commits"
head_a=$(git -C "$tmp/a" rev-parse HEAD)
[[ -z $(git -C "$tmp/a" status --porcelain) ]] && ok || bad "the checkout is not clean"
[[ $(wc -l <"$tmp/a/.ground_truth/commits.jsonl") == 40 ]] && ok || bad "commits.jsonl lines"
[[ -s $tmp/a/.ground_truth/tests.jsonl ]] && ok || bad "no tests.jsonl"
[[ -f $tmp/a/aten/src/ATen/native/native_functions.yaml ]] && ok || bad "no native_functions.yaml"
expect_rc 2 "a non-empty directory" "$exe" fixture upstream --out "$tmp/a" --seed 1
expect_rc 0 "again" "$exe" fixture upstream --out "$tmp/b" --seed 1 --commits 40 --no-checkout
[[ $(git -C "$tmp/b" rev-parse HEAD) == "$head_a" ]] && ok || bad "same seed, different head"

summary
