#!/usr/bin/env bash
# Installs the Debian packages NoPEScope needs to build, test, package and run, and only the missing
# ones. Packages named as arguments are added (scripts/fuzz.sh adds clang's).
# Uses sudo when not run as root. Safe to run again: it does nothing when everything is there.
set -euo pipefail

packages=(
    # toolchain
    cmake g++ make clang-format
    # science: LibTorch (CPU) with an optimized BLAS and oneDNN's GEMM
    libtorch-dev libopenblas0-openmp libdnnl-dev nlohmann-json3-dev zlib1g-dev
    # data-parallel training: the headers of Gloo, the collective library LibTorch links
    libgloo-dev
    # desktop: Qt 6 Widgets and QCustomPlot
    qt6-base-dev qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6 fonts-dejavu-core
    # tests (groff typesets the generated man page in Docs.ManPageIsRoffThatManReads)
    libgtest-dev groff-base
    # the Debian package (scripts/package.sh): CPack's dependency lookup runs dpkg-shlibdeps and file
    dpkg-dev file
    "$@"
)

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi

echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
