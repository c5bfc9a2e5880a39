#!/usr/bin/env bash
# The main job of the README: installs what is missing, builds, and runs the most complete
# flow that spyre-ci has today. It grows with the project (the end state is `spyre-ci demo`).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages
configure_and_build build
exe=build/relay/spyre-ci
echo "== spyre-ci --help"
"$exe" --help
