// Snapshots and evaluations as JSON, for the run folder and for the window's history.
#pragma once

#include <nlohmann/json.hpp>

#include "run/snapshot.h"

namespace nope {

nlohmann::json toJson(const EvalResult& eval);
EvalResult evalFromJson(const nlohmann::json& j);

// Matrices are stored rounded to 4 decimals (cosines in [-1, 1]), which keeps a snapshot file
// small and is far below what a heatmap shows.
nlohmann::json toJson(const Analysis& analysis);
Analysis analysisFromJson(const nlohmann::json& j);

nlohmann::json toJson(const Snapshot& snapshot);
// Throws std::invalid_argument naming the missing or malformed key.
Snapshot snapshotFromJson(const nlohmann::json& j);

}  // namespace nope
