#!/usr/bin/env bash
# Checks `spyre-ci select` on the synthetic upstream (`spyre-ci fixture upstream --scale small
# --seed 3`): over the last commits of its history, the JSON has exactly four stages with name,
# in and out, each stage's in is the previous stage's out, every test has exactly id, score,
# reasons and kernel_cases, the truly affected eligible tests of the ground truth are all
# selected (recall), budgets and shards hold, --diff - gives what --base/--head gives, a test
# named in a commit message (or a mail's) is selected for it, --cases lists the cases --json
# counts, and the
# exit codes are 0/1/2 with a message on every usage error.
# Usage: select.sh PATH/TO/spyre-ci
set -u
cli_name=select-cli cli_sub=select
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$(realpath "$1") || exit 1
up=$tmp/up

# seed 3: the budget checks below need a first-ranked test estimated under 3 s
"$exe" fixture upstream --out "$up" --scale small --seed 3 >/dev/null || {
	echo "select-cli: the generator failed" >&2
	exit 1
}

SHAPE='[s["name"] for s in d["stages"]] == ["changes", "impact", "eligibility", "budget"]
 and all(sorted(s) == ["in", "name", "out"] for s in d["stages"])
 and all(d["stages"][i]["in"] == d["stages"][i - 1]["out"] for i in (2, 3))
 and d["stages"][0]["in"] == d["stages"][1]["in"]
 and d["stages"][3]["out"] == len(d["tests"])
 and all(sorted(set(t) - {"case_sources"}) == ["id", "kernel_cases", "reasons", "score"]
         for t in d["tests"])
 and all(sum(t.get("case_sources", {}).values()) <= t["kernel_cases"] for t in d["tests"])
 and all(t["reasons"] and "::" in t["id"] and not t["id"].startswith("/") for t in d["tests"])
 and isinstance(d["drift"], list) and isinstance(d["fallback"]["active"], bool)'

# Every eligible test, from a change the analysis must answer with everything.
printf 'diff --git a/setup.py b/setup.py\n--- a/setup.py\n+++ b/setup.py\n@@ -1 +1 @@\n-a\n+b\n' \
	>"$tmp/setup.diff"
expect_rc 0 "fallback diff" "$exe" select --repo "$up" --diff "$tmp/setup.diff" --json
cp "$out" "$tmp/all.json"
check "fallback shape" py "$tmp/all.json" "$SHAPE"
check "fallback says why" py "$tmp/all.json" \
	'd["fallback"]["active"] and "setup.py" in d["fallback"]["reason"]
	 and d["stages"][1]["out"] == d["stages"][1]["in"] and d["stages"][2]["out"] > 0'

# The last commits of the first-parent history, each against the ground truth.
git -C "$up" rev-list --first-parent -n 16 HEAD >"$tmp/commits"
n=0 narrow=0
while read -r c; do
	git -C "$up" rev-parse -q --verify "$c^" >/dev/null || continue
	expect_rc 0 "select $c" "$exe" select --repo "$up" --base "$c^" --head "$c" --json
	check "shape $c" py "$out" "$SHAPE"
	cp "$out" "$tmp/one.json"
	check "recall $c" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); allj = json.load(open(sys.argv[2]))
truth = [json.loads(l) for l in open(sys.argv[3])]
t = next(x for x in truth if x["id"] == sys.argv[4])
eligible = {x["id"] for x in allj["tests"]}
chosen = {x["id"] for x in d["tests"]}
want = eligible if t["affected_all"] else set(t["affected"]) & eligible
missing = want - chosen
if t["fallback"] and not d["fallback"]["active"]:
    sys.exit("ground truth says fallback, the selector did not")
sys.exit(sorted(missing)[:3] if missing else 0)' "$out" "$tmp/all.json" \
		"$up/.ground_truth/commits.jsonl" "$c"
	py "$out" 'not d["fallback"]["active"] and 0 < len(d["tests"]) < d["stages"][2]["in"]' &&
		narrow=$((narrow + 1))
	n=$((n + 1))
