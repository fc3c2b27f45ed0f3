#include "study/slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "study/manifest.h"
#include "util/files.h"

extern char** environ;

namespace nope::study {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, separator)) {
        parts.push_back(part);
    }
    return parts;
}

size_t parseIndex(const std::string& text, const std::string& whole) {
    if (text.empty() || text.size() > 9 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        throw std::invalid_argument("'" + whole + "' is not a list of task ids");
    }
    return std::stoul(text);
}

// A path inside single quotes for bash.
std::string shellQuoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

}  // namespace

std::optional<std::string> slurmTimeProblem(const std::string& time) {
    static const std::regex kForms(
        R"(\d{1,6}|\d{1,6}:\d{1,2}|\d{1,4}:\d{1,2}:\d{1,2}|\d{1,4}-\d{1,2}(:\d{1,2}(:\d{1,2})?)?)");
    if (!std::regex_match(time, kForms)) {
        return "'" + time +
               "' is not a Slurm time limit (allowed: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
               "D-HH:MM:SS)";
    }
    if (std::regex_match(time, std::regex(R"(0+|0+:0+|0+:0+:0+)"))) {
        return "'" + time + "' is no time at all (allowed: a limit of at least a minute)";
    }
    return std::nullopt;
}

bool isPartitionName(const std::string& name) {
    static const std::regex kName(R"([A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+)*)");
    return name.size() <= 200 && std::regex_match(name, kName);
}

std::string rangesText(const std::vector<size_t>& indices) {
    std::string out;
    for (size_t i = 0; i < indices.size();) {
        size_t j = i;
        while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) {
            ++j;
        }
        out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
        if (j > i) {
            out += "-" + std::to_string(indices[j]);
        }
        i = j + 1;
    }
    return out;
}

std::vector<size_t> parseRanges(const std::string& text) {
    std::string body = text;
    if (!body.empty() && body.front() == '[') {
        body.erase(0, 1);
    }
    if (!body.empty() && body.back() == ']') {
        body.pop_back();
    }
    body = body.substr(0, body.find('%'));  // "%K": the array's task limit
    std::vector<size_t> out;
    for (const auto& part : split(body, ',')) {
        const auto colon = part.find(':');
        const std::string range = part.substr(0, colon);
        const size_t step =
            colon == std::string::npos ? 1 : parseIndex(part.substr(colon + 1), text);
        const auto dash = range.find('-');
        const size_t first = parseIndex(range.substr(0, dash), text);
        const size_t last =
            dash == std::string::npos ? first : parseIndex(range.substr(dash + 1), text);
        if (last < first || step == 0 || last - first > 10'000'000) {
            throw std::invalid_argument("'" + text + "' is not a list of task ids");
        }
        for (size_t v = first; v <= last; v += step) {
            out.push_back(v);
        }
    }
    if (out.empty()) {
        throw std::invalid_argument("'" + text + "' is not a list of task ids");
    }
    return out;
}

std::vector<SlurmArray> arrayChunks(const std::vector<size_t>& runs) {
    std::vector<SlurmArray> arrays;
    for (size_t run : runs) {
        const size_t offset = run / kSlurmArrayChunk * kSlurmArrayChunk;
        if (arrays.empty() || arrays.back().offset != offset) {
            arrays.push_back({"", offset, {}});
        }
        arrays.back().runs.push_back(run);
    }
    return arrays;
}

std::string arrayScript(const SlurmSettings& settings, const SlurmArray& array,
                        const fs::path& sweepDir, const std::string& executable) {
    std::vector<size_t> tasks;
    for (size_t run : array.runs) {
        tasks.push_back(run - array.offset);
    }
    std::string spec = rangesText(tasks);
    if (settings.arrayParallelism > 0) {
        spec += "%" + std::to_string(settings.arrayParallelism);
    }
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "#SBATCH --job-name=nopescope-sweep\n"
      << "#SBATCH --array=" << spec << "\n"
      << "#SBATCH --output=slurm/%A_%a.out\n"
      << "#SBATCH --no-requeue\n"
      << "#SBATCH --cpus-per-task=" << settings.cpusPerTask << "\n";
    if (!settings.partition.empty()) {
        s << "#SBATCH --partition=" << settings.partition << "\n";
    }
    if (!settings.time.empty()) {
        s << "#SBATCH --time=" << settings.time << "\n";
    }
    s << "# A NoPEScope sweep, submitted from its folder (cd to it to submit this by hand).\n"
      << "# Array task t runs run " << array.offset
      << " + t of sweep.json into runs/<id>/ and writes runs/<id>/" << kTaskEndFile << ".\n";
    if (!settings.workDir.empty()) {
        s << "cd " << shellQuoted(settings.workDir) << " || exit 1\n";
    }
    s << "exec " << shellQuoted(executable) << " sweep --run-index $((" << array.offset
      << " + SLURM_ARRAY_TASK_ID)) --out " << shellQuoted(sweepDir.string()) << "\n";
    return s.str();
}

