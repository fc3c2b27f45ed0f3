#include "run/scores_io.h"

#include "tasks/vocab.h"
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

std::string projectionCsv(const ProjectionSet& projection) {
    std::string out = "point,layer,prompt,position,token,x,y,z\n";
    for (const auto& p : projection.items) {
        const std::string site = toString(p.point) + "," + std::to_string(p.layer) + ",";
        for (int n = 0; n < p.prompts; ++n) {
            for (int t = 0; t < p.seqLen; ++t) {
                const size_t at = static_cast<size_t>(n) * p.seqLen + t;
                const std::string token =
                    at < projection.tokens.size()
                        ? csvField(vocab::display(vocab::decode(projection.tokens[at])))
                        : std::string();
                out += site + std::to_string(n) + "," + std::to_string(t) + "," + token;
                for (int axis = 0; axis < kProjectionAxes; ++axis) {
                    out += "," + shortest(p.at(n, t, axis));
                }
                out += "\n";
            }
        }
    }
    return out;
}

std::string projectionSummaryCsv(const ProjectionSet& projection) {
    std::string out = "point,layer,method,explained_1,explained_2,explained_3,r_position\n";
    for (const auto& p : projection.items) {
        out += toString(p.point) + "," + std::to_string(p.layer) + "," + toString(p.method);
        for (double e : p.explained) {
            out += "," + fixed(e, 6);
        }
        out += "," + fixed(p.rPosition, 6) + "\n";
    }
    return out;
}

std::string answersCsv(const std::vector<PromptAnswer>& answers) {
    std::string out = "prompt,answer,expected,correct\n";
    for (const auto& a : answers) {
        out += csvField(a.prompt) + "," + csvField(a.answer) + "," + csvField(a.expected) + "," +
               (a.expected.empty() ? ""
                : a.correct        ? "true"
                                   : "false") +
               "\n";
    }
    return out;
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
