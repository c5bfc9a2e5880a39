#!/usr/bin/env bash
# The emulator's benchmark at full sizes: builds build/ (installing nothing new: the packages,
# libopenblas-dev among them, are scripts/lib.sh's list) and runs build/tests/bench/bench-emu,
# which prints every figure beside its floor measured in the same run (OpenBLAS sgemm on one
# thread, plain C loops) and their ratios. Extra arguments go to bench-emu (for example --json,
# --cores 8, --part mm). Takes about a minute on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages
dir=${BUILD_DIR:-build}
configure_and_build "$dir" ${MESON_SETUP_ARGS:-}
bench="$dir/tests/bench/bench-emu"
if [[ ! -x $bench ]]; then
	echo "bench.sh: $bench was not built (configured with -Dbench=false?)" >&2
	exit 1
fi
exec "$bench" "$@"
