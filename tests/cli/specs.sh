#!/usr/bin/env bash
# Checks `spyre-ci specs` as a spec author meets it: every real torch-spyre config and every
# shipped spec lints clean (the shipped ones under --strict too); every broken file exits 2
# with the located line its EXPECTED entry names; explain's JSON keys and decisions for a
# listed, an unlisted and a device-generic test; list's JSON shape; list --upstream's cases
# against explain --upstream's; usage errors exit 2 with a message; and every example of the
# help page runs.
# Usage: specs.sh PATH/TO/spyre-ci SOURCE_ROOT
set -u
cli_name=specs-cli cli_sub=specs
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$(realpath "$1") || exit 1
cd "$2" || exit 1
unset TORCH_ROOT TORCH_DEVICE_ROOT

real=tests/fixtures/specs/real shipped=testspecs/specs broken=tests/fixtures/specs/broken
B=test/test_binary_ufuncs.py

# --- lint: real configs and shipped specs are clean, one by one and together.
for f in "$real"/*.yaml; do
	expect_rc 0 "lint $f" "$exe" specs lint "$f"
	check "lint $f prints nothing" test ! -s "$out"
done
for f in "$shipped"/*.yaml; do
	expect_rc 0 "lint --strict $f" "$exe" specs lint --strict "$f"
	check "lint --strict $f prints nothing" test ! -s "$out"
done
expect_rc 0 "lint --strict the shipped dir" "$exe" specs lint --strict "$shipped/"
expect_rc 0 "lint the real dir with roots" "$exe" specs lint --torch-root /src/pytorch \
	--device-root /src/torch-spyre "$real"
TORCH_ROOT=/src/pytorch TORCH_DEVICE_ROOT=/src/torch-spyre \
	expect_rc 0 "lint the real dir, roots from the environment" "$exe" specs lint "$real"

# --- lint: every broken file exits 2 with its located line.
n_broken=0
while IFS=$'\t' read -r name lc frag; do
	[[ -z $name || $name == \#* ]] && continue
	n_broken=$((n_broken + 1))
	f=$broken/$name
	strict=()
	[[ $name == *.strict.yaml ]] && strict=(--strict)
	expect_rc 2 "lint $name" "$exe" specs lint "${strict[@]}" "$f"
	if grep -F -- "$f:$lc: error: " "$out" | grep -qF -- "$frag"; then ok; else
		bad "lint $name: no line '$f:$lc: error: ...$frag...': $(head -c 300 "$out")"
	fi
done <"$broken/EXPECTED"
check "EXPECTED lists at least 30 broken files ($n_broken)" test "$n_broken" -ge 30
# the strict-only files are clean (warnings only) without --strict
expect_rc 0 "unknown key without --strict: a warning" "$exe" specs lint "$broken/unknown_key.strict.yaml"
check "the warning is printed" grep -q "unknown_key.strict.yaml:6:11: warning: unknown key 'mdoe'" "$out"
# one bad file among good ones still fails, and the good ones are still linted
expect_rc 2 "lint good and bad together" "$exe" specs lint "$shipped" "$broken/bad_mode.yaml"
check "only the bad file's line" test "$(wc -l <"$out")" -eq 1

# --- explain: keys and decisions.
keys='all(k in d for k in ("eligible", "mode", "dtypes", "ops", "entries", "reason", "cases",
	"labels", "tags", "listed")) and all(k in e for e in d["entries"] for k in ("file", "line",
	"col", "role"))'
expect_rc 0 "explain a listed test" "$exe" specs explain --test "$B::TestBinaryUfuncs::test_add" \
	"$shipped" --json
check "explain json keys" py "$out" "$keys"
check "listed: eligible, mandatory_success, its entry at binary_ufuncs.yaml:64" py "$out" '
	d["eligible"] and d["listed"] and d["mode"] == "mandatory_success" and
	any(e["role"] == "entry" and e["file"].endswith("binary_ufuncs.yaml") and
	    e["line"] == 64 and e["col"] == 15 for e in d["entries"]) and
	"float16" in d["dtypes"] and "float64" not in d["dtypes"]'
check "listed: its sample_inputs_func case" py "$out" '
	len(d["cases"]) == 1 and d["cases"][0]["op"] == "add" and
	d["cases"][0]["shapes"] == [[67, 256], [67, 256]] and d["cases"][0]["dtype"] == "float16" and
	d["cases"][0]["atol"] == 0.1 and d["rule"] == "sample_inputs_func"'
expect_rc 0 "explain an unlisted test" "$exe" specs explain --test "$B::TestBinaryUfuncs::test_nothing" \
	"$shipped" --json
check "unlisted: the file's unlisted_test_mode skip, not eligible, no case" py "$out" '
	not d["eligible"] and not d["listed"] and d["mode"] == "skip" and d["cases"] == [] and
	[e["role"] for e in d["entries"]] == ["file"]'
expect_rc 0 "explain a test of no file" "$exe" specs explain --test test/test_nothing.py::T::test_x \
	"$shipped" --json
check "no file: not eligible" py "$out" 'not d["eligible"] and d["entries"] == [] and
	"no file entry" in d["reason"]'
v=$B::TestBinaryUfuncsPRIVATEUSE1::test_reference_numerics_add_spyre_float16
expect_rc 0 "explain a PRIVATEUSE1 variant" "$exe" specs explain --test "$v" "$shipped" --json
check "variant: op add, float16 only, its entry" py "$out" '
	d["eligible"] and d["mode"] == "mandatory_success" and
	[o["name"] for o in d["ops"]] == ["add"] and d["variant_op"] == "add" and
	d["variant_dtype"] == "float16" and len(d["cases"]) >= 2 and
	all(c["op"] == "add" and c["dtype"] == "float16" for c in d["cases"]) and
	any(e["role"] == "entry" and e["what"] == "TestBinaryUfuncs::test_reference_numerics"
	    for e in d["entries"])'
v=$B::TestBinaryUfuncsPRIVATEUSE1::test_reference_numerics_pow_spyre_float16
expect_rc 0 "explain pow (per-op precision)" "$exe" specs explain --test "$v" "$shipped" --json
check "pow: float16 precision 0.04" py "$out" 'd["ops"][0]["precision"]["float16"]["atol"] == 0.04
	and all(c["atol"] == 0.04 for c in d["cases"])'
expect_rc 0 "explain in another tier" "$exe" specs explain --label smoke \
	--test "$B::TestBinaryUfuncs::test_pow" "$shipped" --json
check "label: dropped, not eligible" py "$out" 'not d["eligible"] and
	any(e["role"] == "label-dropped" for e in d["entries"])'
expect_rc 0 "explain --dtype --op" "$exe" specs explain --test "$B::TestBinaryUfuncs::test_broadcasting" \
	--dtype float16 --dtype float64 --op add --op sub "$shipped" --json
check "own dtypes and ops bound the decision" py "$out" 'd["eligible"] and
	d["dtypes"] == ["float16"] and [o["name"] for o in d["ops"]] == ["add", "sub"]'
expect_rc 0 "explain text" "$exe" specs explain --test "$B::TestBinaryUfuncs::test_add" "$shipped"
check "explain text names the entry" grep -q "binary_ufuncs.yaml:64:15  entry" "$out"

# --- list: JSON shape.
expect_rc 0 "list json" "$exe" specs list "$shipped" --json
check "list json shape" py "$out" 'all(k in d for k in ("cases", "unsupported", "not_mappable",
	"patterns")) and len(d["cases"]) > 100 and all(all(k in c for k in ("id", "test", "op",
	"shapes", "dtype", "atol", "rtol", "mode", "seed")) for c in d["cases"] + d["unsupported"])
	and all("why" in c for c in d["unsupported"])
	and len(set(c["id"] for c in d["cases"] + d["unsupported"])) ==
	    len(d["cases"]) + len(d["unsupported"])
	and all(0 <= c["seed"] < 2**53 for c in d["cases"])'
check "list: regex entries are patterns" py "$out" 'any(p["pattern"].endswith(
	"TestReductions::test_dim_multi.*") and p["mode"] == "xfail" for p in d["patterns"])'
check "list: a skipped test is not among the cases" py "$out" 'not any("test_float_domains" in
	c["test"] for c in d["cases"])'
expect_rc 0 "list --label smoke" "$exe" specs list "$shipped" --label smoke --json
cp "$out" "$tmp/smoke.json"
check "smoke is a strict subset" py "$tmp/smoke.json" 'len(d["cases"]) > 0 and
	not any("test_pow" in c["test"] for c in d["cases"]) and d["not_eligible"] == [] or
	all("skip" in x["reason"] for x in d["not_eligible"])'
expect_rc 0 "list --test" "$exe" specs list "$shipped" --json --test "$B::TestBinaryUfuncs::test_pow"
check "list --test: the two kernels: cases of test_pow" py "$out" '
	[c["op"] for c in d["cases"]] == ["pow", "pow", "pow", "pow"] and
	d["summary"]["tests"] == 1'
expect_rc 0 "list text" "$exe" specs list "$shipped/linalg.yaml"
check "list text summary" grep -Eq '^[0-9]+ tests, [0-9]+ cases \([0-9]+ unsupported\)' "$out"
expect_rc 2 "list of a broken file" "$exe" specs list "$broken/bad_mode.yaml"
check "list names the problem" grep -q "bad_mode.yaml:6:17: error" "$err"

# --- usage errors.
usage_error "no action" "action is missing"
usage_error "unknown action" "unknown action 'lnit'" lnit "$shipped"
usage_error "no files" "no spec FILE or DIR" lint
usage_error "unknown option" "unknown option '--frobnicate'" lint --frobnicate "$shipped"
usage_error "--strict on list" "--strict does not fit" list --strict "$shipped"
usage_error "--json on lint" "--json does not fit" lint --json "$shipped"
usage_error "--dtype on list" "--dtype does not fit" list --dtype float16 "$shipped"
usage_error "explain without --test" "exactly one --test" explain "$shipped"
usage_error "explain with two --test" "exactly one --test" explain --test a::b --test c::d "$shipped"
usage_error "--label without a value" "--label needs a value" list "$shipped" --label
usage_error "bad --dtype" "--dtype 'float17'" explain --test A::b --dtype float17 "$shipped"
usage_error "explain a bad id" "empty part" explain --test "A::::b" "$shipped"
usage_error "a missing file" "nope.yaml" lint "$tmp/nope.yaml"
expect_rc 0 "--help" "$exe" specs --help
check "help names every action" grep -q "explain --test ID" "$out"

# --- lint --upstream: torch-spyre's three checks on the generated upstream, with its own spec
# and the shipped ones: the golden output (the generated directory written as DIR). After a
# change to the generator, regenerate with: spyre-ci fixture upstream --out D --seed 1
# --commits 40; spyre-ci specs lint --upstream D D/spyre/specs testspecs/specs | sed "s|D|DIR|g"
golden=tests/fixtures/specs/upstream_lint.golden
expect_rc 0 "a generated upstream" "$exe" fixture upstream --out "$tmp/up" --seed 1 --commits 40
expect_rc 0 "lint --upstream" "$exe" specs lint --upstream "$tmp/up" "$tmp/up/spyre/specs" \
	"$shipped"
sed "s|$tmp/up|DIR|g" "$out" >"$tmp/got"
if diff -u "$golden" "$tmp/got" >"$tmp/diff"; then ok; else
	bad "lint --upstream differs from $golden: $(head -c 1500 "$tmp/diff")"
fi
check "the summary counts" grep -q "^upstream DIR: [0-9]* collectable tests; " "$tmp/got"
# models.yaml names ${TORCH_DEVICE_ROOT}, unset here: that file is left out and said so, with
# its error, and the files after it are still checked (the golden holds their findings).
check "a file that cannot load is named" grep -q "models.yaml: not checked against the upstream" "$err"
check "with its error" grep -q "models.yaml:[0-9]*:[0-9]*: error: .*TORCH_DEVICE_ROOT" "$err"
usage_error "--rev goes with --upstream" "--rev goes with --upstream" list --rev HEAD "$shipped"
usage_error "--cache goes with --upstream" "--cache goes with --upstream" explain --test A::b \
	--cache "$tmp/c" "$shipped"
usage_error "--rev fits only list and explain" "does not fit" lint --upstream "$tmp/up" \
	--rev HEAD "$shipped"

# --- explain --upstream: an @ops test's cases from the generated op database, checked against
# the generator's truth (.ground_truth/opinfos.jsonl) for the binary ops it has an entry for.
cat >"$tmp/ops.yaml" <<'YAML'
test_suite_config:
  files:
    - path: ${TORCH_ROOT}/test/test_op_variants.py
      unlisted_test_mode: mandatory_success
  global:
    supported_dtypes: [{name: float16}, {name: float32}]
    supported_ops: [add, sub, mul, div, maximum, minimum]
YAML
vid=test/test_op_variants.py::TestOpVariants::test_binary
# without --upstream the test's source is unknown, and the reason says so (not "not @ops")
expect_rc 0 "explain an eligible test without --upstream" "$exe" specs explain --test "$vid" \
	"$tmp/ops.yaml"
check "no --upstream: the reason asks for it" grep -q "source was not read (give --upstream DIR" "$out"
expect_rc 0 "explain --upstream" "$exe" specs explain --upstream "$tmp/up" --test "$vid" \
	"$tmp/ops.yaml"
check "explain --upstream says where the cases came from" grep -q "^from .*OpInfo" "$out"
check "explain --upstream names each op's entry" \
	grep -Eq "^  opinfo [a-z]+: BinaryUfuncInfo at torch/testing/_internal/" "$out"
expect_rc 0 "explain --upstream --json" "$exe" specs explain --upstream "$tmp/up" \
	--test "$vid" --json "$tmp/ops.yaml"
check "cases by source add up, each source as the truth says" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
truth = {}
for line in open(sys.argv[2]):
    t = json.loads(line)
    if t["variant"] is None:
        truth[t["name"]] = t
src = d["case_sources"]
assert sum(src.values()) == len(d["cases"]) > 0, src
for c in d["cases"]:
    t = truth.get(c["op"])
    want = ("the op'"'"'s default samples" if t is None else
            "OpInfo sample_inputs_func shapes" if t["shapes"] else "OpInfo dtypes")
    assert c["source"] == want, (c, want)
    if t and t["shapes"] and "why" not in c:
        shape = "(" + ", ".join(map(str, c["shapes"][0])) + ("," if len(c["shapes"][0]) == 1 else "") + ")"
        assert shape in t["shapes"].split(";"), (c, t)
        assert c["dtype"] in t["dtypes"].split(","), (c, t)
' "$out" "$tmp/up/.ground_truth/opinfos.jsonl"
expect_rc 0 "explain without --upstream" "$exe" specs explain --test "$vid" "$tmp/ops.yaml"
check "without --upstream no op database is known" bash -c '! grep -q "^  opinfo " "$1"' _ "$out"
usage_error "explain --upstream of no repository" "nope" explain --upstream "$tmp/nope" \
	--test "$vid" "$tmp/ops.yaml"
expect_rc 2 "--upstream of no repository" "$exe" specs lint --upstream "$tmp/nope" "$shipped"

# --- list --upstream: the tests of the generated upstream, each with the cases explain gives
# it (the property across select, run and the daemon too is tests/daemon/same_cases.py's).
expect_rc 0 "list --upstream" "$exe" specs list --upstream "$tmp/up" "$tmp/ops.yaml" --json
cp "$out" "$tmp/list_up.json"
check "list --upstream: the @ops test's cases come from the op database" py "$tmp/list_up.json" '
    any(c["test"] == "'"$vid"'" and c["source"].startswith("OpInfo") for c in d["cases"])
    and d["upstream"]["dir"] == "'"$tmp/up"'" and d["upstream"]["rev"] == "HEAD"
    and len(d["upstream"]["commit"]) == 40 and d["patterns"] == []'
expect_rc 0 "explain --upstream of the same test" "$exe" specs explain --upstream "$tmp/up" \
	--test "$vid" --json "$tmp/ops.yaml"
check "list --upstream and explain --upstream: the same case ids" python3 -c 'import json, sys
l, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
mine = sorted(c["id"] for c in l["cases"] + l["unsupported"] if c["test"] == sys.argv[3])
sys.exit(0 if mine and mine == sorted(c["id"] for c in e["cases"]) else 1)' \
	"$tmp/list_up.json" "$out" "$vid"
expect_rc 0 "list without --upstream" "$exe" specs list "$tmp/ops.yaml" --json
check "without --upstream the file's tests are not known" py "$out" 'd["cases"] == [] and len(d["patterns"]) == 0 and "upstream" not in d'
expect_rc 0 "list --upstream --rev --test" "$exe" specs list --upstream "$tmp/up" --rev HEAD~1 \
	--test "$vid" --test "$vid" --test test/test_op_variants.py::TestOpVariants::test_nope \
	--cache "$tmp/cache" "$tmp/ops.yaml"
check "--test: the test once, the unknown one not in the upstream" grep -Eq \
	"^1 tests, [1-9][0-9]* cases" "$out"
check "the unknown test named" grep -q "^  test/test_op_variants.py::TestOpVariants::test_nope  (--test)" "$out"
check "the revision named" grep -Eq "^upstream $tmp/up at HEAD~1 \(commit [0-9a-f]{12}\): [0-9]+ tests, 1 not in it" "$out"
check "--cache keeps the files read" test -d "$tmp/cache"
usage_error "list --upstream at no revision" "nope" list --upstream "$tmp/up" --rev nope "$tmp/ops.yaml"
usage_error "list --upstream of no repository" "nope" list --upstream "$tmp/nope" "$tmp/ops.yaml"

# --- every example of the help page runs (from the repository's root; /tmp/up is a scratch
# directory of ours).
n_ex=0
while IFS= read -r cmd; do
	n_ex=$((n_ex + 1))
	read -r -a words <<<"${cmd//\/tmp\/up/$tmp/ex}"
	expect_rc 0 "help example: $cmd" "$exe" "${words[@]:1}"
done < <("$exe" help specs | sed -n '/^Examples/,$p' | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
	grep -E '^ +spyre-ci ' | tr -s ' ')
check "the help has examples ($n_ex)" test "$n_ex" -ge 4

summary
