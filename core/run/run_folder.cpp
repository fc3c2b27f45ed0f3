#include "run/run_folder.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>

#include "run/probe_io.h"
#include "run/snapshot_io.h"
#include "util/files.h"
#include "util/format.h"

namespace nope {

namespace fs = std::filesystem;

namespace {

std::string cell(double v, int decimals) {
    return std::isfinite(v) ? fixed(v, decimals) : "";
}

// A row of evaluations.csv (kEvaluationsCsvHeader).
std::string evaluationRow(const Snapshot& s) {
    return std::to_string(s.step) + "," + cell(s.trainLoss, 6) + "," + cell(s.eval.testLoss, 6) +
           "," + fixed(s.eval.accuracy, 2) + "," + shortest(static_cast<float>(s.learningRate)) +
           "," + fixed(s.tokensPerSecond, 0) + "," + fixed(s.elapsedSeconds, 1);
}

// The step a table row starts with.
int stepOfRow(const std::string& row) {
    return std::atoi(row.c_str());
}

// Drops the rows of `step` and later: a snapshot taken again replaces its rows.
void dropFrom(std::vector<std::string>& rows, int step) {
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [step](const std::string& row) { return stepOfRow(row) >= step; }),
               rows.end());
}

// The step of a snapshot file's name ("step_000250.json": digits between "step_" and ".json"),
// or -1 for any other name.
int stepOfSnapshotFile(const std::string& name) {
    const std::string prefix = "step_", suffix = ".json";
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
        return -1;
    }
    const std::string digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        })) {
        return -1;
    }
    return std::stoi(digits);
}

std::string joinLines(const char* header, const std::vector<std::string>& rows) {
    std::string out = std::string(header) + "\n";
    for (const auto& r : rows) {
        out += r + "\n";
    }
    return out;
}

}  // namespace

std::string runProbesCsvHeader() {
    return std::string("step,") + kProbesCsvHeader;
}

fs::path runsRoot() {
    const char* env = std::getenv("NOPESCOPE_RUNS");
    return env && *env ? fs::path(env) : fs::path("runs");
}

fs::path newRunFolder(const std::string& origin, const std::string& task,
                      const std::string& preset) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    const std::string base = origin + "-" + task + "-" + preset + "-" + stamp;
    fs::path dir = runsRoot() / base;
    for (int i = 2; fs::exists(dir); ++i) {
        dir = runsRoot() / (base + "-" + std::to_string(i));
    }
    return dir;
}

bool holdsRun(const fs::path& dir) {
    return fs::is_regular_file(dir / RunFiles::kConfig);
}

std::optional<fs::path> resumableCheckpoint(const fs::path& dir) {
    const fs::path file = dir / RunFiles::kCheckpoint;
    return fs::is_regular_file(file) ? std::optional<fs::path>(file) : std::nullopt;
}

std::optional<fs::path> bestCheckpoint(const fs::path& dir) {
    const fs::path file = dir / RunFiles::kBest;
    return fs::is_regular_file(file) ? std::optional<fs::path>(file) : std::nullopt;
}

std::optional<fs::path> modelFileOfRun(const fs::path& dir) {
    if (auto best = bestCheckpoint(dir)) {
        return best;
    }
    return resumableCheckpoint(dir);
}

nlohmann::json readRunConfig(const fs::path& dir) {
    const fs::path path = dir / RunFiles::kConfig;
    if (!fs::exists(path)) {
        throw std::runtime_error(dir.string() + " is not a run folder (it has no config.json)");
    }
    try {
        return nlohmann::json::parse(readFile(path));
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path.string() + ": not valid JSON (" + e.what() + ")");
    }
}

std::string snapshotFileName(int step) {
    char name[32];
    std::snprintf(name, sizeof name, "step_%06d.json", step);
    return name;
}

