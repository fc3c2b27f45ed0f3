// Fuzz target: a run folder's adjacency.csv, read as the window's score curves.
#include "fuzz_input.h"
#include "run/run_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto dir = nope::fuzz::ownFolder() / "run-adjacency";
    std::filesystem::create_directories(dir);
    nope::fuzz::writeInput("run-adjacency/adjacency.csv", nope::fuzz::asString(data, size));
    try {
        const nope::RunCurves curves = nope::readRunCurves(dir);
        for (const auto& series : curves.adjacency) {  // as the curves panel looks them up
            curves.series(series.point, series.layer);
            curves.layers(series.point);
        }
    } catch (const std::exception&) {
    }
    return 0;
}
