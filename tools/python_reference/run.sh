#!/usr/bin/env bash
# Runs the PyTorch reference benchmark with Debian's PyTorch (installed here if missing), for a
# side-by-side comparison with `nopescope-cli bench` on the same machine.
set -euo pipefail
cd "$(dirname "$0")"
source ../python_torch.sh
ensure_python_torch
exec /usr/bin/python3 bench_nanogpt.py "$@"
