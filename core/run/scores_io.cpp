#include "run/scores_io.h"

#include "util/files.h"
#include "util/format.h"

namespace nope {

std::string scoresCsv(const Analysis& analysis) {
    std::string out = std::string(kScoresCsvHeader) + "\n";
    for (const auto& row : analysis.rows) {
        out += toString(row.point) + "," + std::to_string(row.layer) + "," +
               fixed(row.adjacencyMean, 6) + "," + fixed(row.adjacencyStd, 6) + "," +
               fixed(row.normScore, 6) + "," + fixed(row.varianceScore, 6) + "," +
               std::to_string(analysis.samples) + "\n";
    }
    return out;
}

nlohmann::json scoresJson(const Analysis& analysis) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : analysis.rows) {
        rows.push_back({{"point", toString(row.point)},
                        {"layer", row.layer},
                        {"adjacency_mean", row.adjacencyMean},
                        {"adjacency_std", row.adjacencyStd},
                        {"norm_score", row.normScore},
                        {"variance_score", row.varianceScore},
                        {"samples", analysis.samples}});
    }
    return {{"samples", analysis.samples}, {"seq_len", analysis.seqLen}, {"rows", rows}};
}

std::string matrixCsv(const std::vector<float>& matrix, int T) {
    std::string out;
    out.reserve(matrix.size() * 10);
    for (int i = 0; i < T; ++i) {
        for (int j = 0; j < T; ++j) {
            out += shortest(matrix[static_cast<size_t>(i) * T + j]);
            out += j + 1 < T ? ',' : '\n';
        }
    }
    return out;
}

std::string matrixFileName(CapturePoint point, int layer) {
    return toString(point) + "_layer" + std::to_string(layer) + ".csv";
}

void writeAnalysisFolder(const std::filesystem::path& dir, const Analysis& analysis,
                         const nlohmann::json& meta) {
    nlohmann::json json = meta;
    json.update(scoresJson(analysis));
    writeFileAtomic(dir / "scores.csv", scoresCsv(analysis));
    writeFileAtomic(dir / "scores.json", json.dump(2) + "\n");
    for (const auto& row : analysis.rows) {
        writeFileAtomic(dir / "matrices" / matrixFileName(row.point, row.layer),
                        matrixCsv(row.meanMatrix, analysis.seqLen));
    }
}

}  // namespace nope
