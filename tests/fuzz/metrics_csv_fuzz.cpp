// Fuzz target: a run folder's metrics.csv, read as the window's curves and the run list read it.
#include "fuzz_input.h"
#include "run/run_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto& dir = nope::fuzz::runFolder();
    nope::fuzz::writeInput("run/metrics.csv", nope::fuzz::asString(data, size));
    nope::fuzz::readEach([&] { nope::readRunCurves(dir); }, [&] { nope::summarizeRun(dir); });
    return 0;
}
