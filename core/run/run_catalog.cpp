#include "run/run_catalog.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iterator>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "run/run_folder.h"
#include "run/snapshot_io.h"
#include "util/csv_table.h"
#include "util/files.h"

namespace nope {

namespace fs = std::filesystem;

namespace {

std::string modifiedDate(const fs::path& file) {
    std::error_code error;
    const auto written = fs::last_write_time(file, error);
    if (error) {
        return "";
    }
    const auto system = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
        written - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
    const std::time_t t = std::chrono::system_clock::to_time_t(system);
    std::tm local{};
    localtime_r(&t, &local);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &local);
    return text;
}

// Each reader leaves `curves` as it was when its file does not exist, and notes in `curves` a
// last line that was cut short (left out).
void noteTornLine(const fs::path& file, const CsvTable& t, RunCurves& curves) {
    if (!t.tornLastLine().empty()) {
        curves.problems.push_back(file.string() + ": " + t.tornLastLine());
    }
}

// A column of wall times in row order with each fall (a session that began again from 0)
// joined up: the rows after a fall go on from the row before it.
void joinSessions(std::vector<double>& seconds) {
    double offset = 0.0, last = std::nan("");
    for (double& s : seconds) {
        if (!std::isfinite(s)) {
            continue;
        }
        if (std::isfinite(last) && s + offset < last) {
            offset = last;  // a session that began at the row before, timed from 0
        }
        s += offset;
        last = s;
    }
}

// elapsed_s of every row, NaN where the table has no such column or the row no number.
std::vector<double> secondsColumn(const CsvTable& t) {
    std::vector<double> seconds(t.rows(), std::nan(""));
    if (t.hasColumn("elapsed_s")) {
        const size_t column = t.column("elapsed_s");
        for (size_t i = 0; i < t.rows(); ++i) {
            seconds[i] = t.numberOrNan(i, column);
        }
    }
    joinSessions(seconds);
    return seconds;
}

void readMetrics(const fs::path& file, RunCurves& curves) {
    if (!fs::exists(file)) {
        return;
    }
    const CsvTable t(file);
    noteTornLine(file, t, curves);
    const size_t step = t.column("step"), train = t.column("train_loss");
    const size_t test = t.column("test_loss"), accuracy = t.column("accuracy");
    const bool evalColumn = t.hasColumn("eval_step");
    const std::vector<double> seconds = secondsColumn(t);
    for (size_t i = 0; i < t.rows(); ++i) {
        const int s = t.integer(i, step);
        curves.steps.push_back(s);
        curves.trainLoss.push_back(t.numberOrNan(i, train));
        curves.testLoss.push_back(t.numberOrNan(i, test));
        curves.seconds.push_back(seconds[i]);
        const double a = t.numberOrNan(i, accuracy);
        const double evalStep = evalColumn ? t.numberOrNan(i, t.column("eval_step")) : s;
        if (std::isfinite(a) && (!std::isfinite(evalStep) || evalStep == s)) {
            curves.evalSteps.push_back(s);
            curves.evalAccuracy.push_back(a);
            curves.evalTestLoss.push_back(curves.testLoss.back());
            curves.evalSeconds.push_back(seconds[i]);
        }
    }
}

// Every evaluation, where the run has evaluations.csv: the accuracy curve in full. The
// evaluations metrics.csv holds (those of snapshot steps and new bests, already in `curves`)
// fill the steps the file lacks (a run begun by a version without it, then resumed). The file
// only refines the curve: one that cannot be read is named in `problems` and left out.
void readEvaluations(const fs::path& file, RunCurves& curves) {
    if (!fs::exists(file)) {
        return;
    }
    struct Evaluation {
        double accuracy, testLoss, seconds;
    };
    std::map<int, Evaluation> byStep;
    for (size_t i = 0; i < curves.evalSteps.size(); ++i) {
        byStep[curves.evalSteps[i]] = {curves.evalAccuracy[i], curves.evalTestLoss[i],
                                       curves.evalSeconds[i]};
    }
    try {
        const CsvTable t(file);
        noteTornLine(file, t, curves);
        const size_t step = t.column("step"), accuracy = t.column("accuracy");
        const size_t testLoss = t.column("test_loss");
        const std::vector<double> seconds = secondsColumn(t);
        for (size_t i = 0; i < t.rows(); ++i) {
            const double a = t.numberOrNan(i, accuracy);
            if (std::isfinite(a)) {
                byStep[t.integer(i, step)] = {a, t.numberOrNan(i, testLoss), seconds[i]};
            }
        }
    } catch (const std::exception& e) {
        curves.problems.push_back(std::string(e.what()) + " (the accuracy curve is metrics.csv's)");
        return;
    }
    curves.evalSteps.clear();
    curves.evalAccuracy.clear();
    curves.evalTestLoss.clear();
    curves.evalSeconds.clear();
    for (const auto& [s, evaluation] : byStep) {
        curves.evalSteps.push_back(s);
        curves.evalAccuracy.push_back(evaluation.accuracy);
        curves.evalTestLoss.push_back(evaluation.testLoss);
        curves.evalSeconds.push_back(evaluation.seconds);
    }
}

CapturePoint pointAt(const CsvTable& t, size_t row, size_t column) {
    const auto point = parseCapturePoint(t.text(row, column));
    if (!point) {
        t.fail("line " + std::to_string(row + 2) + ": no capture point '" + t.text(row, column) +
               "'");
    }
    return *point;
}

void readAdjacency(const fs::path& file, RunCurves& curves) {
    if (!fs::exists(file)) {
        return;
    }
    const CsvTable t(file);
    noteTornLine(file, t, curves);
    const size_t step = t.column("step"), point = t.column("point"), layer = t.column("layer");
    const size_t mean = t.column("mean"), sd = t.column("std");
    std::map<std::pair<int, int>, ScoreSeries> series;
    for (size_t i = 0; i < t.rows(); ++i) {
        const CapturePoint p = pointAt(t, i, point);
        const int l = t.integer(i, layer);
        ScoreSeries& s = series[{static_cast<int>(p), l}];
        s.point = p;
        s.layer = l;
        s.steps.push_back(t.integer(i, step));
        s.mean.push_back(t.numberOrNan(i, mean));
        s.std.push_back(t.numberOrNan(i, sd));
    }
    for (auto& [key, s] : series) {
        curves.adjacency.push_back(std::move(s));
    }
}

void readFinal(const fs::path& file, RunCurves& curves) {
    if (!fs::exists(file)) {
        return;
    }
    const CsvTable t(file);
    noteTornLine(file, t, curves);
    const size_t stage = t.column("stage"), point = t.column("point"), layer = t.column("layer");
    const size_t mean = t.column("adjacency_mean"), sd = t.column("adjacency_std");
    const bool withSamples = t.hasColumn("samples");
    for (size_t i = 0; i < t.rows(); ++i) {
        curves.final.push_back({t.text(i, stage), pointAt(t, i, point), t.integer(i, layer),
                                t.numberOrNan(i, mean), t.numberOrNan(i, sd),
                                withSamples ? t.integer(i, t.column("samples")) : 0});
    }
}

}  // namespace

