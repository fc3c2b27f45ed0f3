// sweep.csv and summary.csv (study/results.h): the columns of the swept settings, then the scores,
// then one pair of columns per probe feature. Numbers with six decimals; an absent value is empty.
#include "study/results.h"

#include <cmath>

#include "util/files.h"
#include "util/format.h"

namespace nope::study {

namespace {

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) {
        return text;
    }
    std::string out = "\"";
    for (char c : text) {
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return out + "\"";
}

std::string number(double v) {
    return std::isnan(v) ? "nan" : fixed(v, 6);
}

std::string mean(const OptionalMean& m) {
    return m.n > 0 ? number(m.mean) : "";
}

std::string settingsCells(const std::vector<std::string>& values) {
    std::string out;
    for (const auto& v : values) {
        out += csvField(v) + ",";
    }
    return out;
}

std::string settingsHeader(const SweepResults& results) {
    std::string out;
    for (const auto& axis : results.axes) {
        out += columnName(axis) + ",";
    }
    return out;
}

}  // namespace

std::string sweepCsv(const SweepResults& results) {
    const bool trained = results.mode == SweepMode::Trained;
    std::string out = settingsHeader(results) +
                      "seed,stage,point,layer,adjacency_mean,adjacency_std" +
                      (trained ? ",best_accuracy" : "");
    for (const auto& f : results.probeFeatures) {
        out += ",probe_" + f + "_r,probe_" + f + "_nrmse";
    }
    out += "\n";
    for (const auto& run : results.runs) {
        for (const auto& row : run.rows) {
            out += settingsCells(run.values) + std::to_string(run.seed) + "," + row.stage + "," +
                   row.point + "," + std::to_string(row.layer) + "," + number(row.adjacencyMean) +
                   "," + number(row.adjacencyStd);
            if (trained) {
                out += "," + (run.bestAccuracy ? number(*run.bestAccuracy) : std::string());
            }
            for (const auto& f : results.probeFeatures) {
                const auto it = row.probes.find(f);
                out += it == row.probes.end()
                           ? std::string(",,")
                           : "," + number(it->second.r) + "," + number(it->second.nrmse);
            }
            out += "\n";
        }
    }
    return out;
}

std::string summaryCsv(const SweepResults& results) {
    const bool trained = results.mode == SweepMode::Trained;
    std::string out = settingsHeader(results) +
                      "stage,point,layer,adjacency_mean,adjacency_std_over_seeds,ci95_low,"
                      "ci95_high,seeds" +
                      (trained ? ",best_accuracy_mean" : "");
    for (const auto& f : results.probeFeatures) {
        out += ",probe_" + f + "_r_mean,probe_" + f + "_nrmse_mean";
    }
    out += "\n";
    for (const auto& s : results.summary) {
        out += settingsCells(s.values) + s.stage + "," + s.point + "," + std::to_string(s.layer) +
               "," + number(s.adjacency.mean) + "," + number(s.adjacency.sd) + "," +
               number(s.adjacency.low) + "," + number(s.adjacency.high) + "," +
               std::to_string(s.adjacency.n);
        if (trained) {
            out += "," + mean(s.bestAccuracy);
        }
        for (const auto& f : results.probeFeatures) {
            const auto r = s.probeR.find(f);
            const auto e = s.probeNrmse.find(f);
            out += "," + (r == s.probeR.end() ? std::string() : mean(r->second)) + "," +
                   (e == s.probeNrmse.end() ? std::string() : mean(e->second));
        }
        out += "\n";
    }
    return out;
}

void writeResults(const std::filesystem::path& sweepDir, const SweepResults& results) {
    writeFileAtomic(sweepDir / SweepFiles::kSweepCsv, sweepCsv(results));
    writeFileAtomic(sweepDir / SweepFiles::kSummaryCsv, summaryCsv(results));
}

}  // namespace nope::study