RunWriter::RunWriter(fs::path dir, bool continuing, int fromStep) : m_dir(std::move(dir)) {
    std::error_code ec;
    fs::create_directories(m_dir / RunFiles::kSnapshots, ec);
    if (ec) {
        throw std::runtime_error("cannot create run folder " + m_dir.string() + ": " +
                                 ec.message());
    }
    syncFolder(m_dir.parent_path().empty() ? fs::path(".") : m_dir.parent_path());
    syncFolder(m_dir);
    if (continuing) {
        continueAt(fromStep);
    }
}

// A resumed run goes on from its checkpoint: the snapshot files after it (and the temporary files
// of writes a killed process left unfinished) go, and the tables are rebuilt from the snapshot
// files up to it. The tables are a function of the snapshot files, so whatever a kill, a full disk
// or another version left in them (a missing or torn row, a row twice), they come out as an
// uninterrupted run's; a snapshot file that cannot be read gives no rows. evaluations.csv is the
// exception: its rows between snapshots are in no snapshot file (keepEvaluations).
void RunWriter::continueAt(int fromStep) {
    std::map<int, fs::path> kept;  // by step
    for (const fs::path& folder : {m_dir, m_dir / RunFiles::kSnapshots}) {
        for (const auto& entry : fs::directory_iterator(folder)) {
            const std::string name = entry.path().filename().string();
            const int step = folder == m_dir ? -1 : stepOfSnapshotFile(name);
            std::error_code ec;
            if (name.find(".tmp") != std::string::npos || step > fromStep) {
                fs::remove(entry.path(), ec);
            } else if (step >= 0) {
                kept[step] = entry.path();
            }
        }
        syncFolder(folder);
    }
    for (const auto& [step, file] : kept) {
        try {
            const Snapshot s = snapshotFromJson(nlohmann::json::parse(readFile(file)));
            if (s.step == step) {  // a file renamed by hand is not a record of its name's step
                appendRows(s);
            }
        } catch (const std::exception&) {
            // a damaged snapshot: the window names it when it opens the folder
        }
    }
    rewriteTables();
    keepEvaluations(fromStep);
}

// The evaluations.csv rows of steps up to `fromStep` that are whole (a step, then as many cells
// as the header has), one per step (the last written wins), by step: no snapshot file records
// the evaluations between snapshots, so the file itself is what a resumed run keeps. A file of
// another layout (another version's header) or one that cannot be read keeps nothing.
void RunWriter::keepEvaluations(int fromStep) {
    const fs::path file = m_dir / RunFiles::kEvaluations;
    std::map<int, std::string> byStep;
    std::string text;
    try {
        text = fs::exists(file) ? readFile(file) : std::string();
    } catch (const std::exception&) {
        text.clear();  // unreadable: the evaluations start afresh, the run goes on
    }
    const auto cells = [](const std::string& line) {
        return std::count(line.begin(), line.end(), ',') + 1;
    };
    std::istringstream in(text);
    std::string line;
    if (std::getline(in, line) && line == kEvaluationsCsvHeader) {
        while (std::getline(in, line)) {
            int step = -1;
            const char* end = line.data() + line.size();
            const auto [rest, error] = std::from_chars(line.data(), end, step);
            const bool whole = error == std::errc() && rest != end && *rest == ',' && step >= 0 &&
                               cells(line) == cells(kEvaluationsCsvHeader);
            if (whole && step <= fromStep) {
                byStep[step] = line;
            }
        }
    }
    m_evaluationRows.clear();
    for (const auto& [step, row] : byStep) {
        m_evaluationRows.push_back(row);
    }
    writeEvaluations();
}

void RunWriter::addEvaluation(const Snapshot& p) {
    dropFrom(m_evaluationRows, p.step);
    m_evaluationRows.push_back(evaluationRow(p));
    writeEvaluations();
}

void RunWriter::writeEvaluations() const {
    writeFileAtomic(m_dir / RunFiles::kEvaluations,
                    joinLines(kEvaluationsCsvHeader, m_evaluationRows));
}

void RunWriter::writeConfig(const nlohmann::json& config) const {
    writeFileAtomic(m_dir / RunFiles::kConfig, config.dump(2) + "\n");
}

