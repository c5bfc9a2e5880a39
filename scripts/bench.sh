#!/usr/bin/env bash
# The benchmarks at full size (the test suite runs only their --smoke versions). Each prints every
# figure beside a floor measured in the same run (OpenBLAS, plain loops, `git diff --name-only`)
# and the ratio; none asserts a time. Builds build/ first (installing nothing new: the packages
# are scripts/lib.sh's list).
# Usage: scripts/bench.sh [NAME...] [--json]
#   NAME: emu (spyre-emu vs OpenBLAS, 1,000 kernel cases; ~1 min), specs (spec load and resolve),
#   changes (stage 1 vs git diff), select (the selector at pytorch scale vs git diff; ~2 min),
#   select-eval (recall over 500 pytorch-scale commits; ~4 min), drain (10,000 messages from the
#   SQLite outbox to a loopback recorder vs raw keep-alive curl posts; ~30 s), run (every kernel
#   case of the shipped specs through the executor's pool on 2 workers; ~1 min), intake (webhook
#   deliveries vs a bare and a durable libmicrohttpd floor; ~1 min). Default: all of them.
#   Options starting with -- go to every benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages
dir=${BUILD_DIR:-build}
configure_and_build "$dir" ${MESON_SETUP_ARGS:-}
names=() opts=()
for a in "$@"; do
	if [[ $a == --* ]]; then opts+=("$a"); else names+=("$a"); fi
done
((${#names[@]})) || names=(emu specs changes select select-eval drain run intake)
rc=0
for n in "${names[@]}"; do
	bench="$dir/tests/bench/bench-$n"
	if [[ ! -x $bench ]]; then
		echo "bench.sh: no benchmark '$n' ($bench not built; configured with -Dbench=false?)" >&2
		rc=2
		continue
	fi
	echo "== bench-$n"
	"$bench" "${opts[@]}" || rc=1
done
exit "$rc"
