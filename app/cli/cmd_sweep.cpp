// nopescope-cli sweep: runs a grid of settings times seeds as child commands of this executable
// (analyze, and probe with --probes, at init; train with --trained), a few at once, into one
// folder (study/manifest.h), then writes every run's rows and their means over seeds with 95%
// intervals (study/results.h). Resumable after Ctrl-C or failures. With --executor slurm the runs
// are the tasks of a Slurm job array instead (cli/sweep_slurm.h); the results are the same files.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/sweep_plan.h"
#include "cli/sweep_progress.h"
#include "cli/sweep_slurm.h"
#include "study/process_pool.h"
#include "study/results.h"
#include "training/presets.h"

namespace nope::cli {

namespace fs = std::filesystem;
using study::Manifest;
using study::RunStatus;

namespace {

study::StopRequest g_stop;

// A Ctrl-C at the terminal reaches the children too (the kernel sends it, si_code SI_KERNEL);
// from any other sender only this process gets it, and the pool forwards it.
void onStopSignal(int signal, siginfo_t* info, void*) {
    const bool fromTerminal = signal == SIGINT && info && info->si_code == SI_KERNEL;
    g_stop.request(!fromTerminal);
}

int cores() {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

struct Options {
    std::string grid;
    int seeds = 5;
    std::string seedList;
    std::string trained;
    bool probes = false;
    int jobs =
        0;  // 0: one per core (resolved after parsing, so that the help is the same anywhere)
    std::string out;
    std::string resume;
    std::vector<FlagGroup> fixed;
    std::string executor = "local";
    std::string partition;
    std::string time;
    int cpusPerTask = 1;
    int arrayParallelism = 0;
    bool detach = false;
    int runIndex = -1;
};

// The flags of the Slurm executor alone.
constexpr const char* kSlurmFlags[] = {"partition", "time", "cpus-per-task", "array-parallelism",
                                       "detach"};

// While a sweep runs, SIGINT and SIGTERM request a stop (g_stop) instead of ending the process.
class StopSignals {
public:
    StopSignals() {
        struct sigaction action {};
        action.sa_sigaction = onStopSignal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(SIGINT, &action, &m_oldInt);
        sigaction(SIGTERM, &action, &m_oldTerm);
    }
    ~StopSignals() {
        sigaction(SIGINT, &m_oldInt, nullptr);
        sigaction(SIGTERM, &m_oldTerm, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction m_oldInt {
    }, m_oldTerm{};
};

const std::set<std::string>& ownFlags() {
    static const std::set<std::string> kOwn = {"grid",
                                               "seeds",
                                               "seed-list",
                                               "trained",
                                               "probes",
                                               "jobs",
                                               "out",
                                               "resume",
                                               "executor",
                                               "partition",
                                               "time",
                                               "cpus-per-task",
                                               "array-parallelism",
                                               "detach",
                                               "run-index",
                                               "help"};
    return kOwn;
}

FlagSet sweepFlags(Options& o) {
    FlagSet flags(
        "nopescope-cli sweep --grid \"layers=6,12,24 dim=192,384,768\" [--seeds 5 | --seed-list "
        "A,B] [--trained PRESET] [--probes] [--jobs N] [fixed flags] --out DIR\n"
        "       nopescope-cli sweep ... --executor slurm [--partition P] [--time HH:MM:SS] "
        "[--cpus-per-task N] [--array-parallelism K] [--detach] --out DIR\n"
        "       nopescope-cli sweep --resume DIR [--jobs N | Slurm flags]",
        "Runs every combination of the grid's values (settings, by the names of the other\n"
        "commands' flags) for each seed, as child commands of this executable, --jobs at a time:\n"
        "at init `analyze` (and `probe` with --probes), with --trained `train --preset PRESET`.\n"
        "Every other flag is fixed and passed to each command that takes it (--task reversal\n"
        "--heads 2 --samples 128). Each run writes DIR/runs/<id>/ and its log.txt; DIR/sweep.json\n"
        "records each run's state. At the end DIR/sweep.csv holds every run's rows (scores per\n"
        "point and layer, best accuracy, probe R and NRMSE) and DIR/summary.csv their means over\n"
        "seeds with 95% intervals (Student's t). Every command is checked (--check) before any\n"
        "runs. Ctrl-C stops the running children; --resume DIR runs what is not done.\n"
        "With --executor slurm each run is a task of a Slurm job array (DIR/slurm/array-N.sbatch,\n"
        "submitted with sbatch from DIR); the sweep follows it with squeue and gathers the same\n"
        "files. Ctrl-C stops following (the array keeps running); --resume DIR follows what is\n"
        "still queued or running, then submits only the runs that did not finish.\n"
        "Exit status: 0 all runs done, 1 some failed, 2 bad flags, 130 interrupted.");
    flags.addString("grid", &o.grid,
                    "axes as name=v1,v2,... separated by spaces; the first varies slowest",
                    "\"NAME=A,B ...\"");
    flags.addInt("seeds", &o.seeds, "seeds 1 to N for every cell (--seed of each command)", 1,
                 10000);
    flags.addString("seed-list", &o.seedList, "these seeds instead of --seeds", "A,B");
    flags.addChoice("trained", &o.trained,
                    "train each run from this preset and report its init and trained scores and "
                    "best accuracy (default: analyze at initialization)",
                    presetNames());
    flags.addSwitch("probes", &o.probes,
                    "also run position probes on each model at init (probe's flags are fixed "
                    "flags too)");
    flags.addInt("jobs", &o.jobs,
                 "runs at once (0 = one per core); each gets cores/jobs threads unless --threads "
                 "is fixed",
                 0, 256);
    flags.addString("out", &o.out, "a new folder for the sweep", "DIR");
    flags.addString("resume", &o.resume, "continue the sweep in DIR: runs every run not done",
                    "DIR");
    flags.addChoice("executor", &o.executor,
                    "where the runs run: child processes here, or a Slurm job array",
                    {"local", "slurm"});
    flags.addString("partition", &o.partition,
                    "Slurm: the partition(s) of the array (default: the cluster's)", "P");
    flags.addString("time", &o.time,
                    "Slurm: each run's time limit, MM, HH:MM:SS or D-HH:MM:SS (default: the "
                    "partition's)",
                    "HH:MM:SS");
    flags.addInt("cpus-per-task", &o.cpusPerTask,
                 "Slurm: cores per run, and its --threads unless --threads is fixed", 1, 1024);
    flags.addInt("array-parallelism", &o.arrayParallelism,
                 "Slurm: array tasks at once (default: as many as the cluster gives)", 1, 100000);
    flags.addSwitch("detach", &o.detach,
                    "Slurm: submit and return; --resume DIR later follows and gathers");
    flags.addInt("run-index", &o.runIndex,
                 "run run N of the sweep in --out DIR (what each Slurm array task runs)", 0,
                 100000000);
    return flags;
}

// Sorts the arguments into the sweep's own flags (parsed) and the fixed ones (kept as given).
std::optional<int> parseOptions(const Args& args, Options& o, FlagSet& flags) {
    std::vector<FlagGroup> groups;
    if (auto error = groupFlags(args, groups)) {
        return usageError("sweep", *error);
    }
    Args own;
    for (auto& g : groups) {
        if (ownFlags().count(g.name)) {
            own.insert(own.end(), g.tokens.begin(), g.tokens.end());
        } else {
            o.fixed.push_back(std::move(g));
        }
    }
    if (auto error = flags.parse(own)) {
        return usageError("sweep", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    if (o.jobs == 0) {
        o.jobs = cores();
    }
    return std::nullopt;
}

// The fixed flags the sweep cannot pass on.
std::optional<std::string> fixedFlagProblem(const Options& o, const study::Grid& grid) {
    for (const auto& g : o.fixed) {
        const std::string name = canonicalFlag(g.name);
        if (name == "seed") {
            return "--seed: set by the sweep for each run (allowed: --seeds N or --seed-list A,B)";
        }
        if (name == "check") {
            return "--check: the sweep checks every command itself before it runs any";
        }
        if (name == "preset" && !o.trained.empty()) {
            return "--preset: the training preset is --trained's (allowed: --trained PRESET)";
        }
        for (const auto& axis : grid.axes) {
            if (axis.name == name) {
                return "--" + g.name +
                       ": also an axis of --grid (allowed: a setting either "
                       "fixed or swept)";
            }
        }
    }
    return std::nullopt;
}

bool fixesThreads(const std::vector<std::string>& fixed) {
    std::vector<FlagGroup> groups;
    groupFlags(fixed, groups);
    for (const auto& g : groups) {
        if (canonicalFlag(g.name) == "threads") {
            return true;
        }
    }
    return false;
}

void fillRuns(Manifest& m) {
    const auto cells = study::expandGrid(m.grid, m.seeds);
    for (size_t i = 0; i < cells.size(); ++i) {
        study::SweepRun run;
        run.id = study::runId(i, cells.size(), m.grid, cells[i]);
        for (size_t a = 0; a < m.grid.axes.size(); ++a) {
            run.settings.emplace_back(m.grid.axes[a].name, cells[i].values[a]);
        }
        run.seed = cells[i].seed;
        run.log =
            std::string(study::SweepFiles::kRuns) + "/" + run.id + "/" + study::SweepFiles::kLog;
        m.runs.push_back(std::move(run));
    }
}

// The executor's flags against m.executor; a Slurm sweep takes them into m.slurm (a resumed one
// only those given, so that a resume can raise the time limit of runs that ran out of it).
std::optional<int> checkExecutorFlags(const Options& o, const FlagSet& flags, Manifest& m) {
    if (m.executor == study::Executor::Local) {
        for (const char* name : kSlurmFlags) {
            if (flags.given(name)) {
                return usageError("sweep", std::string("--") + name +
                                               ": only with the Slurm executor (allowed: "
                                               "--executor slurm, and --resume of such a sweep)");
            }
        }
        return std::nullopt;
    }
    if (flags.given("jobs")) {
        return usageError("sweep",
                          "--jobs: the local executor's runs at once (allowed with the Slurm "
                          "executor: --array-parallelism K)");
    }
    if (flags.given("partition") && !study::isPartitionName(o.partition)) {
        return usageError("sweep", "--partition: '" + o.partition +
                                       "' is not a partition name (allowed: letters, digits, "
                                       "'_', '-', '.'; several joined by ',')");
    }
    if (flags.given("time")) {
        if (auto problem = study::slurmTimeProblem(o.time)) {
            return usageError("sweep", "--time: " + *problem);
        }
    }
    if (auto problem = slurmCommandsProblem()) {
        return usageError("sweep", *problem);
    }
    study::SlurmSettings& s = m.slurm;
    s.partition = flags.given("partition") ? o.partition : s.partition;
    s.time = flags.given("time") ? o.time : s.time;
    s.arrayParallelism = flags.given("array-parallelism") ? o.arrayParallelism : s.arrayParallelism;
    if (flags.given("cpus-per-task")) {
        s.cpusPerTask = o.cpusPerTask;
        if (m.threadsPerRun) {
            m.threadsPerRun = o.cpusPerTask;
        }
    }
    return std::nullopt;
}

// A new sweep: its flags checked one after the other, then its runs laid out.
std::optional<int> planFresh(const Options& o, const FlagSet& flags, Manifest& m, fs::path& dir) {
    if (o.grid.empty()) {
        return usageError("sweep",
                          "--grid: needed (allowed: \"name=v1,v2 ...\" over settings, "
                          "e.g. --grid \"layers=6,12 dim=192,384\"); or --resume DIR");
    }
    if (o.out.empty()) {
        return usageError("sweep", "--out: needed (allowed: a new folder for the sweep)");
    }
    try {
        m.grid = study::parseGrid(o.grid);
    } catch (const std::invalid_argument& e) {
        return usageError("sweep", std::string("--grid: ") + e.what());
    }
    if (flags.given("seeds") && flags.given("seed-list")) {
        return usageError("sweep", "--seed-list: not with --seeds (allowed: one of them)");
    }
    try {
        m.seeds = o.seedList.empty() ? study::seedRange(o.seeds) : study::parseSeedList(o.seedList);
    } catch (const std::invalid_argument& e) {
        return usageError("sweep", std::string("--seed-list: ") + e.what());
    }
    if (o.probes && !o.trained.empty()) {
        return usageError("sweep",
                          "--probes: only at init (allowed: --probes without --trained; training "
                          "probes as its --probe-every says)");
    }
    if (auto problem = fixedFlagProblem(o, m.grid)) {
        return usageError("sweep", *problem);
    }
    m.executor = o.executor == "slurm" ? study::Executor::Slurm : study::Executor::Local;
    if (auto exit = checkExecutorFlags(o, flags, m)) {
        return *exit;
    }
    if (m.executor == study::Executor::Slurm) {
        m.slurm.workDir = fs::current_path().string();  // where relative paths in flags point
    }
    dir = fs::absolute(o.out);
    if (fs::exists(dir) && !fs::is_directory(dir)) {
        return usageError("sweep", "--out: '" + o.out + "' is a file (allowed: a folder)");
    }
    if (study::holdsSweep(dir)) {
        return usageError("sweep", "--out: '" + o.out +
                                       "' already holds a sweep (allowed: a new folder; or "
                                       "continue it with --resume " +
                                       o.out + ")");
    }
    m.mode = o.trained.empty() ? study::SweepMode::Init : study::SweepMode::Trained;
    if (!o.trained.empty()) {
        m.preset = o.trained;
    }
    m.probes = o.probes;
    for (const auto& g : o.fixed) {
        m.fixed.insert(m.fixed.end(), g.tokens.begin(), g.tokens.end());
    }
    m.jobs = o.jobs;
    if (!fixesThreads(m.fixed)) {
        m.threadsPerRun =
            m.executor == study::Executor::Slurm ? o.cpusPerTask : std::max(1, cores() / o.jobs);
    }
    fillRuns(m);
    return std::nullopt;
}

std::optional<int> planResume(const Options& o, const FlagSet& flags, Manifest& m, fs::path& dir) {
    for (const char* name :
         {"grid", "seeds", "seed-list", "trained", "probes", "out", "executor"}) {
        if (flags.given(name)) {
            return usageError("sweep", std::string("--") + name +
                                           ": not with --resume (allowed: --jobs, or the Slurm "
                                           "flags; the rest comes from the sweep's sweep.json)");
        }
    }
    if (!o.fixed.empty()) {
        return usageError("sweep", "--" + o.fixed.front().name +
                                       ": not with --resume (allowed: --jobs; the fixed flags "
                                       "come from the sweep's sweep.json)");
    }
    dir = fs::absolute(o.resume);
    if (!study::holdsSweep(dir)) {
        return usageError("sweep", "--resume: '" + o.resume +
                                       "' holds no sweep.json (allowed: a folder written by "
                                       "nopescope-cli sweep)");
    }
    m = study::readManifest(dir);  // a damaged file throws, naming it
    if (auto exit = checkExecutorFlags(o, flags, m)) {
        return *exit;
    }
    if (m.executor == study::Executor::Slurm) {
        return std::nullopt;
    }
    if (flags.given("jobs")) {
        m.jobs = o.jobs;
    }
    if (m.threadsPerRun) {
        m.threadsPerRun = std::max(1, cores() / m.jobs);
    }
    return std::nullopt;
}

std::string threadsText(const Manifest& m) {
    if (!m.threadsPerRun) {
        return "";
    }
    return ", " + std::to_string(*m.threadsPerRun) +
           (*m.threadsPerRun == 1 ? " thread each" : " threads each");
}

// Runs every run not done; the manifest follows each start and end.
void runPending(Manifest& m, const fs::path& dir, SweepProgress& progress) {
    std::vector<size_t> order;
    std::vector<study::PoolJob> jobs;
    for (size_t i = 0; i < m.runs.size(); ++i) {
        if (m.runs[i].status != RunStatus::Done) {
            order.push_back(i);
            jobs.push_back({m.runs[i].commands, dir / m.runs[i].log});
        }
    }
    study::PoolCallbacks callbacks;
    callbacks.started = [&](size_t j) {
        m.runs[order[j]].status = RunStatus::Running;
        study::writeManifest(dir, m);
        progress.started();
    };
    callbacks.ended = [&](const study::JobEnd& end) {
        study::SweepRun& run = m.runs[order[end.index]];
        run.status = end.outcome == study::JobOutcome::Done     ? RunStatus::Done
                     : end.outcome == study::JobOutcome::Failed ? RunStatus::Failed
                                                                : RunStatus::Interrupted;
        run.exitCode = end.exitCode;
        run.seconds = end.seconds;
        study::writeManifest(dir, m);
        progress.ended(run);
    };
    {
        const StopSignals signals;
        study::runJobs(jobs, m.jobs, g_stop, callbacks);
    }
    progress.finish();
}

// Writes sweep.csv and summary.csv from the runs done; prints the table and what failed.
int finishSweep(const Manifest& m, const fs::path& dir) {
    std::vector<std::string> problems;
    const study::SweepResults results = study::collectResults(dir, m, problems);
    study::writeResults(dir, results);
    int failed = 0;
    for (const auto& run : m.runs) {
        if (run.status == RunStatus::Failed) {
            std::fprintf(stderr, "failed: %s (exit %d), log %s\n", run.id.c_str(),
                         run.exitCode.value_or(-1), (dir / run.log).c_str());
            failed += 1;
        }
    }
    for (const auto& problem : problems) {
        std::fprintf(stderr, "unreadable results: %s\n", problem.c_str());
    }
    if (!g_stop.requested()) {
        printSummaryTable(results);
    }
    std::printf("wrote %s and %s (%zu of %zu runs)\n", (dir / study::SweepFiles::kSweepCsv).c_str(),
                (dir / study::SweepFiles::kSummaryCsv).c_str(), results.runs.size(), m.runs.size());
    return failed > 0 || !problems.empty() ? kExitFailure : kExitOk;
}

// `sweep --run-index N --out DIR`, what a Slurm array task runs.
int runTask(const Options& o, const FlagSet& flags) {
    for (const auto& name : ownFlags()) {
        if (name != "run-index" && name != "out" && flags.given(name)) {
            return usageError("sweep",
                              "--" + name +
                                  ": not with --run-index (allowed: --run-index N --out DIR, "
                                  "the rest comes from the sweep's sweep.json)");
        }
    }
    if (!o.fixed.empty()) {
        return usageError("sweep", "--" + o.fixed.front().name +
                                       ": not with --run-index (allowed: --run-index N --out DIR)");
    }
    if (o.out.empty() || !study::holdsSweep(o.out)) {
        return usageError("sweep",
                          "--out: '" + o.out +
                              "' holds no sweep.json (allowed with --run-index: the folder "
                              "of a sweep)");
    }
    const StopSignals signals;
    return runSweepTask(fs::absolute(o.out), o.runIndex, g_stop);
}

int runSlurmSweep(Manifest& m, const fs::path& dir, const SweepPlan& plan, bool resume,
                  bool detach) {
    const auto& s = m.slurm;
    std::fprintf(stderr, "sweep of %zu runs into %s on Slurm: %d cpus per run%s%s\n", m.runs.size(),
                 dir.c_str(), s.cpusPerTask,
                 s.arrayParallelism > 0
                     ? (", " + std::to_string(s.arrayParallelism) + " at once").c_str()
                     : "",
                 s.time.empty() ? "" : (", time limit " + s.time).c_str());
    SweepProgress progress(m, dir, s.arrayParallelism > 0 ? s.arrayParallelism : 1);
    SlurmSubmission submission;
    submission.resume = resume;
    submission.detach = detach;
    submission.commandsFor = [&plan](const study::SweepRun& run) { return plan.commandsFor(run); };
    SlurmEnd end;
    {
        const StopSignals signals;
        end = runOnSlurm(m, dir, submission, progress, g_stop);
    }
    progress.finish();
    switch (end) {
        case SlurmEnd::Detached:
            return kExitOk;
        case SlurmEnd::Failed:
            std::fprintf(stderr,
                         "the runs not done stay in %s; try again with: nopescope-cli "
                         "sweep --resume %s\n",
                         (dir / study::SweepFiles::kManifest).c_str(), dir.c_str());
            return kExitFailure;
        case SlurmEnd::Interrupted: {
            finishSweep(m, dir);
            std::set<std::string> jobs;
            for (const auto& array : m.slurm.arrays) {
                for (size_t run : array.runs) {
                    if (m.runs[run].status == RunStatus::Pending ||
                        m.runs[run].status == RunStatus::Running) {
                        jobs.insert(array.jobId);
                    }
                }
            }
            std::string ids;
            for (const auto& job : jobs) {
                ids += " " + job;
            }
            std::fprintf(stderr,
                         "stopped following; the submitted runs keep running in Slurm (stop "
                         "them with: scancel%s); gather with: nopescope-cli sweep --resume %s\n",
                         ids.c_str(), dir.c_str());
            return kExitInterrupted;
        }
        case SlurmEnd::Ended:
            break;
    }
    return finishSweep(m, dir);
}

}  // namespace

int runSweep(const Args& args) {
    Options o;
    FlagSet flags = sweepFlags(o);
    if (auto exit = parseOptions(args, o, flags)) {
        return *exit;
    }
    if (flags.given("run-index")) {
        return runTask(o, flags);
    }
    Manifest m;
    fs::path dir;
    const bool resume = flags.given("resume");
    if (auto exit = resume ? planResume(o, flags, m, dir) : planFresh(o, flags, m, dir)) {
        return *exit;
    }
    SweepPlan plan(m, dir);
    if (auto exit = plan.prepare()) {
        return *exit;
    }
    if (m.executor == study::Executor::Slurm) {
        return runSlurmSweep(m, dir, plan, resume, o.detach);
    }
    for (auto& run : m.runs) {
        if (run.status == RunStatus::Done) {
            continue;
        }
        if (resume) {
            study::clearRunFolder(dir, run);
        }
        run = {run.id, run.settings, run.seed, plan.commandsFor(run), RunStatus::Pending,
               {},     {},           run.log};
    }
    study::writeManifest(dir, m);
    std::fprintf(stderr, "sweep of %zu runs into %s, %d at a time%s\n", m.runs.size(), dir.c_str(),
                 m.jobs, threadsText(m).c_str());
    SweepProgress progress(m, dir, m.jobs);
    runPending(m, dir, progress);
    if (g_stop.requested()) {
        finishSweep(m, dir);
        std::fprintf(stderr,
                     "interrupted: %d of %zu runs done; continue with: nopescope-cli sweep "
                     "--resume %s\n",
                     progress.done(), m.runs.size(), dir.c_str());
        return kExitInterrupted;
    }
    return finishSweep(m, dir);
}

}  // namespace nope::cli
