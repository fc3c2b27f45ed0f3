#include "study/results.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>

#include "util/csv_table.h"
#include "util/files.h"
#include "util/parse_number.h"

namespace nope::study {

namespace fs = std::filesystem;

namespace {

// The files a finished run leaves, relative to its folder.
constexpr const char* kInitScores = "analysis/scores.csv";
constexpr const char* kInitProbes = "probes/probes.csv";
constexpr const char* kFinalScores = "final_scores.csv";  // RunFiles::kFinalScores
constexpr const char* kMetrics = "metrics.csv";           // RunFiles::kMetrics

// A run's table, whole: a last line cut short leaves the run out with the reason (its results
// would be missing a row).
CsvTable readWhole(const fs::path& file) {
    CsvTable t(file);
    if (!t.tornLastLine().empty()) {
        t.fail(t.tornLastLine());
    }
    return t;
}

std::vector<ResultRow> readScores(const fs::path& file, const char* stageColumn) {
    const CsvTable t = readWhole(file);
    const size_t point = t.column("point"), layer = t.column("layer");
    const size_t mean = t.column("adjacency_mean"), sd = t.column("adjacency_std");
    const size_t stage = stageColumn ? t.column(stageColumn) : 0;
    std::vector<ResultRow> rows;
    for (size_t i = 0; i < t.rows(); ++i) {
        rows.push_back({stageColumn ? t.text(i, stage) : "init",
                        t.text(i, point),
                        t.integer(i, layer),
                        t.number(i, mean),
                        t.number(i, sd),
                        {}});
    }
    if (rows.empty()) {
        t.fail("has no rows");
    }
    return rows;
}

void joinProbes(const fs::path& file, RunResult& run) {
    const CsvTable t = readWhole(file);
    const size_t point = t.column("point"), layer = t.column("layer");
    const size_t feature = t.column("feature"), r = t.column("pearson_r");
    const size_t nrmse = t.column("nrmse");
    for (size_t i = 0; i < t.rows(); ++i) {
        const std::string& name = t.text(i, feature);
        if (std::find(run.probeFeatures.begin(), run.probeFeatures.end(), name) ==
            run.probeFeatures.end()) {
            run.probeFeatures.push_back(name);
        }
        for (auto& row : run.rows) {
            if (row.point == t.text(i, point) && row.layer == t.integer(i, layer)) {
                row.probes[t.text(i, feature)] = {t.number(i, r), t.number(i, nrmse)};
            }
        }
    }
}

std::optional<double> bestAccuracy(const fs::path& file) {
    const CsvTable t = readWhole(file);
    const size_t accuracy = t.column("accuracy");
    std::optional<double> best;
    for (size_t i = 0; i < t.rows(); ++i) {
        const double v = t.number(i, accuracy);
        if (std::isfinite(v) && (!best || v > *best)) {
            best = v;
        }
    }
    return best;
}

// The summary's key of a row: the axis values, stage, point and layer.
std::string groupKey(const RunResult& run, const ResultRow& row) {
    std::string key;
    for (const auto& v : run.values) {
        key += v + '\x1f';
    }
    return key + row.stage + '\x1f' + row.point + '\x1f' + std::to_string(row.layer);
}

void addTo(OptionalMean& m, double value) {
    if (std::isfinite(value)) {
        m.mean += (value - m.mean) / (m.n + 1);
        m.n += 1;
    }
}

}  // namespace

RunResult readRunResult(const fs::path& sweepDir, const Manifest& manifest, size_t runIndex) {
    const SweepRun& run = manifest.runs.at(runIndex);
    const fs::path dir = runFolder(sweepDir, run);
    RunResult result;
    result.run = runIndex;
    result.seed = run.seed;
    for (const auto& setting : run.settings) {
        result.values.push_back(setting.second);
    }
    if (manifest.mode == SweepMode::Init) {
        result.rows = readScores(dir / kInitScores, nullptr);
        if (manifest.probes) {
            joinProbes(dir / kInitProbes, result);
        }
    } else {
        result.rows = readScores(dir / kFinalScores, "stage");
        result.bestAccuracy = bestAccuracy(dir / kMetrics);
    }
    return result;
}

SweepResults summarize(const Manifest& manifest, std::vector<RunResult> runs) {
    SweepResults out;
    for (const auto& axis : manifest.grid.axes) {
        out.axes.push_back(axis.name);
    }
    out.mode = manifest.mode;
    out.runs = std::move(runs);
    std::map<std::string, size_t> groups;
    std::vector<std::vector<double>> adjacency;
    for (const auto& run : out.runs) {
        for (const auto& feature : run.probeFeatures) {
            if (std::find(out.probeFeatures.begin(), out.probeFeatures.end(), feature) ==
                out.probeFeatures.end()) {
                out.probeFeatures.push_back(feature);
            }
        }
        for (const auto& row : run.rows) {
            const auto [it, added] = groups.emplace(groupKey(run, row), out.summary.size());
            if (added) {
                out.summary.push_back(
                    {run.values, row.stage, row.point, row.layer, {}, {}, {}, {}});
                adjacency.emplace_back();
            }
            SummaryRow& s = out.summary[it->second];
            adjacency[it->second].push_back(row.adjacencyMean);
            for (const auto& [feature, score] : row.probes) {
                addTo(s.probeR[feature], score.r);
                addTo(s.probeNrmse[feature], score.nrmse);
            }
            if (run.bestAccuracy) {
                addTo(s.bestAccuracy, *run.bestAccuracy);
            }
        }
    }
    for (size_t i = 0; i < out.summary.size(); ++i) {
        out.summary[i].adjacency = meanInterval(adjacency[i]);
    }
    return out;
}

SweepResults collectResults(const fs::path& sweepDir, const Manifest& manifest,
                            std::vector<std::string>& problems) {
    std::vector<RunResult> runs;
    for (size_t i = 0; i < manifest.runs.size(); ++i) {
        if (manifest.runs[i].status != RunStatus::Done) {
            continue;
        }
        try {
            runs.push_back(readRunResult(sweepDir, manifest, i));
        } catch (const std::exception& e) {
            problems.push_back(manifest.runs[i].id + ": " + e.what());
        }
    }
    return summarize(manifest, std::move(runs));
}

std::vector<std::string> axisValues(const SweepResults& results, const std::string& axis) {
    std::vector<std::string> values;
    const auto it = std::find(results.axes.begin(), results.axes.end(), axis);
    if (it == results.axes.end()) {
        return values;
    }
    const auto a = static_cast<size_t>(it - results.axes.begin());
    for (const auto& run : results.runs) {
        if (a < run.values.size() &&
            std::find(values.begin(), values.end(), run.values[a]) == values.end()) {
            values.push_back(run.values[a]);
        }
    }
    return values;
}

std::string valueOf(const SweepResults& results, const std::vector<std::string>& values,
                    const std::string& axis) {
    const auto it = std::find(results.axes.begin(), results.axes.end(), axis);
    const auto a = static_cast<size_t>(it - results.axes.begin());
    return it != results.axes.end() && a < values.size() ? values[a] : std::string();
}

}  // namespace nope::study
