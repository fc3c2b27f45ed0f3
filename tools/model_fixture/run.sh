#!/usr/bin/env bash
# Writes tests/data/model_fixture.pt with Debian's PyTorch (installed here if missing). Pass
# another folder to write there instead.
set -euo pipefail
cd "$(dirname "$0")"
source ../python_torch.sh
ensure_python_torch
exec /usr/bin/python3 make_fixture.py "$@"
