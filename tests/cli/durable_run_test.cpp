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
// The same with evaluations (checkpoints) every 15 steps and snapshots every 10: a resumed run's
// first snapshot averages training losses from before and after the resume.
std::vector<std::string> unalignedRun() {
    std::vector<std::string> run = kRun;
    for (size_t i = 0; i + 1 < run.size(); ++i) {
        if (run[i] == "--eval-every") {
            run[i + 1] = "15";
        } else if (run[i] == "--snapshot-every") {
            run[i + 1] = "10";
        }
    }
    return run;
}

std::string commandOf(const std::vector<std::string>& args) {
    std::string command;
    for (const auto& a : args) {
        command += a + " ";
    }
    return command;
}

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
bool trainAndKill(const std::vector<std::string>& run, const fs::path& dir, int snapshots) {
    std::vector<std::string> args = run;
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

// The rows of a table of `columns` cells with the timing columns (tokens_per_s, elapsed_s) left
// out: the cells at `kept`.
std::vector<std::string> withoutTimes(const fs::path& file, size_t columns,
                                      const std::vector<size_t>& kept) {
    std::vector<std::string> rows;
    for (const auto& line : lines(slurp(file))) {
        std::vector<std::string> cells;
        std::stringstream in(line);
        for (std::string cell; std::getline(in, cell, ',');) {
            cells.push_back(cell);
        }
        if (cells.size() != columns) {
            rows.push_back("malformed: " + line);
            continue;
        }
        std::string row;
        for (size_t i : kept) {
            row += (row.empty() ? "" : ",") + cells[i];
        }
        rows.push_back(row);
    }
    return rows;
}

// metrics.csv's step, train and test loss, accuracy, learning rate and evaluation step.
std::vector<std::string> metricsWithoutTimes(const fs::path& dir) {
    return withoutTimes(dir / "metrics.csv", 8, {0, 1, 2, 3, 4, 7});
}

// evaluations.csv's step, train and test loss, accuracy and learning rate.
std::vector<std::string> evaluationsWithoutTimes(const fs::path& dir) {
    return withoutTimes(dir / "evaluations.csv", 7, {0, 1, 2, 3, 4});
}

std::vector<std::string> snapshotNames(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir / "snapshots")) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Longer than 60 lines for a reason: one story per run setting, kill then resume, whose checks
// read in order.
TEST_F(Cli, KilledAtAnySnapshotResumesToTheSameTables) {
    struct Setting {
        std::vector<std::string> run;
        std::vector<int> killAt;  // after this many snapshot files
    };
    const std::vector<Setting> settings = {{kRun, {1, 2, 3, 4, 5, 6, 8, 9, 12}},
                                           {unalignedRun(), {1, 2, 3, 4, 5, 6}}};
    for (size_t k = 0; k < settings.size(); ++k) {
        const Setting& setting = settings[k];
        const fs::path reference = m_dir / ("reference-" + std::to_string(k));
        const Result whole = run(commandOf(setting.run) + "--out " + reference.string());
        ASSERT_EQ(whole.status, 0) << whole.err;
        const auto metrics = metricsWithoutTimes(reference);
        ASSERT_GE(metrics.size(), 8u);
        const auto evaluations = evaluationsWithoutTimes(reference);
        ASSERT_GE(evaluations.size(), 5u);  // the header, step 0 and at least 3 more
        const std::string adjacency = slurp(reference / "adjacency.csv");
        const std::string finalScores = slurp(reference / "final_scores.csv");

        int interrupted = 0;
        for (int killAt : setting.killAt) {
            SCOPED_TRACE("setting " + std::to_string(k) + ", killed after snapshot file " +
                         std::to_string(killAt));
            const fs::path dir =
                m_dir / ("killed-" + std::to_string(k) + "-" + std::to_string(killAt));
            if (!trainAndKill(setting.run, dir, killAt)) {
                continue;  // ended before: nothing was interrupted
            }
            ++interrupted;
            // the folder opens as the window opens it, with what it recorded so far
            EXPECT_NO_THROW(readRunFolder(dir));
            EXPECT_NO_THROW(readRunCurves(dir));

            const Result resumed = run("train --resume " + dir.string());
            ASSERT_EQ(resumed.status, 0) << resumed.err << resumed.out;
            EXPECT_EQ(metricsWithoutTimes(dir), metrics);
            EXPECT_EQ(evaluationsWithoutTimes(dir), evaluations);
            // adjacency.csv and the final scores (init, and the best checkpoint's weights) have
            // no timing: byte for byte
            EXPECT_EQ(slurp(dir / "adjacency.csv"), adjacency);
            EXPECT_EQ(slurp(dir / "final_scores.csv"), finalScores);
            EXPECT_EQ(snapshotNames(dir), snapshotNames(reference));  // and no temporary files
            for (const char* file : {"checkpoint.pt", "best.pt", "weights.pt"}) {
                EXPECT_TRUE(fs::exists(dir / file)) << file;
            }
        }
        EXPECT_GE(interrupted, static_cast<int>(setting.killAt.size()) - 2);
    }
}

// A run folder that cannot be written (the file-size limit stands in for a full disk; the tests
// run as root, for whom a read-only folder is writable): the run stops with one line that names
// the file, keeps what it wrote, and resumes once there is room.
TEST_F(Cli, AFullDiskStopsTheRunKeepsWhatWasWrittenAndItResumes) {
    const fs::path dir = m_dir / "run";
    const std::string command = commandOf(kRun);
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
