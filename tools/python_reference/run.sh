#!/usr/bin/env bash
# Runs the PyTorch reference benchmark with Debian's PyTorch (installed here if missing), for a
# side-by-side comparison with `nopescope-cli bench` on the same machine.
set -euo pipefail
cd "$(dirname "$0")"
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-torch
fi
exec /usr/bin/python3 bench_nanogpt.py "$@"
