// The Slurm executor's pieces that need no cluster: its settings as sweep.json keeps them, the job
// array script `nopescope-cli sweep --executor slurm` submits, what squeue prints read back, the
// status file each array task leaves in its run folder, and a child process with its output
// captured (sbatch, squeue, sacct). The sweep itself (submit, follow, gather) is
// app/cli/sweep_slurm.cpp. POSIX only; no LibTorch and no Qt.
//   DIR/slurm/array-<n>.sbatch    the scripts submitted, one per array job (n counts them)
//   DIR/slurm/<job>_<task>.out    what Slurm itself printed for each array task
//   DIR/runs/<id>/status.json     the run's end, written by its array task
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nope::study {

enum class RunStatus;

// One submitted job array: array task t runs the manifest's run `offset + t`.
struct SlurmArray {
    std::string jobId;
    size_t offset = 0;
    std::vector<size_t> runs;  // indices into the manifest's runs
};

struct SlurmSettings {
    std::string partition;     // "" leaves it to the cluster's default
    std::string time;          // a Slurm time limit; "" leaves it to the partition's default
    int cpusPerTask = 1;       // each run's --threads unless the fixed flags set them
    int arrayParallelism = 0;  // array tasks at once; 0: as many as the cluster gives
    std::string workDir;       // where the sweep was started: each task runs its commands there
    std::vector<SlurmArray> arrays;  // submitted, oldest first
};

// Slurm's default MaxArraySize is 1001 (task ids 0 to 1000): a sweep of more runs is submitted as
// several arrays of at most this many tasks, each with its offset.
inline constexpr size_t kSlurmArrayChunk = 1000;

// What is wrong with a --time value, or nothing. Slurm's forms: MM, MM:SS, HH:MM:SS, D-HH,
// D-HH:MM, D-HH:MM:SS.
std::optional<std::string> slurmTimeProblem(const std::string& time);
// A partition name as sbatch takes it: letters, digits, '_', '-', '.'; several joined by ','.
bool isPartitionName(const std::string& name);

// Run indices in runs of consecutive values: "0-3,5,9-10".
std::string rangesText(const std::vector<size_t>& indices);
// Parses what rangesText writes, and squeue's task ids ("7", "1-5%2", "[0-3,8]", "0-9:3");
// throws std::invalid_argument.
std::vector<size_t> parseRanges(const std::string& text);

// Splits sorted run indices into arrays of at most kSlurmArrayChunk task ids each.
std::vector<SlurmArray> arrayChunks(const std::vector<size_t>& runs);

// The sbatch script of one array: its #SBATCH lines (never requeued: a task ends once), then
// the array task's command, `EXE sweep --run-index OFFSET+SLURM_ARRAY_TASK_ID --out DIR`, run in
// settings.workDir so that relative paths in the fixed flags mean what they meant where the
// sweep was started. Submitted from the sweep folder, so that Slurm's output files land in
// DIR/slurm/ whatever the path holds.
std::string arrayScript(const SlurmSettings& settings, const SlurmArray& array,
                        const std::filesystem::path& sweepDir, const std::string& executable);

// One line of `squeue -h -r -t all -o %F|%K|%T`: an array job, its task ids, and their state
// (with -r one task a line; without it the pending ones share a line, "1-5%2").
struct QueuedTasks {
    std::string jobId;
    std::vector<size_t> tasks;
    std::string state;  // PENDING, RUNNING, COMPLETED, TIMEOUT, ...
};
inline constexpr const char* kSqueueFormat = "%F|%K|%T";
// Skips lines it cannot read (a job that is not an array has task "N/A").
std::vector<QueuedTasks> parseSqueue(const std::string& text);

enum class SlurmPhase { Queued, Running, Ended };
// A Slurm job state as where the run stands; unknown names count as running.
SlurmPhase phaseOf(const std::string& state);
// Whether an ended state means the job was stopped rather than failing (CANCELLED, PREEMPTED).
bool stoppedState(const std::string& state);

// The end of a run, as its array task writes it into DIR/runs/<id>/status.json.
struct TaskEnd {
    RunStatus status;
    int exitCode = 0;
    double seconds = 0.0;
    std::string job;  // "<array job>_<task>" (SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID)
};
inline constexpr const char* kTaskEndFile = "status.json";
std::string taskEndJson(const TaskEnd& end);
// Nothing when the file is missing or cannot be read as one (a task killed while writing it
// leaves no file: it is written atomically).
std::optional<TaskEnd> readTaskEnd(const std::filesystem::path& file);

// A command run to its end with its stdout and stderr captured; stdin is /dev/null. `workDir`,
// when given, is its working folder. It runs in a process group of its own, so that a Ctrl-C at
// the terminal does not end it halfway (sbatch after the controller took the job, before it
// printed the id). A command that cannot be started ends with exit code 127, one that runs past
// `timeout` is killed and ends with 124; the reason is in `err`.
struct Captured {
    int exitCode = -1;  // 128 + the signal when one ended it
    std::string out;
    std::string err;
};
Captured runCaptured(const std::vector<std::string>& argv,
                     const std::filesystem::path& workDir = {}, double timeoutSeconds = 120.0);
// Whether `program` is found in PATH (or is a path to an executable file).
bool inPath(const std::string& program);

}  // namespace nope::study
