#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, end-to-end and the format check).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh
build_dir=${NOPESCOPE_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure -j "${NOPESCOPE_JOBS:-$(nproc)}"