std::vector<QueuedTasks> parseSqueue(const std::string& text) {
    std::vector<QueuedTasks> out;
    for (auto line : split(text, '\n')) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
            line.pop_back();
        }
        const auto fields = split(line, '|');
        if (fields.size() != 3 || fields[0].empty() || fields[2].empty()) {
            continue;
        }
        try {
            out.push_back({fields[0], parseRanges(fields[1]), fields[2]});
        } catch (const std::invalid_argument&) {
            continue;  // "N/A": not an array
        }
    }
    return out;
}

SlurmPhase phaseOf(const std::string& state) {
    static const char* kQueued[] = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                                    "RESV_DEL_HOLD"};
    static const char* kEnded[] = {"COMPLETED", "FAILED",       "TIMEOUT",       "CANCELLED",
                                   "NODE_FAIL", "PREEMPTED",    "OUT_OF_MEMORY", "BOOT_FAIL",
                                   "DEADLINE",  "SPECIAL_EXIT", "REVOKED"};
    // sacct writes "CANCELLED by 1000"
    const std::string word = state.substr(0, state.find(' '));
    for (const char* s : kQueued) {
        if (word == s) {
            return SlurmPhase::Queued;
        }
    }
    for (const char* s : kEnded) {
        if (word == s) {
            return SlurmPhase::Ended;
        }
    }
    return SlurmPhase::Running;
}

bool stoppedState(const std::string& state) {
    const std::string word = state.substr(0, state.find(' '));
    return word == "CANCELLED" || word == "PREEMPTED";
}

std::string taskEndJson(const TaskEnd& end) {
    nlohmann::ordered_json j = {{"status", toString(end.status)},
                                {"exit_code", end.exitCode},
                                {"seconds", end.seconds},
                                {"job", end.job}};
    return j.dump(2) + "\n";
}

std::optional<TaskEnd> readTaskEnd(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
        return std::nullopt;
    }
    try {
        const auto j = nlohmann::json::parse(readFile(file));
        TaskEnd end{RunStatus::Failed, 0, 0.0, ""};
        const std::string status = j.at("status").get<std::string>();
        if (status == toString(RunStatus::Done)) {
            end.status = RunStatus::Done;
        } else if (status == toString(RunStatus::Interrupted)) {
            end.status = RunStatus::Interrupted;
        } else if (status != toString(RunStatus::Failed)) {
            return std::nullopt;
        }
        end.exitCode = j.at("exit_code").get<int>();
        end.seconds = j.at("seconds").get<double>();
        end.job = j.at("job").get<std::string>();
        return end;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

Captured runCaptured(const std::vector<std::string>& argv, const fs::path& workDir,
                     double timeoutSeconds) {
    Captured result;
    if (argv.empty()) {
        result.exitCode = 127;
        result.err = "cannot start an empty command";
        return result;
    }
    int outPipe[2], errPipe[2];
    if (pipe2(outPipe, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    if (pipe2(errPipe, O_CLOEXEC) != 0) {
        close(outPipe[0]);
        close(outPipe[1]);
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);
    const std::string dir = workDir.string();
    if (!dir.empty()) {
        posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, none;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    pid_t pid = -1;
    const int error = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(outPipe[1]);
    close(errPipe[1]);
    if (error != 0) {
        close(outPipe[0]);
        close(errPipe[0]);
        result.exitCode = 127;
        result.err = "cannot start " + argv[0] + ": " + std::strerror(error);
        return result;
    }
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open = 2;
    char buffer[4096];
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000));
    bool timedOut = false;
    while (open > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            timedOut = true;
            kill(pid, SIGKILL);
            break;
        }
        const int ready = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready <= 0) {
            continue;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                sinks[i]->append(buffer, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open -= 1;
            }
        }
    }
    for (auto& fd : fds) {
        if (fd.fd >= 0) {
            close(fd.fd);
        }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (timedOut) {
        result.exitCode = 124;
        std::ostringstream message;
        message << argv[0] << " did not answer within " << timeoutSeconds << " s\n";
        result.err = message.str() + result.err;
    }
    return result;
}

bool inPath(const std::string& program) {
    auto executable = [](const fs::path& p) {
        struct stat st {};
        return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
    };
    if (program.find('/') != std::string::npos) {
        return executable(program);
    }
    const char* path = std::getenv("PATH");
    for (const auto& dir : split(path ? path : "", ':')) {
        if (!dir.empty() && executable(fs::path(dir) / program)) {
            return true;
        }
    }
    return false;
}

}  // namespace nope::study
