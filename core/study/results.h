// The results of a sweep: each finished run's rows read from its files, and their aggregation
// over seeds. Plain structs, so that the CLI writes them as sweep.csv and summary.csv and the
// window can draw them.
//   init mode:    RUN/analysis/scores.csv, with probes RUN/probes/probes.csv
//   trained mode: RUN/final_scores.csv (stages init and trained) and RUN/metrics.csv (accuracy)
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/manifest.h"
#include "study/stats.h"

namespace nope::study {

struct ProbeScore {
    double r = 0.0;      // Pearson R on the test strings
    double nrmse = 0.0;  // RMSE over the range of the targets
};

struct ResultRow {
    std::string stage;  // "init" (init mode, or the trained run's init), "trained"
    std::string point;  // capture point: "embedding", "attn", ...
    int layer = 0;
    double adjacencyMean = 0.0;
    double adjacencyStd = 0.0;                 // over prompts
    std::map<std::string, ProbeScore> probes;  // by feature; those probed at this point and layer
};

struct RunResult {
    size_t run = 0;                   // index into the manifest's runs
    std::vector<std::string> values;  // one per axis
    uint64_t seed = 0;
    std::optional<double> bestAccuracy;  // trained mode: the highest test accuracy (%)
    std::vector<ResultRow> rows;
    std::vector<std::string> probeFeatures;  // in the order of the run's probes.csv
};

// A mean over seeds of a value some runs may lack.
struct OptionalMean {
    double mean = 0.0;
    int n = 0;  // runs that had the value; none when 0
};

struct SummaryRow {
    std::vector<std::string> values;  // one per axis
    std::string stage;
    std::string point;
    int layer = 0;
    Interval adjacency;  // of the runs' adjacency means, over seeds
    std::map<std::string, OptionalMean> probeR, probeNrmse;  // by feature
    OptionalMean bestAccuracy;
};

struct SweepResults {
    std::vector<std::string> axes;  // the settings swept, in the grid's order
    SweepMode mode = SweepMode::Init;
    std::vector<std::string> probeFeatures;  // in the order first met in the runs' files
    std::vector<RunResult> runs;
    std::vector<SummaryRow> summary;  // one per axis values, stage, point and layer
};

// The values an axis took, in the order of the runs; empty for an axis the sweep has not.
std::vector<std::string> axisValues(const SweepResults& results, const std::string& axis);
// The value of an axis among a row's or run's values; empty when the sweep has no such axis.
std::string valueOf(const SweepResults& results, const std::vector<std::string>& values,
                    const std::string& axis);

// Reads the files of one finished run. Throws std::runtime_error naming the file at fault.
RunResult readRunResult(const std::filesystem::path& sweepDir, const Manifest& manifest,
                        size_t runIndex);

// The runs given, with their probe features and the summary over seeds, in the runs' order.
SweepResults summarize(const Manifest& manifest, std::vector<RunResult> runs);

// Every run with status done; a run whose files cannot be read is left out with its reason in
// `problems`.
SweepResults collectResults(const std::filesystem::path& sweepDir, const Manifest& manifest,
                            std::vector<std::string>& problems);

std::string sweepCsv(const SweepResults& results);
std::string summaryCsv(const SweepResults& results);
// DIR/sweep.csv and DIR/summary.csv, each atomically. Throws std::runtime_error naming the file.
void writeResults(const std::filesystem::path& sweepDir, const SweepResults& results);

}  // namespace nope::study
