// How `nopescope-cli sweep --executor slurm` follows its arrays (cli/sweep_slurm.h): squeue's
// states (one line a task), each run's status file, sacct for tasks squeue no longer lists, a
// grace period for status files a network file system shows late, and squeue outages waited
// out. Only cli/sweep_slurm.cpp includes it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/sweep_progress.h"
#include "cli/sweep_slurm.h"
#include "study/manifest.h"
#include "study/slurm.h"
#include "util/stopwatch.h"

namespace nope::cli::slurm_follow {

namespace fs = std::filesystem;
using study::Manifest;
using study::RunStatus;
using study::SlurmArray;
using study::SlurmPhase;

using Clock = std::chrono::steady_clock;

// squeue's answer may fail for a while (a controller restarting); past this the sweep gives up
// following and says how to pick it up again.
inline constexpr double kSqueueGiveUpSeconds = 600.0;
// Polls after which a task that neither squeue nor sacct knows, with no status file, is lost.
inline constexpr int kMissingPolls = 3;

inline double secondsFromEnvironment(const char* name, double fallback) {
    const char* text = std::getenv(name);
    double seconds = fallback;
    if (text && *text) {
        try {
            seconds = std::stod(text);
        } catch (const std::exception&) {
        }
    }
    return seconds;
}

inline double pollSeconds() {
    return std::clamp(secondsFromEnvironment("NOPESCOPE_SLURM_POLL_SECONDS", 10.0), 0.05, 600.0);
}

// How long a task Slurm saw end may take to show its status file: on a network file system the
// login node may see a new file only after its attribute cache expires (up to about a minute).
inline double graceSeconds() {
    return std::clamp(
        secondsFromEnvironment("NOPESCOPE_SLURM_GRACE_SECONDS", std::max(60.0, 3 * pollSeconds())),
        0.0, 3600.0);
}

inline std::string firstLine(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    return line.empty() ? "(no message)" : line;
}

inline void appendToLog(const fs::path& log, const std::string& line) {
    std::error_code ec;
    fs::create_directories(log.parent_path(), ec);
    std::ofstream(log, std::ios::app) << line << "\n";
}

// The latest array that holds each run (a run submitted again is taken out of the older ones).
inline std::map<size_t, const SlurmArray*> arrayOfRun(const Manifest& m) {
    std::map<size_t, const SlurmArray*> out;
    for (const auto& array : m.slurm.arrays) {
        for (size_t run : array.runs) {
            out[run] = &array;
        }
    }
    return out;
}

inline std::string taskName(const SlurmArray& array, size_t run) {
    return array.jobId + "_" + std::to_string(run - array.offset);
}

inline bool active(RunStatus status) {
    return status == RunStatus::Pending || status == RunStatus::Running;
}

inline std::optional<study::TaskEnd> statusOf(const fs::path& dir, const study::SweepRun& run) {
    return study::readTaskEnd(study::runFolder(dir, run) / study::kTaskEndFile);
}

// What squeue says of the tasks of some arrays.
struct Queue {
    std::map<std::string, std::string> states;  // by "<job>_<task>"
};

// Follows the submitted runs, one poll at a time.
class Follower {
public:
    Follower(Manifest& m, fs::path dir, SweepProgress& progress)
        : m_m(m),
          m_dir(std::move(dir)),
          m_progress(progress),
          m_sacct(study::inPath("sacct")),
          m_grace(graceSeconds()) {}

