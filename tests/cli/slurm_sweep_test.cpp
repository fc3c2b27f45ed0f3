// nopescope-cli sweep --executor slurm against stand-ins for sbatch, squeue and sacct
// (tests/slurm/fake/), which run each array task as Slurm would: the same results as the local
// executor, a task that ends at its time limit resubmitted alone by --resume, a refused
// submission, and the flags refused. tests/slurm/run.sh does the same against a real Slurm.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

extern char** environ;

namespace {

using namespace nope::cli_test;
using Json = nlohmann::json;

constexpr const char* kGrid =
    "sweep --grid \"layers=1,2\" --seeds 2 --dim 32 --heads 2 --samples 8 --task reversal "
    "--threads 1";
// Two runs, one seed each, where only the path of a run through the executor matters.
constexpr const char* kSmallGrid =
    "sweep --grid \"layers=1,2\" --seeds 1 --dim 32 --heads 2 --samples 8 --task reversal "
    "--threads 1";
constexpr size_t kSmallGridRows = 1 + 2 + 3;  // the header, the embedding and 1 or 2 layers

// The printed summary without its last line, which names the folder.
std::string table(const std::string& out) {
    return out.substr(0, out.find("wrote "));
}

class SlurmSweep : public Cli {
protected:
    void SetUp() override {
        Cli::SetUp();
        fs::create_directories(m_dir / "slurm-state");
    }
    // The command with the fake Slurm first in PATH, polled every 0.1 s.
    Result slurm(const std::string& args, const std::string& env = "") {
        const std::string fake = std::string(NOPESCOPE_SOURCE_DIR) + "/tests/slurm/fake";
        return run(
            args, "PATH=" + fake +
                      ":$PATH NOPESCOPE_FAKE_SLURM=" + (m_dir / "slurm-state").string() +
                      " NOPESCOPE_SLURM_POLL_SECONDS=0.1 NOPESCOPE_SLURM_GRACE_SECONDS=0.3 " + env);
    }
    static Json manifestOf(const fs::path& dir) { return Json::parse(slurp(dir / "sweep.json")); }

    // Starts `nopescope-cli ARGS` with the fake Slurm without waiting; stderr goes to `err`.
    pid_t start(const std::vector<std::string>& args, const fs::path& err,
                const std::vector<std::string>& env) {
        std::vector<std::string> argv = {NOPESCOPE_CLI};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<std::string> vars = env;
        vars.push_back("PATH=" + std::string(NOPESCOPE_SOURCE_DIR) +
                       "/tests/slurm/fake:" + std::getenv("PATH"));
        vars.push_back("NOPESCOPE_FAKE_SLURM=" + (m_dir / "slurm-state").string());
        vars.push_back("NOPESCOPE_SLURM_POLL_SECONDS=0.1");
        for (char** e = environ; *e; ++e) {
            if (std::string(*e).rfind("PATH=", 0) != 0) {
                vars.push_back(*e);
            }
        }
        std::vector<char*> rawArgs, rawVars;
        for (auto& a : argv) {
            rawArgs.push_back(a.data());
        }
        for (auto& v : vars) {
            rawVars.push_back(v.data());
        }
        rawArgs.push_back(nullptr);
        rawVars.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                         0644);
        pid_t pid = -1;
        const int error =
            posix_spawn(&pid, rawArgs[0], &actions, nullptr, rawArgs.data(), rawVars.data());
        posix_spawn_file_actions_destroy(&actions);
        return error == 0 ? pid : -1;
    }
};

