#!/usr/bin/env bash
# Writes tests/data/nanogpt_{ckpt.pt,state_dict.pt,reference.json} with Debian's PyTorch
# (installed here if missing). Pass another folder to write there instead.
set -euo pipefail
cd "$(dirname "$0")"
source ../python_torch.sh
ensure_python_torch
exec /usr/bin/python3 make_checkpoint.py "$@"
