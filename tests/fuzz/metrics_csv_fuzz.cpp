// Fuzz target: a run folder's metrics.csv, read as the window's curves and the run list read it.
#include "fuzz_input.h"
#include "run/run_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto dir = nope::fuzz::ownFolder() / "run";
    static const bool configured = [&dir] {  // a run folder: the run list reads it too
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "config.json") << R"({"task": "addition", "preset": "quick"})";
        return true;
    }();
    (void)configured;
    nope::fuzz::writeInput("run/metrics.csv", nope::fuzz::asString(data, size));
    try {
        nope::readRunCurves(dir);
    } catch (const std::exception&) {
    }
    try {
        nope::summarizeRun(dir);
    } catch (const std::exception&) {
    }
    return 0;
}
