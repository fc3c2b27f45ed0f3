#include "study/manifest.h"

#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "util/enum_names.h"
#include "util/files.h"

namespace nope::study {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr EnumName<SweepMode> kModeNames[] = {{SweepMode::Init, "init"},
                                              {SweepMode::Trained, "trained"}};
constexpr EnumName<RunStatus> kStatusNames[] = {{RunStatus::Pending, "pending"},
                                                {RunStatus::Running, "running"},
                                                {RunStatus::Done, "done"},
                                                {RunStatus::Failed, "failed"},
                                                {RunStatus::Interrupted, "interrupted"}};
constexpr EnumName<Executor> kExecutorNames[] = {{Executor::Local, "local"},
                                                 {Executor::Slurm, "slurm"}};

// Written in the order the keys are documented (study/manifest.h), not sorted.
using OrderedJson = nlohmann::ordered_json;

OrderedJson runJson(const SweepRun& run) {
    OrderedJson settings = OrderedJson::object();
    for (const auto& [name, value] : run.settings) {
        settings[name] = value;
    }
    OrderedJson j = {{"id", run.id},
                     {"settings", settings},
                     {"seed", run.seed},
                     {"commands", run.commands},
                     {"status", toString(run.status)},
                     {"exit_code", nullptr},
                     {"seconds", nullptr},
                     {"log", run.log}};
    if (run.exitCode) {
        j["exit_code"] = *run.exitCode;
    }
    if (run.seconds) {
        j["seconds"] = *run.seconds;
    }
    return j;
}

// Reading: every problem names the file and the key.
class Reader {
public:
    explicit Reader(const fs::path& file) : m_file(file) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error(m_file.string() + ": " + what +
                                 " (allowed: a sweep.json written by nopescope-cli sweep)");
    }
    const Json& at(const Json& j, const std::string& key) const {
        if (!j.is_object() || !j.contains(key)) {
            fail("'" + key + "' is missing");
        }
        return j.at(key);
    }
    const Json& array(const Json& j, const std::string& key) const {
        if (!at(j, key).is_array()) {
            fail("'" + key + "' is not a list: " + at(j, key).dump());
        }
        return at(j, key);
    }
    template <typename T>
    T get(const Json& j, const std::string& key) const {
        try {
            return at(j, key).get<T>();
        } catch (const nlohmann::json::exception&) {
            fail("'" + key + "' has the wrong type: " + at(j, key).dump());
        }
    }
    template <typename E, size_t N>
    E name(const Json& j, const std::string& key, const EnumName<E> (&table)[N]) const {
        const auto value = parseName(table, get<std::string>(j, key));
        if (!value) {
            fail("'" + key + "' is '" + get<std::string>(j, key) + "', not one of " +
                 namesJoined(table));
        }
        return *value;
    }

private:
    fs::path m_file;
};

SweepRun readRun(const Reader& r, const Json& j, const Grid& grid) {
    SweepRun run;
    run.id = r.get<std::string>(j, "id");
    if (!isRunId(run.id)) {
        r.fail("run id '" + run.id + "' is not a run's folder name");
    }
    const Json& settings = r.at(j, "settings");
    for (const auto& axis : grid.axes) {
        run.settings.emplace_back(axis.name, r.get<std::string>(settings, axis.name));
    }
    run.seed = r.get<uint64_t>(j, "seed");
    run.commands = r.get<std::vector<Command>>(j, "commands");
    run.status = r.name(j, "status", kStatusNames);
    if (!r.at(j, "exit_code").is_null()) {
        run.exitCode = r.get<int>(j, "exit_code");
    }
    if (!r.at(j, "seconds").is_null()) {
        run.seconds = r.get<double>(j, "seconds");
    }
    run.log = r.get<std::string>(j, "log");
    return run;
}

OrderedJson slurmJson(const SlurmSettings& s) {
    OrderedJson arrays = OrderedJson::array();
    for (const auto& a : s.arrays) {
        arrays.push_back({{"job", a.jobId}, {"offset", a.offset}, {"runs", a.runs}});
    }
    return {{"partition", s.partition},       {"time", s.time},
            {"cpus_per_task", s.cpusPerTask}, {"array_parallelism", s.arrayParallelism},
            {"work_dir", s.workDir},          {"arrays", arrays}};
}

SlurmSettings readSlurm(const Reader& r, const Json& j) {
    SlurmSettings s;
    s.partition = r.get<std::string>(j, "partition");
    s.time = r.get<std::string>(j, "time");
    s.cpusPerTask = r.get<int>(j, "cpus_per_task");
    s.arrayParallelism = r.get<int>(j, "array_parallelism");
    s.workDir = r.get<std::string>(j, "work_dir");
    if (s.cpusPerTask < 1 || s.arrayParallelism < 0) {
        r.fail("'cpus_per_task' or 'array_parallelism' is out of range");
    }
    for (const auto& a : r.array(j, "arrays")) {
        s.arrays.push_back({r.get<std::string>(a, "job"), r.get<size_t>(a, "offset"),
                            r.get<std::vector<size_t>>(a, "runs")});
    }
    return s;
}

}  // namespace

