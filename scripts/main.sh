#!/usr/bin/env bash
# The main job of the README: installs what is missing, builds, and runs `spyre-ci demo`: a
# sample upstream shaped like PyTorch, the daemon on a free loopback port with its own dashboard
# as the target, an ordinary commit and one that breaks a kernel case on purpose, each job
# followed from delivery to the dashboard page.
#   scripts/main.sh          serves the dashboard until Ctrl-C (the URL is printed)
#   scripts/main.sh --once   non-interactive: exits 0 once the first job's `completed` report
#                            reached the dashboard, 1 with the reason otherwise
# State lives in build/demo/ and is reused by the next run. Other arguments go to `spyre-ci demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages
configure_and_build build
once=0
for a in "$@"; do [[ $a == --once ]] && once=1; done
if ((once == 0)); then
	echo "spyre-ci demo: serving the dashboard until Ctrl-C (scripts/main.sh --once exits by itself)"
fi
start=$(date +%s)
rc=0
build/relay/spyre-ci demo --state build/demo "$@" || rc=$?
if ((once == 1)); then
	echo "scripts/main.sh --once: exit $rc after $(($(date +%s) - start)) s (after the build)"
fi
exit "$rc"
