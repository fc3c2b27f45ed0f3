#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, end-to-end and the format check).
#
#   scripts/test.sh                       the suite in build/ (what CI runs first)
#   scripts/test.sh --sanitize asan       the suite built with AddressSanitizer and
#                                         UndefinedBehaviorSanitizer in build-asan/
#   scripts/test.sh --sanitize tsan       the window's, the worker's and the sweep pool's tests
#                                         built with ThreadSanitizer in build-tsan/
#   --headless                            with --sanitize: without the window and its tests
#   --torch-free                          with --sanitize asan: only the tests that need neither
#                                         LibTorch nor the window (label torch-free: the value
#                                         types, the sweep library, the fuzz corpora of the readers
#                                         that load no tensors); what CI runs second (.ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
headless=0
torch_free=0
while [ $# -gt 0 ]; do
    case "$1" in
    --sanitize)
        sanitize=${2:-}
        shift 2 || { echo "test.sh: --sanitize needs asan or tsan" >&2; exit 2; }
        ;;
    --headless) headless=1; shift ;;
    --torch-free) torch_free=1; shift ;;
    *)
        echo "test.sh: unknown argument '$1' (allowed: --sanitize asan|tsan, --headless, --torch-free)" >&2
        exit 2
        ;;
    esac
done
case "$sanitize" in
"" | asan | tsan) ;;
*) echo "test.sh: --sanitize: '$sanitize' is not a sanitizer (allowed: asan, tsan)" >&2; exit 2 ;;
esac
if [ "$torch_free" = 1 ] && [ "$sanitize" != asan ]; then
    echo "test.sh: --torch-free goes with --sanitize asan" >&2
    exit 2
fi

scripts/install-deps.sh
jobs=${NOPESCOPE_JOBS:-$(nproc)}

if [ -z "$sanitize" ]; then
    scripts/build.sh
    build_dir=${NOPESCOPE_BUILD_DIR:-build}
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
    exit 0
fi

gui=ON
[ "$headless" = 1 ] || [ "$torch_free" = 1 ] && gui=OFF
cmake --preset "$sanitize" -DNOPESCOPE_BUILD_GUI=$gui >/dev/null
if [ "$torch_free" = 1 ]; then
    # the tests labelled torch-free (tests/CMakeLists.txt, tests/fuzz/CMakeLists.txt)
    cmake --build --preset asan -j "$jobs" --target torch_free_tests
    ctest --preset asan -j "$jobs" -L torch-free
    exit 0
fi
if [ "$sanitize" = asan ]; then
    cmake --build --preset asan -j "$jobs"
    # the format and layer checks are not about memory; everything else runs instrumented
    ctest --preset asan -j "$jobs" -E '^(format|layers)$'
    exit 0
fi

# ThreadSanitizer: the tests of threads (the window's worker and controller, the panels' timers,
# the training loop's run control, the sweep's process pool). Reports inside LibTorch's OpenMP and
# Qt, which are not instrumented, are suppressed in tests/sanitizers/tsan.supp.
targets=(test_training test_study)
[ "$gui" = ON ] && targets+=(test_gui test_widgets)
cmake --build --preset tsan -j "$jobs" --target "${targets[@]}"
export TSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/tsan.supp second_deadlock_stack=1 halt_on_error=1 die_after_fork=0"
export QT_QPA_PLATFORM=offscreen
build-tsan/tests/test_training --gtest_filter='RunControl.*:Trainer.Stop*'
build-tsan/tests/test_study --gtest_filter='Pool.*'
if [ "$gui" = ON ]; then
    build-tsan/tests/test_widgets
    build-tsan/tests/test_gui
fi
