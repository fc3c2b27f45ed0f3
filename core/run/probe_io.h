// Probe results as files: probes.csv, probes.json and predictions.csv. Shared by the CLI (probe,
// train) and the window's export, so that every front end writes the same format.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "probe/probe_result.h"

namespace nope {

inline constexpr const char* kProbesCsvHeader =
    "point,layer,feature,target,pearson_r,nrmse,control_r,control_nrmse,train_strings,"
    "test_strings";
inline constexpr const char* kPredictionsCsvHeader = "point,layer,feature,true,predicted";

// One row per probe; with `step`, a leading step column (the run folder's table).
std::string probesCsvRows(const ProbeReport& report, std::optional<int> step = std::nullopt);
std::string probesCsv(const ProbeReport& report);
// {"config", "sequence_length", "train_strings", "test_strings", "seconds", "cancelled",
//  "rows": [{point, layer, feature, target, pearson_r, nrmse, control_r, control_nrmse,
//            train_loss}]}; with predictions, each row also holds "truth" and "predicted".
nlohmann::json probesJson(const ProbeReport& report, bool withPredictions = false);
// Reads probesJson back (predictions included when present). Throws std::invalid_argument.
ProbeReport probeReportFromJson(const nlohmann::json& json);
std::string predictionsCsv(const ProbeReport& report);

// Writes probes.csv, probes.json (the rows plus `meta`) and predictions.csv into `dir`, each
// file atomically. Throws std::runtime_error naming the file.
void writeProbeFolder(const std::filesystem::path& dir, const ProbeReport& report,
                      const nlohmann::json& meta);

}  // namespace nope
