#include "run/run_folder.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
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

// The step a table row starts with, or -1 for a line that does not start with one.
int stepOfRow(const std::string& row) {
    int step = 0;
    size_t i = 0;
    for (; i < row.size() && i < 9 && std::isdigit(static_cast<unsigned char>(row[i])); ++i) {
        step = step * 10 + (row[i] - '0');
    }
    return i > 0 && i < row.size() && row[i] == ',' ? step : -1;
}

// The rows of a table up to `step`: a line that is not a row (a torn last line, written by a
// version that appended) is left out.
std::vector<std::string> rowsUpTo(const fs::path& file, int step) {
    std::vector<std::string> rows;
    if (!fs::exists(file)) {
        return rows;
    }
    std::istringstream in(readFile(file));
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        const int rowStep = stepOfRow(line);
        if (rowStep >= 0 && rowStep <= step) {
            rows.push_back(line);
        }
    }
    return rows;
}

// Drops the rows of `step` and later: a snapshot taken again replaces its rows.
void dropFrom(std::vector<std::string>& rows, int step) {
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [step](const std::string& row) { return stepOfRow(row) >= step; }),
               rows.end());
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
    if (continuing) {
        // A resumed run goes on from its checkpoint: what was recorded after it is redone.
        m_metricsRows = rowsUpTo(m_dir / RunFiles::kMetrics, fromStep);
        m_adjacencyRows = rowsUpTo(m_dir / RunFiles::kAdjacency, fromStep);
        m_probeRows = rowsUpTo(m_dir / RunFiles::kProbes, fromStep);
        // and the temporary files of writes a killed process left unfinished
        for (const fs::path& folder : {m_dir, m_dir / RunFiles::kSnapshots}) {
            for (const auto& entry : fs::directory_iterator(folder)) {
                const std::string name = entry.path().filename().string();
                const bool later =
                    name.rfind("step_", 0) == 0 && std::atoi(name.c_str() + 5) > fromStep;
                if (later || name.find(".tmp") != std::string::npos) {
                    fs::remove(entry.path(), ec);
                }
            }
        }
    }
}

void RunWriter::writeConfig(const nlohmann::json& config) const {
    writeFileAtomic(m_dir / RunFiles::kConfig, config.dump(2) + "\n");
}

void RunWriter::add(const Snapshot& s) {
    // a run resumed from a checkpoint of step 0 analyses the model at init again
    for (auto* rows : {&m_metricsRows, &m_adjacencyRows, &m_probeRows}) {
        dropFrom(*rows, s.step);
    }
    m_metricsRows.push_back(std::to_string(s.step) + "," + cell(s.trainLoss, 6) + "," +
                            cell(s.eval.testLoss, 6) + "," + fixed(s.eval.accuracy, 2) + "," +
                            shortest(static_cast<float>(s.learningRate)) + "," +
                            fixed(s.tokensPerSecond, 0) + "," + fixed(s.elapsedSeconds, 1) + "," +
                            std::to_string(s.eval.step));
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
    writeFileAtomic(m_dir / RunFiles::kSnapshots / snapshotFileName(s.step),
                    toJson(s).dump() + "\n");
    rewriteTables();
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

RunFolder readRunFolder(const fs::path& dir) {
    RunFolder run;
    const fs::path configPath = dir / RunFiles::kConfig;
    if (!fs::exists(configPath)) {
        throw std::runtime_error(dir.string() + " is not a run folder (it has no config.json)");
    }
    try {
        run.config = nlohmann::json::parse(readFile(configPath));
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(configPath.string() + ": not valid JSON: " + e.what());
    }
    std::vector<fs::path> files;
    if (fs::exists(dir / RunFiles::kSnapshots)) {
        for (const auto& entry : fs::directory_iterator(dir / RunFiles::kSnapshots)) {
            if (entry.path().extension() == ".json") {
                files.push_back(entry.path());
            }
        }
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        try {
            run.snapshots.push_back(snapshotFromJson(nlohmann::json::parse(readFile(file))));
        } catch (const std::exception& e) {
            run.damaged.push_back(file.string() + ": damaged snapshot: " + e.what());
        }
    }
    std::sort(run.snapshots.begin(), run.snapshots.end(),
              [](const Snapshot& a, const Snapshot& b) { return a.step < b.step; });
    return run;
}

}  // namespace nope
