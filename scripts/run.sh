#!/usr/bin/env bash
# Installs what is missing, builds, and opens the NoPEScope window. Extra arguments go to it.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh
build_dir=${NOPESCOPE_BUILD_DIR:-build}
exec "$build_dir/app/nopescope" "$@"