done <"$tmp/commits"
check "commits checked" test "$n" -ge 10
check "some commits select a few tests without the fallback" test "$narrow" -ge 1

# The same change as a diff on stdin: the same catalog, and at least the tests --base/--head
# selects.
head_c=$(git -C "$up" rev-parse HEAD)
expect_rc 0 "head commit" "$exe" select --repo "$up" --base HEAD~1 --head HEAD --json
cp "$out" "$tmp/git.json"
git -C "$up" diff HEAD~1 HEAD >"$tmp/head.diff"
expect_rc 0 "diff on stdin" bash -c "'$exe' select --repo '$up' --diff - --json <'$tmp/head.diff'"
check "diff = git" python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a["stages"][0] == b["stages"][0] and
         {t["id"] for t in a["tests"]} <= {t["id"] for t in b["tests"]} else 1)' \
	"$tmp/git.json" "$out"

# A diff's two sides come from the repository by the blob ids of its `index` lines: one test
# body edited in a clone selects that test through --diff exactly as through --base/--head
# (not its whole file), the reverse patch too (HEAD is then its pre-image), and a diff whose
# blobs the repository lacks counts the file's tests whole (the safe side).
git clone -q "$up" "$tmp/clone"
tf=$(cd "$tmp/clone" && grep -l "^    def test_" test/*.py test/*/*.py 2>/dev/null | head -1)
python3 - "$tmp/clone/$tf" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("    def test_"))
lines.insert(i + 1, "        spyre_ci_edited = 1")
open(p, "w").write("\n".join(lines))
PY
git -C "$tmp/clone" -c user.name=t -c user.email=t@t commit -qam "edit one test body"
n_file=$(python3 -c '
import re, sys
src = open(sys.argv[1]).read()
print(len(re.findall(r"^    def test_", src, re.M)))' "$tmp/clone/$tf")
check "the edited file has several tests" test "$n_file" -ge 3
diff_vs_git() { # description git-diff-args select-range-args...
	local what=$1 range=$2
	shift 2
	expect_rc 0 "$what: git" "$exe" select --repo "$tmp/clone" "$@" --json
	cp "$out" "$tmp/range.json"
	git -C "$tmp/clone" diff -M -C --find-copies-harder $range >"$tmp/one.diff"
	expect_rc 0 "$what: diff" "$exe" select --repo "$tmp/clone" --diff "$tmp/one.diff" --json
	check "$what: the same impact" python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a["stages"][:2] == b["stages"][:2] and a["stages"][1]["out"] >= 1 else 1)' \
		"$tmp/range.json" "$out"
}
diff_vs_git "edited test" "HEAD~1 HEAD" --base HEAD~1 --head HEAD
check "edited test: not the whole file" py "$tmp/range.json" \
	"d[\"stages\"][1][\"out\"] < $n_file"
diff_vs_git "reverse patch" "HEAD HEAD~1" --base HEAD --head HEAD~1
git -C "$tmp/clone" diff HEAD~1 HEAD |
	sed 's/^index [0-9a-f]*\.\.\([0-9a-f]*\)/index 1234567..\1/' >"$tmp/unknown.diff"
expect_rc 0 "unknown base blob" "$exe" select --repo "$tmp/clone" --diff "$tmp/unknown.diff" --json
check "unknown base blob: the whole file" py "$out" "d[\"stages\"][1][\"out\"] >= $n_file"

