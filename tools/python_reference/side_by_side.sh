#!/usr/bin/env bash
# Runs `nopescope-cli bench` and the PyTorch reference of the same step alternately, ROUNDS times
# each (default 2), on the same shape and dropout, and prints every figure and the ratios:
#   tools/python_reference/side_by_side.sh [--rounds N] [--cli PATH] [--precisions LIST] [shape flags...]
# Shape flags (passed to both): --layers N --dim N --heads N --batch N --window N --dropout X.
# --precisions fp32 (default fp32,bf16) compares fp32 only: on a CPU without bf16 instructions
# PyTorch's bf16 step of the quick shape takes about 40 s.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../python_torch.sh"
ensure_python_torch
rounds=2
cli="$here/../../build/app/nopescope-cli"
shape=()
precisions=fp32,bf16
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --cli) cli="$2"; shift 2 ;;
        --precisions) precisions="$2"; shift 2 ;;
        --layers|--dim|--heads|--batch|--window|--dropout) shape+=("$1" "$2"); shift 2 ;;
        *) echo "side_by_side.sh: unknown flag '$1' (allowed: --rounds, --cli, --precisions, --layers, --dim, --heads, --batch, --window, --dropout)" >&2; exit 2 ;;
    esac
done
lscpu | grep -m1 "Model name" || true
echo "shape: ${shape[*]:-defaults}"
for ((r = 1; r <= rounds; ++r)); do
    tool=$("$cli" bench --json --threads 2 --analysis-samples 8 "${shape[@]}")
    ref=$(/usr/bin/python3 "$here/bench_nanogpt.py" --json --threads 2 --precisions "$precisions" "${shape[@]}")
    /usr/bin/python3 - "$r" "$tool" "$ref" <<'PY'
import json, sys
r, tool, ref = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
for p in ("fp32", "bf16"):
    if f"{p}_tokens_per_s" not in ref:
        continue
    t, q = tool[f"{p}_tokens_per_s"], ref[f"{p}_tokens_per_s"]
    frac = tool.get(f"{p}_fraction_of_gemm")
    extra = f", {100 * frac:.0f}% of the matrix products' {tool[f'{p}_gemm_gflops']:.0f} GFLOP/s" if frac else ""
    print(f"round {r} {p}: NoPEScope {t:,.0f} tok/s, PyTorch {q:,.0f} tok/s, ratio {t / q:.2f}{extra}")
PY
done
