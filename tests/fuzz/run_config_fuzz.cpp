// Fuzz target: config.json of run folders and the window's session files, one reader (the run's
// settings, checked as the form checks them) and the session's capture point.
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "model/capture_point.h"
#include "run/run_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto j = nlohmann::json::parse(nope::fuzz::asString(data, size));
        const nope::RunSpec spec = nope::runSpecFromJson(j);
        nope::validate(spec);
        if (j.contains("capture_point")) {
            nope::parseCapturePoint(j.at("capture_point").get<std::string>());
        }
    } catch (const std::exception&) {
    }
    return 0;
}
