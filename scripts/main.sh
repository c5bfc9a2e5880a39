#!/usr/bin/env bash
# The main job of the README: installs what is missing, builds, and runs the most complete flow
# spyre-ci has today, a tour of spyre-emu, the Spyre emulator that runs the kernel cases. It
# grows with the project (the end state is `spyre-ci demo`). Idempotent; writes its artifacts
# (a Chrome trace of the modeled schedule) to build/tour/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages
configure_and_build build
exe=build/relay/spyre-ci
out=build/tour
mkdir -p "$out"
step() {
	echo
	echo "\$ spyre-ci $*"
	"$exe" "$@"
}

echo "== spyre-emu: what the kernel tests that spyre-ci selects run on"
step emu hw
step emu layout --shape 5x100x150 --dtype float16
step emu run --op add --shape 67x256 --shape 256 --dtype float16 --cores 8
step emu run --op softmax --shape 67x2880 --dtype float16 --cores 32
step emu plans --op softmax --shape 256x2880 --dtype float16 --cores 8
step emu plans --op mm --shape 63x2880 --shape 2880x64 --dtype float16
step emu plans --op transpose --shape 1024x1024 --dtype float16
step emu run --op scaled_dot_product_attention --shape 4x256x128 --shape 4x256x128 \
	--shape 4x256x128 --dtype float16 --causal
step emu run --op swiglu_mlp --shape 64x256 --shape 256x1024 --shape 256x1024 \
	--shape 1024x256 --dtype float16 --trace "$out/swiglu_mlp.trace.json"
step emu plans --op swiglu_mlp --shape 64x256 --shape 256x1024 --shape 256x1024 \
	--shape 1024x256 --dtype float16
echo
echo "The modeled schedule of the fused MLP is in $out/swiglu_mlp.trace.json:"
echo "open it in https://ui.perfetto.dev (one process per core, one track per unit)."
