#!/usr/bin/env bash
# The test command of the README: installs what is missing, builds into build/, runs every
# test (unit suites, CLI checks, fuzz-corpus replays, the smoke benchmark), and ends with one
# line "N passed, M failed". Idempotent: a second run only rebuilds what changed.
# Extra arguments go to `meson test` (for example `--suite unit`).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages
dir=${BUILD_DIR:-build}
configure_and_build "$dir" ${MESON_SETUP_ARGS:-}
rc=0
# Long runs (exhaustive numerics, soak) are opt-in: `scripts/test.sh --suite long` (the
# default test setup in meson.build leaves them out).
# Twice as many tests at a time as cores: many of them wait on a daemon, a socket or a timer
# rather than compute (measured on 2 cores: 103 s with 4 at a time, 114 s with 2).
meson test -C "$dir" --print-errorlogs --num-processes "$((2 * $(nproc)))" "$@" || rc=$?
summarize "$dir"
exit "$rc"
