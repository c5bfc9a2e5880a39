#!/usr/bin/env bash
# The include rule (docs/architecture.md, "Who may include whom"): the repository keeps it, and
# the checker fails on a tree that breaks it (tests/fixtures/includes/: a room including a higher
# one, a private file of another room, an include that resolves to nothing).
# Usage: includes.sh ROOT
set -uo pipefail
root=$1
cli_name=includes
. "$(dirname "$0")/lib.sh"
check_py() { python3 "$root/tests/tools/includes.py" "$1"; }
has() { grep -Eq -- "$2" "$1" && ok || bad "$3: /$2/ not in $(head -c 600 "$1")"; }

expect_rc 0 "the repository keeps the include rule" check_py "$root"
has "$out" " 0 breaking the rule" "the checker counts what it read and broke"

expect_rc 1 "a tree that breaks the rule fails" check_py "$root/tests/fixtures/includes"
has "$err" 'low/src/up.c:2: #include "high/high.h": room low may not include room high' \
	"a room including a higher one, named with file:line"
has "$err" 'low/src/private.c:2: .*a private file of room high' "a private file of another room"
has "$err" 'low/src/none.c:2: #include "nowhere.h" resolves to no file' "an unresolved include"
has "$out" " 3 breaking the rule" "exactly the three breaks: the allowed includes pass"
summary
