#!/usr/bin/env bash
# Checks `nopescope-cli mechanism ablate` against the independent PyTorch reference
# (ablation_reference.py) with Debian's PyTorch, installed here if missing. Arguments go to the
# script: [--cli PATH] [--task T] [--samples N] [--as-authors] [--work DIR] [--reference-only]
# [--layers L --heads H --dim C --context T] [--seed S]. Relative paths are the caller's.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../python_torch.sh"
ensure_python_torch
exec /usr/bin/python3 "$here/ablation_reference.py" "$@"