const ScoreSeries* RunCurves::series(CapturePoint point, int layer) const {
    for (const auto& s : adjacency) {
        if (s.point == point && s.layer == layer) {
            return &s;
        }
    }
    return nullptr;
}

double RunCurves::secondsAt(int step) const {
    std::map<int, double> known;  // step -> seconds, from both tables
    auto add = [&known](const std::vector<int>& at, const std::vector<double>& seconds) {
        for (size_t i = 0; i < at.size() && i < seconds.size(); ++i) {
            if (std::isfinite(seconds[i])) {
                known[at[i]] = seconds[i];
            }
        }
    };
    add(steps, seconds);
    add(evalSteps, evalSeconds);
    const auto after = known.lower_bound(step);
    if (after == known.end()) {
        return std::nan("");
    }
    if (after->first == step) {
        return after->second;
    }
    if (after == known.begin()) {
        return std::nan("");
    }
    const auto before = std::prev(after);
    const double f = double(step - before->first) / double(after->first - before->first);
    return before->second + f * (after->second - before->second);
}

int RunCurves::layers(CapturePoint point) const {
    int most = -1;
    for (const auto& s : adjacency) {
        if (s.point == point) {
            most = std::max(most, s.layer);
        }
    }
    return most;
}

RunSummary summarizeRun(const fs::path& dir) {
    RunSummary run;
    run.dir = dir;
    run.name = dir.filename().string();
    try {
        const nlohmann::json config = readRunConfig(dir);
        run.task = config.value("task", "");
        run.preset = config.contains("preset") && config["preset"].is_string()
                         ? config["preset"].get<std::string>()
                         : "";
        const nlohmann::json model = config.value("model", nlohmann::json::object());
        run.layers = model.value("n_layer", 0);
        run.dim = model.value("n_embd", 0);
        run.positional = model.value("positional", "");
        run.attention = model.value("attention", "");
        const nlohmann::json train = config.value("train", nlohmann::json::object());
        run.totalSteps = train.value("steps", 0);
        run.analysisSamples = train.value("analysis_samples", 0);
        const RunCurves curves = readTrainingCurves(dir);
        run.lastStep = curves.steps.empty() ? 0 : curves.steps.back();
        for (double a : curves.evalAccuracy) {
            if (!std::isfinite(run.bestAccuracy) || a > run.bestAccuracy) {
                run.bestAccuracy = a;
            }
        }
        run.date = modifiedDate(dir / RunFiles::kConfig);
    } catch (const std::exception& e) {
        run.error = e.what();
    }
    return run;
}

