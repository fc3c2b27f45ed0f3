#!/usr/bin/env bash
# Runs the independent PyTorch probe (probe_reference.py) with Debian's PyTorch, installed here if
# missing. Arguments go to the script: RUN_FOLDER [--seed S] [--features F,G] [--threads N].
set -euo pipefail
cd "$(dirname "$0")"
source ../python_torch.sh
ensure_python_torch
exec /usr/bin/python3 probe_reference.py "$@"
