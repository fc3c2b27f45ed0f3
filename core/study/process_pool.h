// Runs jobs as child processes, at most N at once. A job is a sequence of commands run in order
// (the first that fails ends the job); each command's stdout and stderr are appended to the job's
// log file. The end of every job is reported on the calling thread. A stop request (from a signal
// handler, say) stops the launching of jobs, waits for the running ones and reports them as
// interrupted. POSIX only (posix_spawn); no LibTorch and no Qt.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace nope::study {

// Stop requests. Lock-free atomics only, so that a signal handler may call request().
struct StopRequest {
    std::atomic<int> requests{0};
    // Of those, the requests the children did not receive themselves (a Ctrl-C at the terminal
    // reaches the whole process group; a stop from elsewhere is forwarded to them as SIGINT).
    std::atomic<int> forwards{0};

    void request(bool forwardToChildren) noexcept {
        if (forwardToChildren) {
            forwards.fetch_add(1);
        }
        requests.fetch_add(1);
    }
    bool requested() const noexcept { return requests.load() > 0; }
};

struct PoolJob {
    std::vector<std::vector<std::string>> commands;  // argv each; looked up in PATH
    std::filesystem::path log;                       // appended to; its folder is created
};

enum class JobOutcome { Done, Failed, Interrupted };

struct JobEnd {
    size_t index = 0;  // into the jobs given
    JobOutcome outcome = JobOutcome::Done;
    int exitCode = 0;  // of the last command run; 128 + the signal when one ended it
    double seconds = 0.0;
};

struct PoolCallbacks {
    std::function<void(size_t index)> started;  // the job's first command was launched
    std::function<void(const JobEnd&)> ended;
};

// Runs `jobs` in order, at most `parallel` at once, and returns when every started job has ended.
// After a stop request no job starts (those are not reported) and the running ones are reported
// as interrupted, whatever their exit status. The callbacks run on the calling thread; when one
// throws, the running children are killed and waited for, and the exception goes on.
void runJobs(const std::vector<PoolJob>& jobs, int parallel, StopRequest& stop,
             const PoolCallbacks& callbacks);

}  // namespace nope::study