# A commit with a mode-only change (no `index` line), a whole rename (none either), a copy and a
# renamed file with an edit: --diff in both directions selects what --base/--head selects.
mapfile -t tfs < <(cd "$tmp/clone" && ls test/test_*.py | head -4)
chmod +x "$tmp/clone/${tfs[1]}"
git -C "$tmp/clone" mv "${tfs[2]}" test/test_spyre_moved_whole.py
git -C "$tmp/clone" mv "${tfs[3]}" test/test_spyre_moved_edited.py
printf '\n# edited\n' >>"$tmp/clone/test/test_spyre_moved_edited.py"
cp "$tmp/clone/${tfs[0]}" "$tmp/clone/test/test_spyre_copy.py"
git -C "$tmp/clone" add -A
git -C "$tmp/clone" -c user.name=t -c user.email=t@t commit -qm "mode, renames, a copy"
diff_vs_git "renames and a copy" "HEAD~1 HEAD" --base HEAD~1 --head HEAD
diff_vs_git "renames and a copy, reversed" "HEAD HEAD~1" --base HEAD --head HEAD~1
# The same patch against a repository that lacks its blobs (a pull request not fetched): the
# renamed and edited file's new blob is unknown, so every test of it counts.
git clone -q "$up" "$tmp/bare-side"
git -C "$tmp/clone" diff -M -C --find-copies-harder HEAD~1 HEAD >"$tmp/one.diff"
expect_rc 0 "unfetched patch" "$exe" select --repo "$tmp/bare-side" --diff "$tmp/one.diff" --json
n_lost=$(grep -c "^    def test_" "$tmp/bare-side/${tfs[3]}")
check "unfetched patch: the file whose blob is unknown counts whole" py "$out" \
	"d[\"stages\"][1][\"out\"] >= $n_lost > 0"

# Text: the funnel on the first line.
expect_rc 0 "text" "$exe" select --repo "$up" --diff "$tmp/setup.diff"
check "funnel line" grep -Eq \
	'^[0-9,]+ tests -> [0-9,]+ impacted -> [0-9,]+ eligible -> [0-9,]+ scheduled \(est\. [0-9.]+ s\)$' \
	<(head -1 "$out")

# Budgets and shards.
expect_rc 0 "budget 5" "$exe" select --repo "$up" --diff "$tmp/setup.diff" --budget 5 --json
check "budget 5 keeps 5" py "$out" 'd["stages"][3]["out"] == 5 and len(d["tests"]) == 5'
expect_rc 0 "budget 10%" "$exe" select --repo "$up" --diff "$tmp/setup.diff" --budget 10% --json
check "budget 10%" py "$out" \
	'd["stages"][3]["out"] == -(-d["stages"][3]["in"] // 10)'
expect_rc 0 "budget 3s" "$exe" select --repo "$up" --diff "$tmp/setup.diff" --budget 3s --json
check "budget 3s" py "$out" 'd["estimate_seconds"] <= 3.0 and d["stages"][3]["out"] > 0'
expect_rc 0 "shards" "$exe" select --repo "$up" --diff "$tmp/setup.diff" --shards 3 --json
check "shards cover the tests once" py "$out" \
	'len(d["shards"]) == 3 and sorted(i for s in d["shards"] for i in s["tests"])
	 == sorted(t["id"] for t in d["tests"])
	 and max(s["seconds"] for s in d["shards"]) - min(s["seconds"] for s in d["shards"]) < 5'

# --history: a failed test rises to the top with its recorded duration; a flaky one sinks.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); ids = [t["id"] for t in d["tests"]]
json.dump({ids[-1]: {"failed_before": True, "mean_seconds": 42.0},
           ids[0]: {"flaky": True}}, open(sys.argv[2], "w"))
open(sys.argv[3], "w").write(ids[-1] + "\n" + ids[0] + "\n")' "$tmp/all.json" "$tmp/hist.json" \
	"$tmp/hist.ids"
expect_rc 0 "history" "$exe" select --repo "$up" --diff "$tmp/setup.diff" \
	--history "$tmp/hist.json" --json
check "history ranks" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2]))
failed, flaky = open(sys.argv[3]).read().split()
ids = [t["id"] for t in d["tests"]]
sys.exit(0 if ids[0] == failed and ids[-1] == flaky and
         abs(d["estimate_seconds"] - a["estimate_seconds"] - 41.5) < 0.6 else 1)' \
	"$out" "$tmp/all.json" "$tmp/hist.ids"