void RunWriter::add(const Snapshot& s) {
    // a run resumed from a checkpoint of step 0 analyses the model at init again
    for (auto* rows : {&m_metricsRows, &m_adjacencyRows, &m_probeRows}) {
        dropFrom(*rows, s.step);
    }
    appendRows(s);
    writeFileAtomic(m_dir / RunFiles::kSnapshots / snapshotFileName(s.step),
                    toJson(s).dump() + "\n");
    rewriteTables();
}

void RunWriter::appendRows(const Snapshot& s) {
    // metrics.csv's columns are evaluations.csv's and the step of the evaluation
    m_metricsRows.push_back(evaluationRow(s) + "," + std::to_string(s.eval.step));
    for (const auto& row : s.analysis.rows) {
        m_adjacencyRows.push_back(std::to_string(s.step) + "," + toString(row.point) + "," +
                                  std::to_string(row.layer) + "," + fixed(row.adjacencyMean, 6) +
                                  "," + fixed(row.adjacencyStd, 6));
    }
    if (!s.probes.empty()) {
        std::string rows = probesCsvRows(s.probes, s.step);
        for (size_t start = 0; start < rows.size();) {
            const size_t end = rows.find('\n', start);
            m_probeRows.push_back(rows.substr(start, end - start));
            start = end + 1;
        }
    }
}

void RunWriter::rewriteTables() const {
    writeFileAtomic(m_dir / RunFiles::kMetrics, joinLines(kMetricsCsvHeader, m_metricsRows));
    writeFileAtomic(m_dir / RunFiles::kAdjacency, joinLines(kAdjacencyCsvHeader, m_adjacencyRows));
    if (!m_probeRows.empty()) {
        writeFileAtomic(m_dir / RunFiles::kProbes,
                        joinLines(runProbesCsvHeader().c_str(), m_probeRows));
    }
}

void RunWriter::writeFinalScores(const Analysis& init, const Analysis& trained) const {
    std::string out = std::string(kFinalScoresCsvHeader) + "\n";
    for (const auto* stage : {&init, &trained}) {
        const char* name = stage == &init ? "init" : "trained";
        for (const auto& r : stage->rows) {
            out += std::string(name) + "," + toString(r.point) + "," + std::to_string(r.layer) +
                   "," + fixed(r.adjacencyMean, 6) + "," + fixed(r.adjacencyStd, 6) + "," +
                   fixed(r.normScore, 6) + "," + fixed(r.varianceScore, 6) + "," +
                   std::to_string(stage->samples) + "\n";
        }
    }
    writeFileAtomic(m_dir / RunFiles::kFinalScores, out);
}

std::vector<Snapshot> SnapshotFollower::poll(std::vector<std::string>& damaged) {
    std::vector<fs::path> files;
    std::error_code error;  // a folder without snapshots/ yet, or one gone: nothing new
    for (fs::directory_iterator it(m_dir / RunFiles::kSnapshots, error), end; !error && it != end;
         it.increment(error)) {
        if (it->path().extension() == ".json" && !m_seen.count(it->path().filename().string())) {
            files.push_back(it->path());
        }
    }
    std::sort(files.begin(), files.end());
    std::vector<Snapshot> snapshots;
    for (const auto& file : files) {
        m_seen.insert(file.filename().string());
        try {
            snapshots.push_back(snapshotFromJson(nlohmann::json::parse(readFile(file))));
        } catch (const std::exception& e) {
            damaged.push_back(file.string() + ": damaged snapshot: " + e.what());
        }
    }
    std::sort(snapshots.begin(), snapshots.end(),
              [](const Snapshot& a, const Snapshot& b) { return a.step < b.step; });
    return snapshots;
}

RunFolder readRunFolder(const fs::path& dir) {
    RunFolder run;
    run.config = readRunConfig(dir);
    run.snapshots = SnapshotFollower(dir).poll(run.damaged);
    return run;
}

}  // namespace nope
