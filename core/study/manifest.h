// The manifest of a sweep folder, sweep.json: what the sweep runs (mode, grid, seeds, the fixed
// flags, the commands of every run) and where each run stands. Rewritten atomically after every
// change of a run's status, so that an interrupted sweep can be resumed from it.
//   DIR/sweep.json         this manifest
//   DIR/runs/<id>/         one folder per run, with log.txt (the commands' output)
//   DIR/sweep.csv          every finished run's rows (study/results.h)
//   DIR/summary.csv        the rows aggregated over seeds
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "study/grid.h"
#include "study/slurm.h"

namespace nope::study {

inline constexpr int kManifestVersion = 1;

struct SweepFiles {
    static constexpr const char* kManifest = "sweep.json";
    static constexpr const char* kRuns = "runs";
    static constexpr const char* kLog = "log.txt";
    static constexpr const char* kSweepCsv = "sweep.csv";
    static constexpr const char* kSummaryCsv = "summary.csv";
};

enum class SweepMode { Init, Trained };
// Where the runs run: child processes of the sweep, or array tasks of a Slurm job array.
enum class Executor { Local, Slurm };
enum class RunStatus { Pending, Running, Done, Failed, Interrupted };

std::string toString(SweepMode mode);
std::string toString(RunStatus status);
std::string toString(Executor executor);

using Command = std::vector<std::string>;  // argv, the executable first

struct SweepRun {
    std::string id;  // the folder name under runs/ (runId)
    std::vector<std::pair<std::string, std::string>> settings;  // axis name and value, in order
    uint64_t seed = 0;
    std::vector<Command> commands;  // run in order; the first that fails ends the run
    RunStatus status = RunStatus::Pending;
    std::optional<int> exitCode;
    std::optional<double> seconds;
    std::string log;  // relative to the sweep folder: "runs/<id>/log.txt"
};

struct Manifest {
    int version = kManifestVersion;
    SweepMode mode = SweepMode::Init;
    std::optional<std::string> preset;  // the training preset (trained mode)
    bool probes = false;
    Grid grid;
    std::vector<uint64_t> seeds;
    std::vector<std::string> fixed;  // the fixed flags as given, passed to every command
    int jobs = 1;
    std::optional<int> threadsPerRun;     // none when the fixed flags set --threads
    Executor executor = Executor::Local;  // a sweep.json without the key was run locally
    SlurmSettings slurm;                  // with Executor::Slurm
    std::vector<SweepRun> runs;
};

// The folder of a run.
std::filesystem::path runFolder(const std::filesystem::path& sweepDir, const SweepRun& run);
// Whether `id` is a plain folder name as runId makes them: never empty, ".", ".." or a path.
bool isRunId(const std::string& id);
// Removes what a run left in its folder (before it runs again). Only ever DIR/runs/<id>: throws
// std::runtime_error, removing nothing, unless DIR holds a sweep and the id is a plain name.
void clearRunFolder(const std::filesystem::path& sweepDir, const SweepRun& run);

std::string manifestJson(const Manifest& manifest);
// Throws std::runtime_error naming `file` and what is wrong (version, a missing or mistyped key).
Manifest parseManifest(const std::string& text, const std::filesystem::path& file);

// DIR/sweep.json, written atomically; throws std::runtime_error naming the file.
void writeManifest(const std::filesystem::path& sweepDir, const Manifest& manifest);
Manifest readManifest(const std::filesystem::path& sweepDir);
bool holdsSweep(const std::filesystem::path& dir);

}  // namespace nope::study
