# Shared by the CLI checks (sourced, not run): a scratch directory removed on exit, the pass and
# fail counts, and the checks every script uses. The script sets `cli_name` (its name in the
# summary and the scratch directory's) and, for usage_error, `cli_sub` (the subcommand).
# The interpreter itself, found once: a version manager's shim (pyenv's python3 is a bash
# script) costs a quarter of a second per start, and these checks start Python hundreds of times.
if ! py_exe=$(command python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || [[ -z $py_exe ]]; then
	echo "${cli_name}: python3 is not installed" >&2
	exit 1
fi
python3() { "$py_exe" "$@"; }
export -f python3 2>/dev/null || true
tmp=$(mktemp -d "/tmp/${cli_name}.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}
# check description command...: passes when the command succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok; else bad "$what"; fi
}
# expect_rc want-rc description command...: stdout in $out, stderr in $err.
expect_rc() {
	local want=$1 what=$2
	shift 2
	"$@" >"$out" 2>"$err"
	local rc=$?
	if [[ $rc == "$want" ]]; then ok; else
		bad "$what: exit $rc, want $want"
		head -c 1000 "$out" "$err" >&2
	fi
}
# usage_error description pattern args...: `spyre-ci $cli_sub args...` exits 2 and its stderr
# matches the pattern.
usage_error() {
	local what=$1 pat=$2
	shift 2
	expect_rc 2 "$what" "$exe" "$cli_sub" "$@"
	grep -Eq -- "$pat" "$err" && ok || bad "$what: stderr lacks /$pat/: $(head -c 300 "$err")"
}
# py FILE EXPR: the python expression with d = the JSON in FILE; passes when true.
py() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2].strip() + ")") else 1)' "$1" "$2"
}
# summary: the closing line; the script's exit status.
summary() {
	echo "$cli_name: $pass passed, $fail failed"
	[[ $fail == 0 ]]
}
