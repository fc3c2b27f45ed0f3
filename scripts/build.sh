#!/usr/bin/env bash
# Configures and builds NoPEScope in ./build (Release). Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${NOPESCOPE_BUILD_DIR:-build}
jobs=${NOPESCOPE_JOBS:-$(nproc)}

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$jobs"
