#!/usr/bin/env bash
# Writes tests/data/model_fixture.pt with Debian's PyTorch (installed here if missing). Pass
# another folder to write there instead.
set -euo pipefail
cd "$(dirname "$0")"
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-torch ||
        { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-torch; }
fi
exec /usr/bin/python3 make_fixture.py "$@"