TEST_F(SlurmSweep, RunsTheArrayAndGathersWhatTheLocalExecutorGathers) {
    const fs::path local = m_dir / "local", cluster = m_dir / "cluster";
    const Result l = run(std::string(kGrid) + " --jobs 2 --out " + local.string());
    ASSERT_EQ(l.status, 0) << l.err;
    const Result s = slurm(std::string(kGrid) +
                           " --executor slurm --partition debug --time 00:05:00 "
                           "--array-parallelism 2 --out " +
                           cluster.string());
    ASSERT_EQ(s.status, 0) << s.err;
    EXPECT_NE(s.err.find("submitted array job 100: 4 runs (0-3)"), std::string::npos) << s.err;
    EXPECT_EQ(slurp(cluster / "sweep.csv"), slurp(local / "sweep.csv"));
    EXPECT_EQ(slurp(cluster / "summary.csv"), slurp(local / "summary.csv"));
    EXPECT_EQ(table(s.out), table(l.out));

    const Json m = manifestOf(cluster);
    EXPECT_EQ(m.at("executor"), "slurm");
    EXPECT_EQ(m.at("slurm").at("partition"), "debug");
    EXPECT_EQ(m.at("slurm").at("arrays")[0].at("job"), "100");
    for (const auto& run : m.at("runs")) {
        EXPECT_EQ(run.at("status"), "done") << run.dump();
        EXPECT_TRUE(fs::exists(cluster / "runs" / run.at("id").get<std::string>() / "status.json"));
    }
    const std::string script = slurp(cluster / "slurm" / "array-1.sbatch");
    EXPECT_NE(script.find("#SBATCH --array=0-3%2\n"), std::string::npos) << script;
    EXPECT_NE(script.find("#SBATCH --time=00:05:00\n"), std::string::npos) << script;
    EXPECT_NE(script.find("#SBATCH --no-requeue\n"), std::string::npos) << script;
    // the task runs where the sweep was started, so that relative paths in flags hold
    EXPECT_NE(script.find("cd '" + fs::current_path().string() + "' || exit 1\n"),
              std::string::npos)
        << script;
    EXPECT_NE(slurp(cluster / "slurm" / "100_3.out").find("run 004-layers=2-seed=2: done"),
              std::string::npos);
}

TEST_F(SlurmSweep, ATaskKilledAtItsTimeLimitIsResubmittedAloneByResume) {
    const fs::path dir = m_dir / "cluster";
    const Result first = slurm(std::string(kSmallGrid) + " --executor slurm --out " + dir.string(),
                               "NOPESCOPE_FAKE_SLURM_END=1:TIMEOUT");
    EXPECT_EQ(first.status, 1) << first.err;
    EXPECT_NE(first.err.find("failed: 002-layers=2-seed=1"), std::string::npos) << first.err;
    const std::string log = slurp(dir / "runs" / "002-layers=2-seed=1" / "log.txt");
    EXPECT_NE(log.find("array task 100_1 ended TIMEOUT"), std::string::npos) << log;
    EXPECT_EQ(manifestOf(dir).at("runs")[1].at("status"), "failed");

    const Result resumed = slurm("sweep --resume " + dir.string() + " --time 1:00:00");
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("submitted array job 101: 1 runs (1)"), std::string::npos)
        << resumed.err;
    const Json m = manifestOf(dir);
    EXPECT_EQ(m.at("slurm").at("time"), "1:00:00");
    EXPECT_EQ(m.at("slurm").at("arrays")[1].at("runs"), Json({1}));
    const std::string script = slurp(dir / "slurm" / "array-2.sbatch");
    EXPECT_NE(script.find("#SBATCH --array=1\n"), std::string::npos) << script;
    EXPECT_EQ(lines(slurp(dir / "sweep.csv")).size(), kSmallGridRows);
}

TEST_F(SlurmSweep, ARefusedSubmissionKeepsTheRunsForResume) {
    const fs::path dir = m_dir / "cluster";
    const Result refused =
        slurm(std::string(kSmallGrid) + " --executor slurm --out " + dir.string(),
              "NOPESCOPE_FAKE_SLURM_REFUSE=1");
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("sbatch refused"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("Invalid partition name"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("--resume " + dir.string()), std::string::npos) << refused.err;
    EXPECT_TRUE(manifestOf(dir).at("slurm").at("arrays").empty());
    const Result resumed = slurm("sweep --resume " + dir.string());
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_FALSE(fs::exists(dir / "slurm" / "array-2.sbatch"));
}

TEST_F(SlurmSweep, DetachSubmitsAndResumeGathers) {
    const fs::path dir = m_dir / "cluster";
    const Result detached =
        slurm(std::string(kSmallGrid) + " --executor slurm --detach --out " + dir.string());
    ASSERT_EQ(detached.status, 0) << detached.err;
    EXPECT_NE(detached.err.find("scancel 100"), std::string::npos) << detached.err;
    const Result gathered = slurm("sweep --resume " + dir.string());
    ASSERT_EQ(gathered.status, 0) << gathered.err;
    EXPECT_EQ(manifestOf(dir).at("slurm").at("arrays").size(), 1u);  // nothing submitted twice
    EXPECT_EQ(lines(slurp(dir / "sweep.csv")).size(), kSmallGridRows);
}

// squeue failing for a while (a controller restarting) is waited out: no run counts as lost.
TEST_F(SlurmSweep, ASqueueOutageIsWaitedOut) {
    const fs::path dir = m_dir / "cluster";
    const Result r = slurm(std::string(kSmallGrid) + " --executor slurm --out " + dir.string(),
                           "NOPESCOPE_FAKE_SQUEUE_FAIL=12");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("squeue failed (exit 1): squeue: error: Unable to contact slurm "
                         "controller (connect failure); asking again"),
              std::string::npos)
        << r.err;
    for (const auto& run : manifestOf(dir).at("runs")) {
        EXPECT_EQ(run.at("status"), "done") << run.dump();
    }
}