std::vector<RunSummary> listRuns(const fs::path& root) {
    std::vector<RunSummary> runs;
    std::error_code error;
    if (!fs::is_directory(root, error)) {
        return runs;
    }
    for (const auto& entry : fs::directory_iterator(root, error)) {
        if (entry.is_directory(error) && holdsRun(entry.path())) {
            runs.push_back(summarizeRun(entry.path()));
        }
    }
    std::sort(runs.begin(), runs.end(), [](const RunSummary& a, const RunSummary& b) {
        return a.date != b.date ? a.date > b.date : a.name < b.name;
    });
    return runs;
}

RunCurves readTrainingCurves(const fs::path& dir) {
    RunCurves curves;
    readMetrics(dir / RunFiles::kMetrics, curves);
    readEvaluations(dir / RunFiles::kEvaluations, curves);
    return curves;
}

RunCurves readRunCurves(const fs::path& dir) {
    RunCurves curves = readTrainingCurves(dir);
    readAdjacency(dir / RunFiles::kAdjacency, curves);
    readFinal(dir / RunFiles::kFinalScores, curves);
    return curves;
}

std::vector<int> snapshotSteps(const fs::path& dir) {
    std::vector<int> steps;
    std::error_code error;
    const fs::path folder = dir / RunFiles::kSnapshots;
    if (!fs::is_directory(folder, error)) {
        return steps;
    }
    for (const auto& entry : fs::directory_iterator(folder, error)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("step_", 0) == 0 && entry.path().extension() == ".json") {
            try {
                steps.push_back(std::stoi(name.substr(5)));
            } catch (const std::exception&) {
                // a file that is not a snapshot: not listed
            }
        }
    }
    std::sort(steps.begin(), steps.end());
    return steps;
}

Snapshot readSnapshot(const fs::path& dir, int step) {
    const fs::path file = dir / RunFiles::kSnapshots / snapshotFileName(step);
    try {
        return snapshotFromJson(nlohmann::json::parse(readFile(file)));
    } catch (const std::exception& e) {
        throw std::runtime_error(file.string() + ": damaged snapshot: " + e.what());
    }
}

}  // namespace nope
