#!/usr/bin/env bash
# Checks the spyre-ci command frame as a user meets it: help, version, exit codes, and that
# --help lists exactly the subcommands in the table (each answers `help NAME` and `NAME --help`).
# Usage: cli.sh PATH/TO/spyre-ci
set -u
cli_name=cli
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$1

expect_rc 0 "--help" "$exe" --help
grep -q '^Usage: spyre-ci' "$out" && ok || bad "--help has no Usage line"
grep -q 'Exit codes: 0 ok, 1 a run or check failed, 2 bad usage' "$out" && ok || bad "--help names no exit codes"
expect_rc 0 "--version" "$exe" --version
grep -Eq '^spyre-ci [0-9]+\.[0-9]+\.[0-9]+$' "$out" && ok || bad "--version format"
expect_rc 2 "no arguments" "$exe"
expect_rc 2 "unknown subcommand" "$exe" no-such-thing
grep -q "no subcommand 'no-such-thing'" $err && ok || bad "unknown subcommand message"
expect_rc 2 "unknown global option" "$exe" --frobnicate
expect_rc 2 "bad log level" "$exe" --log-level loud --help
expect_rc 2 "help for an unknown subcommand" "$exe" help no-such-thing

# Every listed subcommand has a help page, reached both ways; the list is sorted.
"$exe" --help | sed -n '/^Subcommands:$/,/^$/p' | awk 'NR>1 && NF {print $1}' >/tmp/cli.$$.list
sort -c /tmp/cli.$$.list 2>/dev/null && ok || bad "subcommands are not listed in sorted order"
while read -r name; do
	expect_rc 0 "help $name" "$exe" help "$name"
	[[ -s "$out" ]] && ok || bad "help $name printed nothing"
	expect_rc 0 "$name --help" "$exe" "$name" --help
done </tmp/cli.$$.list

rm -f /tmp/cli.$$.*
summary
