#include "cli/sweep_slurm.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/slurm_follower.h"
#include "cli/sweep_progress.h"
#include "study/slurm.h"
#include "util/files.h"

namespace nope::cli {

namespace fs = std::filesystem;
using study::Manifest;
using study::RunStatus;
using study::SlurmArray;
using study::SlurmPhase;

namespace {

using namespace slurm_follow;

// One sweep process at a time follows and submits for a folder: a second --resume beside a
// first would submit the same runs twice.
class FolderLock {
public:
    explicit FolderLock(const fs::path& file) {
        m_fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        m_held = m_fd >= 0 && ::flock(m_fd, LOCK_EX | LOCK_NB) == 0;
    }
    ~FolderLock() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;
    bool held() const { return m_held; }

private:
    int m_fd = -1;
    bool m_held = false;
};

std::string jobList(const Manifest& m, size_t firstArray) {
    std::string out;
    for (size_t a = firstArray; a < m.slurm.arrays.size(); ++a) {
        out += (out.empty() ? "" : " ") + m.slurm.arrays[a].jobId;
    }
    return out;
}

// The job ids of the arrays with runs still queued or running.
std::string activeJobs(const Manifest& m) {
    std::set<std::string> jobs;
    for (const auto& [run, array] : arrayOfRun(m)) {
        if (active(m.runs[run].status)) {
            jobs.insert(array->jobId);
        }
    }
    std::string out;
    for (const auto& job : jobs) {
        out += (out.empty() ? "" : " ") + job;
    }
    return out;
}

// Writes and submits one script per array of the pending runs; false (message printed) when
// sbatch refuses one. The manifest records every array submitted.
bool submit(Manifest& m, const fs::path& dir, const std::vector<size_t>& runs,
            const study::StopRequest& stop) {
    const std::string exe = thisExecutable().string();
    fs::create_directories(dir / "slurm");
    for (auto array : study::arrayChunks(runs)) {
        if (stop.requested()) {
            std::fprintf(stderr, "stopped before submitting runs %s\n",
                         study::rangesText(array.runs).c_str());
            return false;
        }
        const size_t n = m.slurm.arrays.size() + 1;
        const fs::path script = dir / "slurm" / ("array-" + std::to_string(n) + ".sbatch");
        writeFileAtomic(script, study::arrayScript(m.slurm, array, dir, exe));
        const auto result = study::runCaptured({"sbatch", "--parsable", script.string()}, dir);
        std::string id = result.out.substr(0, result.out.find_first_of(";\n"));
        const bool numeric = !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
        if (result.exitCode != 0 || !numeric) {
            std::fprintf(stderr, "sbatch refused %s (exit %d): %s\n", script.c_str(),
                         result.exitCode, firstLine(result.err + result.out).c_str());
            return false;
        }
        array.jobId = id;
        m.slurm.arrays.push_back(array);
        study::writeManifest(dir, m);
        std::fprintf(stderr, "submitted array job %s: %zu runs (%s), script %s\n", id.c_str(),
                     array.runs.size(), study::rangesText(array.runs).c_str(), script.c_str());
    }
    return true;
}

}  // namespace

std::optional<std::string> slurmCommandsProblem() {
    for (const char* program : {"sbatch", "squeue"}) {
        if (!study::inPath(program)) {
            return std::string("--executor slurm: ") + program +
                   " is not in PATH (allowed: --executor slurm on a machine with Slurm's client "
                   "commands, e.g. a cluster's login node; or --executor local)";
        }
    }
    return std::nullopt;
}

SlurmEnd runOnSlurm(Manifest& m, const fs::path& dir, const SlurmSubmission& submission,
                    SweepProgress& progress, study::StopRequest& stop) {
    fs::create_directories(dir / "slurm");
    const FolderLock lock(dir / "slurm" / ".lock");
    if (!lock.held()) {
        std::fprintf(stderr,
                     "another nopescope-cli sweep is submitting or following %s; let it finish "
                     "(or stop it) first\n",
                     dir.c_str());
        return SlurmEnd::Failed;
    }
    study::writeManifest(dir, m);
    Follower follower(m, dir, progress);
    if (submission.resume && !m.slurm.arrays.empty()) {
        // What the arrays submitted before did meanwhile; runs Slurm still holds are followed to
        // their end first, so that no run is submitted twice.
        if (!follower.reclaim()) {
            std::fprintf(stderr,
                         "squeue does not answer: nothing is submitted again until it "
                         "does\n");
            return SlurmEnd::Failed;
        }
        const auto still = follower.poll();
        if (!still) {
            return SlurmEnd::Failed;
        }
        if (*still) {
            std::fprintf(stderr, "following array jobs %s: runs still queued or running\n",
                         activeJobs(m).c_str());
            const SlurmEnd end = follower.follow(stop);
            if (end != SlurmEnd::Ended) {
                return end;
            }
        }
    }
    const size_t firstNew = m.slurm.arrays.size();
    std::vector<size_t> pending;
    for (size_t i = 0; i < m.runs.size(); ++i) {
        study::SweepRun& run = m.runs[i];
        if (run.status == RunStatus::Done) {
            continue;
        }
        study::clearRunFolder(dir, run);
        run = {run.id, run.settings, run.seed, submission.commandsFor(run), RunStatus::Pending,
               {},     {},           run.log};
        pending.push_back(i);
        // no longer the older arrays' run: until it is submitted again, no array's
        for (auto& array : m.slurm.arrays) {
            array.runs.erase(std::remove(array.runs.begin(), array.runs.end(), i),
                             array.runs.end());
        }
    }
    study::writeManifest(dir, m);
    if (pending.empty()) {
        return SlurmEnd::Ended;
    }
    if (!submit(m, dir, pending, stop)) {
        return stop.requested() ? SlurmEnd::Interrupted : SlurmEnd::Failed;
    }
    follower.forgetMissing();
    if (submission.detach) {
        std::fprintf(stderr,
                     "submitted; follow and gather with: nopescope-cli sweep --resume %s "
                     "(cancel with: scancel %s)\n",
                     dir.c_str(), jobList(m, firstNew).c_str());
        return SlurmEnd::Detached;
    }
    return follower.follow(stop);
}

int runSweepTask(const fs::path& sweepDir, long index, study::StopRequest& stop) {
    // The sweep rewrites sweep.json while its tasks start; on a network file system a read
    // across the rename can fail for a moment.
    Manifest m;
    for (int attempt = 1;; ++attempt) {
        try {
            m = study::readManifest(sweepDir);
            break;
        } catch (const std::exception&) {
            if (attempt == 5) {
                throw;  // a damaged file, named
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(500 * attempt));
        }
    }
    if (index < 0 || static_cast<size_t>(index) >= m.runs.size()) {
        std::fprintf(stderr, "sweep: --run-index: %ld is not a run of %s (allowed: 0 to %zu)\n",
                     index, sweepDir.c_str(), m.runs.size() - 1);
        return kExitUsage;
    }
    const study::SweepRun& run = m.runs[static_cast<size_t>(index)];
    study::clearRunFolder(sweepDir, run);
    fs::create_directories(study::runFolder(sweepDir, run));
    const char* job = std::getenv("SLURM_ARRAY_JOB_ID");
    const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
    study::TaskEnd end{RunStatus::Interrupted, kExitInterrupted, 0.0,
                       job && task ? std::string(job) + "_" + task : std::string("local")};
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    std::printf("run %s on %s\n", run.id.c_str(), host);
    std::fflush(stdout);
    study::PoolCallbacks callbacks;
    callbacks.started = [](size_t) {};
    callbacks.ended = [&](const study::JobEnd& e) {
        end.status = e.outcome == study::JobOutcome::Done     ? RunStatus::Done
                     : e.outcome == study::JobOutcome::Failed ? RunStatus::Failed
                                                              : RunStatus::Interrupted;
        end.exitCode = e.exitCode;
        end.seconds = e.seconds;
    };
    study::runJobs({{run.commands, sweepDir / run.log}}, 1, stop, callbacks);
    // the task's line in its Slurm output first: the sweep may end as soon as the status file is
    // there, and a reader of the output then finds the line in it
    std::printf("run %s: %s (exit %d) in %.1f s\n", run.id.c_str(),
                study::toString(end.status).c_str(), end.exitCode, end.seconds);
    std::fflush(stdout);
    writeFileAtomic(study::runFolder(sweepDir, run) / study::kTaskEndFile, study::taskEndJson(end));
    return end.status == RunStatus::Done     ? kExitOk
           : end.status == RunStatus::Failed ? kExitFailure
                                             : kExitInterrupted;
}

}  // namespace nope::cli
