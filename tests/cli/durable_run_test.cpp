// A training process killed with SIGKILL at many points (after its Nth snapshot file appears)
// leaves a run folder that opens (as the window reads it) and resumes to the same tables as a run
// that was never interrupted: no row twice, none missing.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli/cli_fixture.h"
#include "run/run_catalog.h"
#include "run/run_folder.h"

namespace nope::cli_test {
namespace {

// A run of 13 snapshots (every 5 steps) with a checkpoint every 20 steps, about a second long.
const std::vector<std::string> kRun = {"train",    "--task",
                                       "reversal", "--layers",
                                       "1",        "--dim",
                                       "32",       "--heads",
                                       "2",        "--batch",
                                       "16",       "--steps",
                                       "60",       "--eval-every",
                                       "20",       "--snapshot-every",
                                       "5",        "--threads",
                                       "1",        "--eval-samples",
                                       "64",       "--analysis-samples",
                                       "8",        "--final-samples",
                                       "8",        "--probe-every",
                                       "0",        "--train-size",
                                       "500",      "--test-size",
                                       "200"};

int snapshotFiles(const fs::path& dir) {
    std::error_code ec;
    int n = 0;
    for (const auto& entry : fs::directory_iterator(dir / "snapshots", ec)) {
        n += entry.path().extension() == ".json";
    }
    return n;
}

// Starts the run writing into `dir` and kills it with SIGKILL once `snapshots` snapshot files
// are there; false when the run ended first (then the folder is complete).
bool trainAndKill(const fs::path& dir, int snapshots) {
    std::vector<std::string> args = kRun;
    args.insert(args.end(), {"--out", dir.string()});
    std::vector<char*> argv{const_cast<char*>(NOPESCOPE_CLI)};
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execv(NOPESCOPE_CLI, argv.data());
        ::_exit(127);
    }
    // waits on the files, polling; the deadline only guards against a run that hangs
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    int status = 0;
    while (snapshotFiles(dir) < snapshots) {
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            return false;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            ADD_FAILURE() << "the run wrote fewer than " << snapshots << " snapshots in 120 s";
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    return true;
}

// The columns of metrics.csv that do not depend on timing: step, train and test loss,
// accuracy, learning rate and evaluation step.
std::vector<std::string> metricsWithoutTimes(const fs::path& dir) {
    std::vector<std::string> rows;
    for (const auto& line : lines(slurp(dir / "metrics.csv"))) {
        std::vector<std::string> cells;
        std::stringstream in(line);
        for (std::string cell; std::getline(in, cell, ',');) {
            cells.push_back(cell);
        }
        if (cells.size() == 8) {  // tokens_per_s and elapsed_s left out
            rows.push_back(cells[0] + "," + cells[1] + "," + cells[2] + "," + cells[3] + "," +
                           cells[4] + "," + cells[7]);
        } else {
            rows.push_back("malformed: " + line);
        }
    }
    return rows;
}

std::vector<std::string> snapshotNames(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir / "snapshots")) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

TEST_F(Cli, KilledAtAnySnapshotResumesToTheSameTables) {
    const fs::path reference = m_dir / "reference";
    std::string command;
    for (const auto& a : kRun) {
        command += a + " ";
    }
    const Result whole = run(command + "--out " + reference.string());
    ASSERT_EQ(whole.status, 0) << whole.err;
    const auto metrics = metricsWithoutTimes(reference);
    ASSERT_EQ(metrics.size(), 14u);  // header and steps 0, 5, ..., 60
    const std::string adjacency = slurp(reference / "adjacency.csv");

    int interrupted = 0;
    for (int killAt : {1, 2, 3, 4, 5, 6, 8, 9, 12}) {
        SCOPED_TRACE("killed after snapshot file " + std::to_string(killAt));
        const fs::path dir = m_dir / ("killed-" + std::to_string(killAt));
        if (!trainAndKill(dir, killAt)) {
            continue;  // ended before: nothing was interrupted
        }
        ++interrupted;
        // the folder opens as the window opens it, with what it recorded so far
        EXPECT_NO_THROW(readRunFolder(dir));
        EXPECT_NO_THROW(readRunCurves(dir));

        const Result resumed = run("train --resume " + dir.string());
        ASSERT_EQ(resumed.status, 0) << resumed.err << resumed.out;
        EXPECT_EQ(metricsWithoutTimes(dir), metrics);
        // adjacency.csv has no timing: byte for byte
        EXPECT_EQ(slurp(dir / "adjacency.csv"), adjacency);
        EXPECT_EQ(snapshotNames(dir), snapshotNames(reference));  // and no temporary files
        for (const char* file : {"checkpoint.pt", "best.pt", "weights.pt", "final_scores.csv"}) {
            EXPECT_TRUE(fs::exists(dir / file)) << file;
        }
    }
    EXPECT_GE(interrupted, 6);
}

// A run folder that cannot be written (the file-size limit stands in for a full disk; the tests
// run as root, for whom a read-only folder is writable): the run stops with one line that names
// the file, keeps what it wrote, and resumes once there is room.
TEST_F(Cli, AFullDiskStopsTheRunKeepsWhatWasWrittenAndItResumes) {
    const fs::path dir = m_dir / "run";
    std::string command;
    for (const auto& a : kRun) {
        command += a + " ";
    }
    const fs::path err = m_dir / "full.txt";
    const std::string limited = "bash -c \"trap '' XFSZ; ulimit -f 160; exec " +
                                std::string(NOPESCOPE_CLI) + " " + command + "--out " +
                                dir.string() + "\" >/dev/null 2>" + err.string();
    const int raw = std::system(limited.c_str());
    ASSERT_TRUE(WIFEXITED(raw));
    EXPECT_EQ(WEXITSTATUS(raw), 1);
    const auto message = lines(slurp(err));
    ASSERT_EQ(message.size(), 1u) << slurp(err);
    EXPECT_NE(message[0].find("cannot write " + dir.string() + "/"), std::string::npos)
        << message[0];
    EXPECT_NE(message[0].find("training stopped at step 0"), std::string::npos) << message[0];
    const auto kept = metricsWithoutTimes(dir);
    ASSERT_EQ(kept.size(), 2u);  // the header and step 0
    EXPECT_EQ(snapshotNames(dir), std::vector<std::string>{"step_000000.json"});
    for (const auto& entry : fs::directory_iterator(dir)) {
        EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
    }

    const Result resumed = run("train --resume " + dir.string());
    ASSERT_EQ(resumed.status, 0) << resumed.err << resumed.out;
    EXPECT_EQ(metricsWithoutTimes(dir).size(), 14u);
}

}  // namespace
}  // namespace nope::cli_test
