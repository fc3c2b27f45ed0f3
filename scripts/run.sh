#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the per-layer adjacency table of a
# randomly initialized NoPE model on the addition task. Extra arguments go to the command.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh
build_dir=${NOPESCOPE_BUILD_DIR:-build}
exec "$build_dir/app/nopescope-cli" analyze --task addition "$@"