echo '[1, 2]' >"$tmp/bad-hist.json"
usage_error "bad history" "--history" --repo "$up" --diff "$tmp/setup.diff" \
	--history "$tmp/bad-hist.json"

# Drift: a spec naming a test that does not exist (stale), and a new test under an unlisted
# mode (the fixture's own specs, the head's test file renamed into a listed path is too rare to
# count on, so only the stale kind is forced here).
mkdir -p "$tmp/specs"
f0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tests"][0]["id"])' \
	"$tmp/all.json")
cls=${f0#*::}
cat >"$tmp/specs/drift.yaml" <<YAML
test_suite_config:
  files:
    - path: \${TORCH_ROOT}/${f0%%::*}
      unlisted_test_mode: skip
      tests:
        - names: [${cls%%::*}::test_no_such_thing, ${cls}]
YAML
expect_rc 0 "drift specs dir" "$exe" select --repo "$up" --diff "$tmp/setup.diff" \
	--specs "$tmp/specs" --json
check "drift names the stale entry" py "$out" \
	'[x["test"] for x in d["drift"] if x["kind"] == "stale"] == ["'"${cls%%::*}"'::test_no_such_thing"]
	 and [t["id"] for t in d["tests"]] == ["'"$f0"'"] and d["stages"][2]["out"] == 1'

# --explain: a scheduled test (exit 0, four stages), a stranger (exit 1).
tid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tests"][0]["id"])' \
	"$tmp/all.json")
expect_rc 0 "explain" "$exe" select --repo "$up" --diff "$tmp/setup.diff" --explain "$tid"
check "explain stages" bash -c "grep -c '  stage [1-4] ' '$out' | grep -qx 4"
expect_rc 1 "explain stranger" "$exe" select --repo "$up" --diff "$tmp/setup.diff" \
	--explain test/none.py::T::test_x
check "explain stranger says so" grep -q "not a candidate" "$out"

# The message signal: a commit that changes no file but whose message names an eligible test
# (as a device-generic test's instantiated name when it is one) selects that test for that
# reason; the same message as a format-patch mail through --diff does too.
python3 -c 'import json,sys
print("\n".join(t["id"] for t in json.load(open(sys.argv[1]))["tests"] if t["id"].count("::") == 2))' \
	"$tmp/all.json" >"$tmp/ids"
while read -r mid; do
	mrest=${mid#*::}
	mcls=${mrest%%::*} mname=${mrest##*::}
	mword="$mcls.$mname"
	if git -C "$up" show "HEAD:${mid%%::*}" | grep -q "instantiate_device_type_tests($mcls,"; then
		mword="${mcls}CPU.${mname}_cpu_float32"
		break
	fi
done <"$tmp/ids"
mc=$(git -C "$up" -c user.name=t -c user.email=t@t commit-tree "HEAD^{tree}" -p HEAD \
	-m "Fix flaky \`$mword\`" -m "Seen on trunk.") || bad "commit-tree"
MSG_OK='[t["id"] for t in d["tests"]] == ["'"$mid"'"]
 and [r["kind"] for r in d["tests"][0]["reasons"]] == ["message"]
 and "'"$mword"'" in d["tests"][0]["reasons"][0]["text"]'
expect_rc 0 "message commit" "$exe" select --repo "$up" --base HEAD --head "$mc" --json
check "the message selects the test it names" py "$out" "$MSG_OK"
expect_rc 0 "message commit, text" "$exe" select --repo "$up" --base HEAD --head "$mc"
check "text output names the message reason" grep -q "message" "$out"
{
	printf 'From %s Mon Sep 17 00:00:00 2001\nFrom: t <t@t>\n' "$mc"
	printf 'Subject: [PATCH] Fix flaky\n `%s`\n\nSeen on trunk.\n---\n' "$mword"
	printf 'diff --git a/docs/msg.md b/docs/msg.md\nnew file mode 100644\n'
	printf -- '--- /dev/null\n+++ b/docs/msg.md\n@@ -0,0 +1 @@\n+x\n-- \n2.39.2\n'
} >"$tmp/msg.patch"
expect_rc 0 "message mail" "$exe" select --repo "$up" --diff "$tmp/msg.patch" --json
check "a mail's message selects the test it names" py "$out" "$MSG_OK"

# --explain shows the chain through a module-level helper of the test file: a test that calls
# `_spyre_ci_helper`, which calls a torch/ function that the next commit changes.
src=$(cd "$tmp/clone" && grep -l "^def [a-z_0-9]*(" $(git ls-files 'torch/*.py' | grep -v __init__) |
	grep -v testing/_internal | head -1)
fn=$(sed -n 's/^def \([a-z_0-9]*\)(.*/\1/p' "$tmp/clone/$src" | head -1)
mod=$(echo "${src%.py}" | tr / .)
printf '\nimport %s\n\ndef _spyre_ci_helper(x):\n    return %s.%s(x)\n\n' "$mod" "$mod" "$fn" \
	>>"$tmp/clone/$tf"
printf 'class TestSpyreCiHelper(TestCase):\n    def test_through_helper(self):\n' \
	>>"$tmp/clone/$tf"
printf '        _spyre_ci_helper(1)\n' >>"$tmp/clone/$tf"
git -C "$tmp/clone" -c user.name=t -c user.email=t@t commit -qam "a test through a helper"
sed -i "s/^def $fn(\(.*\)$/def $fn(\1\n    spyre_ci_changed = 1/" "$tmp/clone/$src"
git -C "$tmp/clone" -c user.name=t -c user.email=t@t commit -qam "change $mod.$fn"
expect_rc 0 "explain through a helper" "$exe" select --repo "$tmp/clone" --base HEAD~1 \
	--head HEAD --explain "$tf::TestSpyreCiHelper::test_through_helper"
check "explain shows the chain" grep -qF \
	"$tf::TestSpyreCiHelper::test_through_helper -> _spyre_ci_helper ($tf) -> $mod.$fn (changed)" \
	"$out"

# --cases: the scheduled tests' cases, one JSON line each, as many per test as --json counts.
expect_rc 0 "fallback --cases" "$exe" select --repo "$up" --diff "$tmp/setup.diff" --cases
check "--cases: one case a line, per test as --json counts" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
n = {}
for line in open(sys.argv[2]):
    c = json.loads(line)
    assert len(c["id"]) == 16 and c["test"] and c["op"], c
    n[c["test"]] = n.get(c["test"], 0) + 1
want = {t["id"]: t["kernel_cases"] for t in d["tests"] if t["kernel_cases"]}
sys.exit(0 if n == want and n else 1)' "$tmp/all.json" "$out"

# Usage and input errors: exit 2 with a message.
usage_error "--cases and --json" "--cases prints instead" --repo "$up" --diff - --cases --json
usage_error "no repo" "--repo DIR is required" --base HEAD~1 --head HEAD
usage_error "no range" "give --base REV --head REV" --repo "$up"
usage_error "diff and base" "excludes" --repo "$up" --diff - --base HEAD
usage_error "bad budget" "--budget" --repo "$up" --diff - --budget 5m
usage_error "bad shards" "--shards" --repo "$up" --diff - --shards 0
usage_error "unknown option" "unknown option" --repo "$up" --frobnicate 1
usage_error "unknown revision" "no-such-rev" --repo "$up" --base no-such-rev --head HEAD
usage_error "missing specs" "--specs .*none.yaml" --repo "$up" --base HEAD~1 --head HEAD --specs "$tmp/none.yaml"
printf 'garbage\n@@ nonsense\n' >"$tmp/bad.diff"
usage_error "malformed diff" "bad.diff" --repo "$up" --diff "$tmp/bad.diff"
expect_rc 0 "help" "$exe" select --help
check "help has examples" grep -q "^Examples:" "$out"

summary