    // Until no submitted run is queued or running, or a stop; Failed when squeue stopped answering.
    SlurmEnd follow(study::StopRequest& stop) {
        const double interval = pollSeconds();
        while (true) {
            const auto state = poll();
            if (!state) {
                return SlurmEnd::Failed;
            }
            if (!*state) {
                return SlurmEnd::Ended;
            }
            const auto until = Clock::now() + std::chrono::duration<double>(interval);
            while (Clock::now() < until && !stop.requested()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            if (stop.requested()) {
                return SlurmEnd::Interrupted;
            }
        }
    }

    // Before a resume submits anything: a run that did not finish but whose task Slurm still
    // holds queued or running (whatever sweep.json says) is followed, never submitted again.
    // False when squeue does not answer.
    bool reclaim() {
        const auto arrays = arrayOfRun(m_m);
        std::set<std::string> jobs;
        for (const auto& [i, array] : arrays) {
            if (m_m.runs[i].status != RunStatus::Done) {
                jobs.insert(array->jobId);
            }
        }
        if (jobs.empty()) {
            return true;
        }
        const auto queue = squeue(jobs);
        if (!queue) {
            return false;
        }
        for (const auto& [i, array] : arrays) {
            study::SweepRun& run = m_m.runs[i];
            const auto state = queue->states.find(taskName(*array, i));
            if (run.status == RunStatus::Done || statusOf(m_dir, run) ||
                state == queue->states.end()) {
                continue;
            }
            const auto phase = study::phaseOf(state->second);
            if (phase != SlurmPhase::Ended) {
                run.status = phase == SlurmPhase::Queued ? RunStatus::Pending : RunStatus::Running;
            }
        }
        return true;
    }

    // One look at squeue and the status files: whether submitted runs are still queued or
    // running; nothing when squeue has not answered for too long.
    std::optional<bool> poll() {
        const auto arrays = arrayOfRun(m_m);
        std::set<std::string> jobs;
        for (const auto& [i, array] : arrays) {
            if (active(m_m.runs[i].status)) {
                jobs.insert(array->jobId);
            }
        }
        if (jobs.empty()) {
            return false;
        }
        const auto queue = squeue(jobs);
        if (!queue && m_squeueFailingSince &&
            secondsSince(*m_squeueFailingSince) > kSqueueGiveUpSeconds) {
            std::fprintf(stderr, "squeue has failed for %.0f s: stopped following\n",
                         secondsSince(*m_squeueFailingSince));
            return std::nullopt;
        }
        std::vector<size_t> unknown;
        bool changed = false;
        for (const auto& [i, arrayPointer] : arrays) {
            study::SweepRun& run = m_m.runs[i];
            const SlurmArray& array = *arrayPointer;
            if (!active(run.status)) {
                continue;
            }
            if (auto end = statusOf(m_dir, run)) {
                changed |= finish(run, end->status, end->exitCode, end->seconds);
                continue;
            }
            if (!queue) {
                continue;  // squeue did not answer: the status files alone this time
            }
            const std::string task = taskName(array, i);
            const auto state = queue->states.find(task);
            if (state != queue->states.end()) {
                m_missing.erase(task);
                changed |= follow(run, array, i, state->second);
            } else {
                // squeue (with -r, one line a task) no longer lists it: purged after its end, or
                // cancelled while queued, which leaves no record of its own
                unknown.push_back(i);
            }
        }
        if (!unknown.empty()) {
            changed |= lookUpEnded(unknown, arrays);
        }
        if (changed) {
            study::writeManifest(m_dir, m_m);
        }
        for (const auto& [i, array] : arrays) {
            if (active(m_m.runs[i].status)) {
                return true;
            }
        }
        return false;
    }

    // A new submission starts its counts afresh.
    void forgetMissing() {
        m_missing.clear();
        m_endedSince.clear();
    }

private:
    // squeue's states, one line per task (-r); nothing when it failed.
    std::optional<Queue> squeue(const std::set<std::string>& jobs) {
        std::string ids;
        for (const auto& job : jobs) {
            ids += (ids.empty() ? "" : ",") + job;
        }
        const auto result = study::runCaptured(
            {"squeue", "-h", "-r", "-t", "all", "-j", ids, "-o", study::kSqueueFormat});
        // A job the controller has forgotten makes squeue complain; the rest is still printed.
        const bool forgotten = result.err.find("Invalid job id") != std::string::npos;
        if (result.exitCode != 0 && !forgotten) {
            if (!m_squeueFailingSince) {
                m_squeueFailingSince = Clock::now();
                std::fprintf(stderr, "squeue failed (exit %d): %s; asking again\n", result.exitCode,
                             firstLine(result.err).c_str());
            }
            return std::nullopt;
        }
        m_squeueFailingSince.reset();
        Queue queue;
        for (const auto& line : study::parseSqueue(result.out)) {
            for (size_t task : line.tasks) {
                queue.states[line.jobId + "_" + std::to_string(task)] = line.state;
            }
        }
        return queue;
    }

    bool follow(study::SweepRun& run, const SlurmArray& array, size_t index,
                const std::string& state) {
        switch (study::phaseOf(state)) {
            case SlurmPhase::Queued:
                return false;
            case SlurmPhase::Running:
                if (run.status != RunStatus::Running) {
                    run.status = RunStatus::Running;
                    m_progress.started();
                    return true;
                }
                return false;
            case SlurmPhase::Ended:
                break;
        }
        return endedWithoutStatus(run, array, index, state);
    }

    // An array task Slurm saw end while the run's status file is not there (yet): after the grace
    // period, the run ended before it could write it (killed at its time limit, cancelled, out
    // of memory, a node lost).
    bool endedWithoutStatus(study::SweepRun& run, const SlurmArray& array, size_t index,
                            const std::string& state) {
        const std::string task = taskName(array, index);
        const auto since = m_endedSince.emplace(task, Clock::now()).first->second;
        // listing the folder makes a network file system look again
        std::error_code ec;
        for (auto it = fs::directory_iterator(study::runFolder(m_dir, run), ec);
             !ec && it != fs::directory_iterator(); it.increment(ec)) {
        }
        if (auto end = statusOf(m_dir, run)) {
            return finish(run, end->status, end->exitCode, end->seconds);
        }
        if (secondsSince(since) < m_grace) {
            return false;
        }
        appendToLog(m_dir / run.log, "slurm: array task " + task + " ended " + state +
                                         " before the run wrote its status; Slurm's own "
                                         "output: " +
                                         (m_dir / "slurm" / (task + ".out")).string());
        return finish(run, study::stoppedState(state) ? RunStatus::Interrupted : RunStatus::Failed,
                      -1, 0.0);
    }

    // Runs of arrays squeue no longer lists: sacct, where the cluster keeps accounting, tells
    // how they ended; a run nobody knows after a few polls is lost.
    bool lookUpEnded(const std::vector<size_t>& runs,
                     const std::map<size_t, const SlurmArray*>& arrays) {
        std::map<std::string, std::string> states;
        bool sacctFailed = false;
        if (m_sacct) {
            std::string ids;
            for (size_t i : runs) {
                ids += (ids.empty() ? "" : ",") + taskName(*arrays.at(i), i);
            }
            const auto result =
                study::runCaptured({"sacct", "-n", "-P", "-X", "-j", ids, "-o", "JobID,State"});
            if (result.err.find("disabled") != std::string::npos) {
                m_sacct = false;  // no accounting on this cluster: squeue and the files alone
            } else {
                sacctFailed = result.exitCode != 0;
            }
            std::string line;
            std::istringstream in(result.out);
            while (std::getline(in, line)) {
                const auto bar = line.find('|');
                if (bar != std::string::npos) {
                    states[line.substr(0, bar)] = line.substr(bar + 1);
                }
            }
        }
        bool changed = false;
        for (size_t i : runs) {
            study::SweepRun& run = m_m.runs[i];
            const SlurmArray& array = *arrays.at(i);
            const std::string task = taskName(array, i);
            const auto found = states.find(task);
            if (found != states.end()) {
                m_missing.erase(task);
                changed |= follow(run, array, i, found->second);
            } else if (!sacctFailed && ++m_missing[task] >= kMissingPolls) {
                changed |= endedWithoutStatus(run, array, i, "unknown to Slurm");
            }
        }
        return changed;
    }

    bool finish(study::SweepRun& run, RunStatus status, int exitCode, double seconds) {
        if (run.status == RunStatus::Pending) {
            m_progress.started();
        }
        run.status = status;
        run.exitCode = exitCode;
        run.seconds = seconds;
        m_progress.ended(run);
        return true;
    }

    Manifest& m_m;
    fs::path m_dir;
    SweepProgress& m_progress;
    bool m_sacct = false;
    double m_grace = 60.0;
    std::map<std::string, int> m_missing;                   // by task
    std::map<std::string, Clock::time_point> m_endedSince;  // by task
    std::optional<Clock::time_point> m_squeueFailingSince;
};

}  // namespace nope::cli::slurm_follow
