#!/usr/bin/env bash
# Runs the independent PyTorch probe (probe_reference.py) with Debian's PyTorch, installed here if
# missing. Arguments go to the script: RUN_FOLDER [--seed S] [--features F,G] [--threads N].
set -euo pipefail
cd "$(dirname "$0")"
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-torch ||
        { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-torch; }
fi
exec /usr/bin/python3 probe_reference.py "$@"