// Ctrl-C stops following, not the array: the runs go on in Slurm, and --resume follows them to
// their end without submitting any again.
TEST_F(SlurmSweep, CtrlCStopsFollowingAndTheArrayKeepsRunning) {
    const fs::path dir = m_dir / "cluster", err = m_dir / "follow-err.txt",
                   hold = m_dir / "release";
    const pid_t pid = start({"sweep", "--grid", "layers=1,2", "--seeds", "1", "--dim", "32",
                             "--heads", "2", "--samples", "8", "--task", "reversal", "--threads",
                             "1", "--executor", "slurm", "--out", dir.string()},
                            err, {"NOPESCOPE_FAKE_SLURM_HOLD=" + hold.string()});
    ASSERT_GT(pid, 0);
    // the tasks are held queued: the sweep is following once it has said it submitted
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (slurp(err).find("submitted array job 100") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_NE(slurp(err).find("submitted array job 100"), std::string::npos) << slurp(err);
    ::kill(pid, SIGINT);
    int raw = 0;
    ASSERT_EQ(::waitpid(pid, &raw, 0), pid);
    ASSERT_TRUE(WIFEXITED(raw));
    EXPECT_EQ(WEXITSTATUS(raw), 130) << slurp(err);
    EXPECT_NE(slurp(err).find("stopped following; the submitted runs keep running in Slurm (stop "
                              "them with: scancel 100); gather with: nopescope-cli sweep "
                              "--resume " +
                              dir.string()),
              std::string::npos)
        << slurp(err);
    for (const auto& run : manifestOf(dir).at("runs")) {
        EXPECT_EQ(run.at("status"), "pending") << run.dump();
    }
    std::ofstream(hold) << "go";  // Slurm runs them meanwhile
    const Result resumed = slurm("sweep --resume " + dir.string());
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_EQ(resumed.err.find("submitted"), std::string::npos) << resumed.err;
    EXPECT_EQ(manifestOf(dir).at("slurm").at("arrays").size(), 1u);
    EXPECT_EQ(lines(slurp(dir / "sweep.csv")).size(), kSmallGridRows);
}

TEST_F(SlurmSweep, RefusesFlagsThatDoNotFitTheExecutor) {
    const std::string out = " --out " + (m_dir / "x").string();
    const struct {
        std::string args;
        const char* message;
    } cases[] = {
        {" --partition debug", "--partition: only with the Slurm executor"},
        {" --executor slurm --jobs 2", "--jobs: the local executor's"},
        {" --executor slurm --time 1h", "--time: '1h' is not a Slurm time limit"},
        {" --executor slurm --partition \"a b\"", "--partition: 'a b' is not a partition name"},
        {" --executor pbs", "--executor"},
    };
    for (const auto& c : cases) {
        const Result r = slurm(kGrid + c.args + out);
        EXPECT_EQ(r.status, 2) << c.args;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(m_dir / "x"));
    const Result noSlurm = run(kGrid + std::string(" --executor slurm") + out, "PATH=/nowhere");
    EXPECT_EQ(noSlurm.status, 2);
    EXPECT_NE(noSlurm.err.find("sbatch is not in PATH"), std::string::npos) << noSlurm.err;
    const Result task = run("sweep --run-index 0 --out " + (m_dir / "none").string());
    EXPECT_EQ(task.status, 2);
    EXPECT_NE(task.err.find("holds no sweep.json"), std::string::npos) << task.err;
}

}  // namespace
