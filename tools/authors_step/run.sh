#!/usr/bin/env bash
# The authors' training step (authors_step.py) with Debian's PyTorch, installed here if missing.
#   run.sh               writes tests/data/authors_step.pt: builds test_training in build/ (or
#                        $BUILD_DIR), has its AuthorsStep test export the input (initial weights
#                        and batches as the trainer draws them), runs the authors' step on it
#   run.sh INPUT OUTPUT  runs the step on INPUT and writes OUTPUT (paths from the caller's folder)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../python_torch.sh"
ensure_python_torch
if [ $# -gt 0 ]; then
    exec /usr/bin/python3 "$here/authors_step.py" "$@"
fi
root="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cmake --build "$build" --target test_training -j"$(nproc)"
input="$(mktemp --suffix=.pt)"
trap 'rm -f "$input"' EXIT
NOPESCOPE_AUTHORS_STEP_INPUT="$input" "$build/tests/test_training" \
    --gtest_filter='AuthorsStep.TheFixtureHoldsTheTrainersWeightsAndBatches' >/dev/null
/usr/bin/python3 "$here/authors_step.py" "$input" "$root/tests/data/authors_step.pt"
echo "wrote $root/tests/data/authors_step.pt"
