// Fuzz target: the snapshot files of run folders (snapshots/step_N.json) and the analysis of
// init_analysis.json, which the window and the report read back.
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "run/snapshot_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto j = nlohmann::json::parse(nope::fuzz::asString(data, size));
        try {
            nope::snapshotFromJson(j);
        } catch (const std::exception&) {
        }
        nope::analysisFromJson(j);
    } catch (const std::exception&) {
    }
    return 0;
}