std::string toString(SweepMode mode) {
    return nameOf(kModeNames, mode);
}

std::string toString(RunStatus status) {
    return nameOf(kStatusNames, status);
}

std::string toString(Executor executor) {
    return nameOf(kExecutorNames, executor);
}

fs::path runFolder(const fs::path& sweepDir, const SweepRun& run) {
    return sweepDir / SweepFiles::kRuns / run.id;
}

bool isRunId(const std::string& id) {
    if (id.empty() || id[0] == '.') {
        return false;
    }
    for (char c : id) {
        const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '=' || c == '-';
        if (!plain) {
            return false;
        }
    }
    return true;
}

void clearRunFolder(const fs::path& sweepDir, const SweepRun& run) {
    const fs::path runs = fs::absolute(sweepDir) / SweepFiles::kRuns;
    if (sweepDir.empty() || !isRunId(run.id) || !holdsSweep(sweepDir)) {
        throw std::runtime_error("refusing to remove '" + run.id + "' under " + runs.string() +
                                 ": not a run of a sweep folder");
    }
    std::error_code ec;
    fs::remove_all(runs / run.id, ec);
    if (ec) {
        throw std::runtime_error("cannot remove " + (runs / run.id).string() + ": " + ec.message());
    }
}

std::string manifestJson(const Manifest& m) {
    OrderedJson grid = OrderedJson::array();
    for (const auto& axis : m.grid.axes) {
        grid.push_back({{"name", axis.name}, {"values", axis.values}});
    }
    OrderedJson runs = OrderedJson::array();
    for (const auto& run : m.runs) {
        runs.push_back(runJson(run));
    }
    OrderedJson j = {{"version", m.version},
                     {"mode", toString(m.mode)},
                     {"preset", nullptr},
                     {"probes", m.probes},
                     {"grid", grid},
                     {"seeds", m.seeds},
                     {"fixed", m.fixed},
                     {"jobs", m.jobs},
                     {"threads_per_run", nullptr}};
    if (m.preset) {
        j["preset"] = *m.preset;
    }
    if (m.threadsPerRun) {
        j["threads_per_run"] = *m.threadsPerRun;
    }
    j["executor"] = toString(m.executor);
    if (m.executor == Executor::Slurm) {
        j["slurm"] = slurmJson(m.slurm);
    }
    j["runs"] = runs;
    return j.dump(2) + "\n";
}

Manifest parseManifest(const std::string& text, const fs::path& file) {
    const Reader r(file);
    Json j;
    try {
        j = Json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        r.fail(std::string("not valid JSON: ") + e.what());
    }
    Manifest m;
    m.version = r.get<int>(j, "version");
    if (m.version != kManifestVersion) {
        r.fail("version " + std::to_string(m.version) + " is not " +
               std::to_string(kManifestVersion));
    }
    m.mode = r.name(j, "mode", kModeNames);
    if (!r.at(j, "preset").is_null()) {
        m.preset = r.get<std::string>(j, "preset");
    }
    m.probes = r.get<bool>(j, "probes");
    for (const auto& axis : r.array(j, "grid")) {
        m.grid.axes.push_back(
            {r.get<std::string>(axis, "name"), r.get<std::vector<std::string>>(axis, "values")});
    }
    m.seeds = r.get<std::vector<uint64_t>>(j, "seeds");
    m.fixed = r.get<std::vector<std::string>>(j, "fixed");
    m.jobs = r.get<int>(j, "jobs");
    if (!r.at(j, "threads_per_run").is_null()) {
        m.threadsPerRun = r.get<int>(j, "threads_per_run");
    }
    if (j.contains("executor")) {
        m.executor = r.name(j, "executor", kExecutorNames);
    }
    if (m.executor == Executor::Slurm) {
        m.slurm = readSlurm(r, r.at(j, "slurm"));
    }
    std::set<std::string> ids;
    for (const auto& run : r.array(j, "runs")) {
        m.runs.push_back(readRun(r, run, m.grid));
        if (!ids.insert(m.runs.back().id).second) {
            r.fail("run id '" + m.runs.back().id + "' appears twice");
        }
    }
    if (m.runs.empty()) {
        r.fail("'runs' is empty");
    }
    for (const auto& array : m.slurm.arrays) {
        for (size_t run : array.runs) {
            if (run >= m.runs.size() || run < array.offset) {
                r.fail("array job " + array.jobId + " names run " + std::to_string(run) +
                       ", not one of its " + std::to_string(m.runs.size()) + " runs");
            }
        }
    }
    return m;
}

void writeManifest(const fs::path& sweepDir, const Manifest& manifest) {
    writeFileAtomic(sweepDir / SweepFiles::kManifest, manifestJson(manifest));
}

Manifest readManifest(const fs::path& sweepDir) {
    const fs::path file = sweepDir / SweepFiles::kManifest;
    return parseManifest(readFile(file), file);
}

bool holdsSweep(const fs::path& dir) {
    return fs::exists(dir / SweepFiles::kManifest);
}

}  // namespace nope::study
