#include "study/process_pool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include "util/stopwatch.h"

extern char** environ;

namespace nope::study {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Active {
    size_t job = 0;
    size_t command = 0;
    pid_t pid = -1;
    Clock::time_point start;
    bool stopped = false;  // running when the stop came: reported as interrupted
};

void appendLine(const fs::path& log, const std::string& line) {
    std::ofstream out(log, std::ios::app);
    out << line << "\n";
}

// Launches one command with its output appended to `log`; -1 (and a line in the log) when it
// cannot be started.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
    std::string shown = "$";
    for (const auto& a : argv) {
        shown += " " + a;
    }
    appendLine(log, shown);
    if (argv.empty()) {
        appendLine(log, "cannot start an empty command");
        return -1;
    }
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    const std::string logPath = log.string();

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, none;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);  // a sweep started in the background has SIGINT ignored
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    pid_t pid = -1;
    const int error = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (error != 0) {
        appendLine(log, "cannot start " + argv[0] + ": " + std::strerror(error));
        return -1;
    }
    return pid;
}

int exitCodeOf(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return -1;
}

class Pool {
public:
    Pool(const std::vector<PoolJob>& jobs, int parallel, StopRequest& stop,
         const PoolCallbacks& callbacks)
        : m_jobs(jobs), m_parallel(std::max(1, parallel)), m_stop(stop), m_callbacks(callbacks) {}

    ~Pool() {  // only reached with children left when a callback threw
        for (const auto& a : m_active) {
            ::kill(a.pid, SIGKILL);
            int status = 0;
            ::waitpid(a.pid, &status, 0);
        }
    }

    void run() {
        while (true) {
            observeStop();
            while (!m_stopping && m_active.size() < static_cast<size_t>(m_parallel) &&
                   m_next < m_jobs.size()) {
                start(m_next++);
            }
            if (m_active.empty()) {
                return;
            }
            if (!reap()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        }
    }

private:
    void observeStop() {
        if (!m_stop.requested()) {
            return;
        }
        if (!m_stopping) {
            m_stopping = true;
            for (auto& a : m_active) {
                a.stopped = true;
            }
        }
        const int forwards = m_stop.forwards.load();
        if (forwards > m_forwarded) {
            m_forwarded = forwards;
            for (const auto& a : m_active) {
                ::kill(a.pid, SIGINT);
            }
        }
    }

    void start(size_t job) {
        std::error_code ec;
        fs::create_directories(m_jobs[job].log.parent_path(), ec);
        Active a{job, 0, -1, Clock::now(), false};
        if (m_callbacks.started) {
            m_callbacks.started(job);
        }
        if (m_jobs[job].commands.empty()) {
            report(a, JobOutcome::Done, 0);
            return;
        }
        a.pid = spawn(m_jobs[job].commands[0], m_jobs[job].log);
        if (a.pid < 0) {
            report(a, JobOutcome::Failed, 127);
            return;
        }
        m_active.push_back(a);
        stopIfAsked(m_active.back());
    }

    // A stop that came while a child was being spawned reached the group before the child: it
    // gets its own SIGINT, or it would run to its end.
    void stopIfAsked(Active& a) {
        if (m_stop.requested()) {
            a.stopped = true;
            ::kill(a.pid, SIGINT);
        }
    }

    // Collects the children that ended and starts the next command of their jobs; whether any
    // child ended.
    bool reap() {
        bool any = false;
        size_t i = 0;
        while (i < m_active.size()) {
            Active& a = m_active[i];
            int status = 0;
            const pid_t r = ::waitpid(a.pid, &status, WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR)) {
                ++i;
                continue;
            }
            any = true;
            const int code = r == a.pid ? exitCodeOf(status) : -1;
            const auto& commands = m_jobs[a.job].commands;
            if (!a.stopped && code == 0 && a.command + 1 < commands.size()) {
                a.command += 1;
                a.pid = spawn(commands[a.command], m_jobs[a.job].log);
                if (a.pid >= 0) {
                    stopIfAsked(a);
                    ++i;
                } else {
                    finish(i, JobOutcome::Failed, 127);
                }
                continue;
            }
            const JobOutcome outcome = a.stopped   ? JobOutcome::Interrupted
                                       : code == 0 ? JobOutcome::Done
                                                   : JobOutcome::Failed;
            finish(i, outcome, code);
        }
        return any;
    }

    void finish(size_t i, JobOutcome outcome, int code) {
        const Active a = m_active[i];
        m_active.erase(m_active.begin() + static_cast<std::ptrdiff_t>(i));
        report(a, outcome, code);
    }

    void report(const Active& a, JobOutcome outcome, int code) {
        const double seconds = secondsSince(a.start);
        if (m_callbacks.ended) {
            m_callbacks.ended({a.job, outcome, code, seconds});
        }
    }

    const std::vector<PoolJob>& m_jobs;
    const int m_parallel;
    StopRequest& m_stop;
    const PoolCallbacks& m_callbacks;
    std::vector<Active> m_active;
    size_t m_next = 0;
    bool m_stopping = false;
    int m_forwarded = 0;
};

}  // namespace

void runJobs(const std::vector<PoolJob>& jobs, int parallel, StopRequest& stop,
             const PoolCallbacks& callbacks) {
    Pool(jobs, parallel, stop, callbacks).run();
}

}  // namespace nope::study
