// `nopescope-cli sweep --executor slurm`: the runs as the array tasks of a Slurm job array. The
// sweep writes one sbatch script per array (study/slurm.h), submits it from the sweep folder,
// follows the array with squeue (and sacct, where the cluster keeps accounting) and each run's
// status file, and leaves sweep.json where a local sweep would leave it, so that the same
// results are gathered. --resume follows what is still queued or running, then submits again
// only the runs that did not finish.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "study/manifest.h"
#include "study/process_pool.h"

namespace nope::cli {

class SweepProgress;

// The programs the executor calls, when one is missing from PATH: the message to print.
std::optional<std::string> slurmCommandsProblem();

enum class SlurmEnd {
    Ended,        // every run ended (done or not): gather the results
    Detached,     // submitted, not followed (--detach)
    Interrupted,  // stopped following (Ctrl-C); the arrays keep running
    Failed,       // sbatch refused, or squeue stopped answering: message printed
};

struct SlurmSubmission {
    bool resume = false;  // follow the arrays still queued or running before submitting again
    bool detach = false;  // return once submitted
    // The commands of a run, as the sweep plan makes them (submitted runs get them afresh).
    std::function<std::vector<study::Command>(const study::SweepRun&)> commandsFor;
};

// Submits every run not done and follows the arrays until every run ended, updating and
// rewriting `manifest` (sweep.json) as runs start and end.
SlurmEnd runOnSlurm(study::Manifest& manifest, const std::filesystem::path& sweepDir,
                    const SlurmSubmission& submission, SweepProgress& progress,
                    study::StopRequest& stop);

// What an array task does (`nopescope-cli sweep --run-index N --out DIR`): runs run N of the sweep
// in DIR into its folder, writes its status file, and returns the exit status (0 done, 1 failed,
// 130 interrupted by Slurm's SIGTERM or a Ctrl-C, 2 no such run).
int runSweepTask(const std::filesystem::path& sweepDir, long index, study::StopRequest& stop);

}  // namespace nope::cli
