#!/usr/bin/env bash
# A real fuzzing session (not part of the test suite): builds every libFuzzer target with clang,
# ASan and UBSan into build-fuzz/, then fuzzes each for SECONDS (default 300) starting from its
# seed corpus. New interesting inputs go to build-fuzz/corpus/NAME; crashes to
# build-fuzz/artifacts/. To keep a reproducer, copy it into tests/fuzz/corpus/NAME/: the
# replay test then runs it forever after. Fixtures that double as seeds are listed in
# tests/fuzz/corpus/NAME/SEEDS rather than copied.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages libclang-rt-14-dev
secs=${1:-300}
shift || true
CC=clang configure_and_build build-fuzz -Dfuzz=true -Dbench=false
targets=("$@")
if ((${#targets[@]} == 0)); then
	for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi
mkdir -p build-fuzz/artifacts
for t in "${targets[@]}"; do
	mkdir -p "build-fuzz/corpus/$t"
	# Seed folders: the corpus itself and the fixtures its SEEDS file names (the replay test
	# reads the same list).
	seeds=("tests/fuzz/corpus/$t")
	if [[ -f tests/fuzz/corpus/$t/SEEDS ]]; then
		while IFS= read -r line; do
			[[ -z $line || $line == \#* ]] || seeds+=("tests/fuzz/corpus/$t/$line")
		done <"tests/fuzz/corpus/$t/SEEDS"
	fi
	echo "== fuzzing $t for ${secs}s"
	"build-fuzz/tests/fuzz/fuzz-$t" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix=build-fuzz/artifacts/"$t"- "build-fuzz/corpus/$t" "${seeds[@]}"
done
