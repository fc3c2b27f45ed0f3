// The analysis as files: scores.csv, scores.json and one CSV per mean matrix. Shared by the CLI
// (analyze, train) and the window's export, so that every front end writes the same format.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/analysis.h"
#include "tasks/task.h"

namespace nope {

// Header and column order of scores.csv.
inline constexpr const char* kScoresCsvHeader =
    "point,layer,adjacency_mean,adjacency_std,norm_score,variance_score,samples";

std::string scoresCsv(const Analysis& analysis);
// {"samples", "seq_len", "rows": [{point, layer, adjacency_mean, ...}]}
nlohmann::json scoresJson(const Analysis& analysis);

// A T x T matrix as T lines of T comma-separated numbers.
std::string matrixCsv(const std::vector<float>& matrix, int T);
// "attn_layer1.csv", "embedding_layer0.csv"
std::string matrixFileName(CapturePoint point, int layer);

// projection.csv: point,layer,prompt,position,token,x,y,z for every projected token (the token as
// its character, '\n' shown as the return symbol; empty for drawn inputs).
std::string projectionCsv(const ProjectionSet& projection);
// projection_summary.csv: point,layer,method,explained_1,explained_2,explained_3,r_position.
std::string projectionSummaryCsv(const ProjectionSet& projection);
// answers.csv: prompt,answer,expected,correct (expected empty for a prompt outside the task).
std::string answersCsv(const std::vector<PromptAnswer>& answers);

// Writes scores.csv, scores.json (the rows plus `meta`, e.g. config and seeds) and
// matrices/<point>_layer<l>.csv into `dir`, each file atomically. Throws std::runtime_error.
void writeAnalysisFolder(const std::filesystem::path& dir, const Analysis& analysis,
                         const nlohmann::json& meta);

}  // namespace nope
