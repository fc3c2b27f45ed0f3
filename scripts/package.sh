#!/usr/bin/env bash
# Builds NoPEScope (Release, without the tests) in ./build-pkg and makes the Debian package
# with CPack (cmake/Packaging.cmake); prints the .deb's path. Install it with
# `sudo apt-get install ./build-pkg/nopescope_*.deb`. Extra arguments go to the configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
build_dir=${NOPESCOPE_BUILD_DIR:-build-pkg}
jobs=${NOPESCOPE_JOBS:-$(nproc)}

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DNOPESCOPE_BUILD_TESTS=OFF "$@"
cmake --build "$build_dir" -j "$jobs"
rm -f "$build_dir"/nopescope_*.deb
(cd "$build_dir" && cpack -G DEB)
deb=$(ls "$build_dir"/nopescope_*.deb)
echo "package: $(realpath "$deb")"
