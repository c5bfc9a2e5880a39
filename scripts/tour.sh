#!/usr/bin/env bash
# A tour of the pieces one by one, each command printed before it runs: a PyTorch-shaped
# upstream is generated, the selector picks the upstream tests a commit can affect and maps them
# through the Spyre specs onto kernel cases, the specs explain one decision, and spyre-emu runs
# kernels and shows its plans. Installs what is missing and builds first. Idempotent: it writes
# everything under build/tour/ afresh. (The whole flow, daemon and dashboard included, is
# scripts/main.sh: `spyre-ci demo`.)
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

rm -rf "$out/upstream"
echo "== a synthetic upstream shaped like PyTorch (torch/, test/, op database, native ops, specs)"
step fixture upstream --out "$out/upstream" --scale small --seed 1
up="$out/upstream"
# A commit that edits a torch/ function body: the selector must trace it to the tests using it.
# Take the newest such commit whose selection reaches Spyre's specs (some reach none).
rev=
for c in $(git -C "$up" log --format='%h %s' | awk '$2 == "src_body:" {print $1}'); do
	n=$("$exe" select --repo "$up" --base "$c~1" --head "$c" --json |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["stages"][2]["out"])')
	if [[ $n -gt 0 ]]; then
		rev=$c
		break
	fi
done
[[ -n $rev ]] || rev=$(git -C "$up" log --format=%h -1)
echo
echo "== the four stages for commit $rev ($(git -C "$up" log -1 --format=%s "$rev"))"
step select --repo "$up" --base "$rev~1" --head "$rev"
echo
echo "== the same as JSON, the funnel only"
"$exe" select --repo "$up" --base "$rev~1" --head "$rev" --json |
	python3 -c 'import json, sys; d = json.load(sys.stdin); print(json.dumps(d["stages"]))'
echo
echo "== how a spec decides: a device-generic test against the shipped specs"
step specs explain --test \
	test/test_binary_ufuncs.py::TestBinaryUfuncsPRIVATEUSE1::test_reference_numerics_add_spyre_float16 \
	testspecs/specs
echo
echo "== spyre-emu: what the kernel cases run on"
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
