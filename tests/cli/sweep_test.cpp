// nopescope-cli sweep end to end: tiny grids of tiny models, run as a user would; what the sweep
// writes (manifest, run folders, sweep.csv, summary.csv), what it refuses, a failed run, and an
// interrupted sweep resumed.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

extern char** environ;

namespace {

using namespace nope::cli_test;
using Json = nlohmann::json;

constexpr const char* kTinyInit = "--dim 32 --heads 2 --samples 8 --task reversal --jobs 2";

// A sweep's manifest.
Json manifestOf(const fs::path& dir) {
    return Json::parse(slurp(dir / "sweep.json"));
}

std::vector<std::string> statuses(const Json& manifest) {
    std::vector<std::string> out;
    for (const auto& run : manifest.at("runs")) {
        out.push_back(run.at("status"));
    }
    return out;
}

// A grid over the task: each run analyses its own task's prompts, and the CSVs name the task.
TEST_F(Cli, SweepOverTheTask) {
    const fs::path dir = m_dir / "tasks";
    const Result r =
        run("sweep --grid \"task=addition,ordering\" --seeds 1 --dim 32 --heads 2 "
            "--samples 8 --jobs 2 --out " +
            dir.string());
    ASSERT_EQ(r.status, 0) << r.err;
    const auto summary = lines(slurp(dir / "summary.csv"));
    ASSERT_FALSE(summary.empty());
    EXPECT_EQ(summary[0].substr(0, 11), "task,stage,");
    const auto scores =
        slurp(dir / "runs" / "002-task=ordering-seed=1" / "analysis" / "scores.json");
    EXPECT_NE(scores.find("\"task\": \"ordering\""), std::string::npos) << scores;
    const Result both =
        run("sweep --grid \"task=addition\" --task reversal --out " + (m_dir / "both").string());
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("also an axis"), std::string::npos) << both.err;
}

TEST_F(Cli, SweepRunsTheGridAndSummarizesOverSeeds) {
    const fs::path dir = m_dir / "sweep";
    const Result r = run("sweep --grid \"layers=1,2\" --seeds 2 " + std::string(kTinyInit) +
                         " --out " + dir.string());
    ASSERT_EQ(r.status, 0) << r.err;
    const Json m = manifestOf(dir);
    EXPECT_EQ(m.at("version"), 1);
    EXPECT_EQ(m.at("mode"), "init");
    EXPECT_EQ(m.at("seeds"), Json({1, 2}));
    EXPECT_EQ(statuses(m), std::vector<std::string>(4, "done"));
    EXPECT_EQ(m.at("runs")[2].at("id"), "003-layers=2-seed=1");
    const auto command = m.at("runs")[2].at("commands")[0].get<std::vector<std::string>>();
    const std::string joinedCommand = Json(command).dump();
    EXPECT_EQ(command[1], "analyze");
    EXPECT_NE(joinedCommand.find(R"("--layers","2","--seed","1","--threads")"), std::string::npos)
        << joinedCommand;
    EXPECT_TRUE(fs::exists(dir / "runs" / "003-layers=2-seed=1" / "log.txt"));

    const auto sweep = lines(slurp(dir / "sweep.csv"));
    EXPECT_EQ(sweep[0], "layers,seed,stage,point,layer,adjacency_mean,adjacency_std");
    EXPECT_EQ(sweep.size(), 1u + 2u * (2u + 3u));  // 2 seeds x (embedding + 1 or 2 layers)
    EXPECT_EQ(sweep[1].substr(0, 23), "1,1,init,embedding,0,0.");
    const auto summary = lines(slurp(dir / "summary.csv"));
    EXPECT_EQ(summary[0],
              "layers,stage,point,layer,adjacency_mean,adjacency_std_over_seeds,ci95_low,"
              "ci95_high,seeds");
    ASSERT_EQ(summary.size(), 1u + 5u);
    for (size_t i = 1; i < summary.size(); ++i) {
        EXPECT_EQ(summary[i].substr(summary[i].size() - 2), ",2") << summary[i];
    }
    EXPECT_NE(r.out.find("adjacency (95% CI)"), std::string::npos) << r.out;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
        EXPECT_EQ(entry.path().string().find(".check"), std::string::npos) << entry.path();
    }
    const Result again = run("sweep --grid \"layers=1\" --out " + dir.string());
    EXPECT_EQ(again.status, 2);
    EXPECT_NE(again.err.find("already holds a sweep"), std::string::npos) << again.err;
    EXPECT_NE(again.err.find("--resume " + dir.string()), std::string::npos) << again.err;
}

TEST_F(Cli, SweepWithProbesGivesEachCommandTheFlagsItTakes) {
    const fs::path dir = m_dir / "sweep";
    const Result r =
        run("sweep --grid \"init-std=0.02,0.05\" --seeds 1 --probes --init normal --layers 1 " +
            std::string(kTinyInit) +
            " --preset fast --probe-epochs 2 --probe-train-strings 40 --probe-test-strings 20 "
            "--probe-features norm,cosine --out " +
            dir.string());
    ASSERT_EQ(r.status, 0) << r.err;
    const Json commands = manifestOf(dir).at("runs")[0].at("commands");
    ASSERT_EQ(commands.size(), 2u);
    const std::string analyze = commands[0].dump(), probe = commands[1].dump();
    EXPECT_NE(analyze.find(R"("--samples","8")"), std::string::npos) << analyze;
    EXPECT_EQ(analyze.find("--probe-epochs"), std::string::npos) << analyze;  // analyze's flags
    EXPECT_EQ(analyze.find("--preset"), std::string::npos) << analyze;
    EXPECT_EQ(probe.find("--samples"), std::string::npos) << probe;  // probe's flags
    EXPECT_NE(probe.find(R"("--init-std","0.02")"), std::string::npos) << probe;
    EXPECT_NE(probe.find(R"("--probe-epochs","2")"), std::string::npos) << probe;

    const auto sweep = lines(slurp(dir / "sweep.csv"));
    EXPECT_EQ(sweep[0],
              "init_std,seed,stage,point,layer,adjacency_mean,adjacency_std,probe_norm_r,"
              "probe_norm_nrmse,probe_cosine_r,probe_cosine_nrmse");
    ASSERT_EQ(sweep.size(), 1u + 2u * 2u);
    EXPECT_EQ(std::count(sweep[2].begin(), sweep[2].end(), ','), 10);
    EXPECT_EQ(sweep[2].find(",,"), std::string::npos) << sweep[2];  // every probe joined
    const auto summary = lines(slurp(dir / "summary.csv"));
    EXPECT_NE(summary[0].find(",seeds,probe_norm_r_mean,probe_norm_nrmse_mean,"), std::string::npos)
        << summary[0];
}

TEST_F(Cli, SweepRefusesBadFlagsAndWritesNothing) {
    const fs::path dir = m_dir / "never";
    const struct {
        std::string args;
        const char* mentions;
    } cases[] = {
        {"--grid \"layers=abc\"", "--grid: layers=abc: 'abc' is not an integer (allowed: 1 to 48)"},
        {"--grid \"depth=3\"",
         "'depth' is not a setting (allowed: task, or a setting name such as"},
        {"--grid \"layers=1 layers=2\"", "layers is already an axis"},
        {"--grid \"context=64,4\"",  // the child's own check, then the sweep's line
         "--context: 4 is shorter than the reversal prompts (allowed: 22 to 4096)\nnopescope-cli "
         "sweep: run 006-context=4-seed=1: analyze refuses its flags"},
        {"--grid \"lr=0.1\"", "--grid: lr is not a flag of analyze (allowed at init:"},
        {"--grid \"layers=1\" --frobnicate 3", "unknown flag --frobnicate (not a flag of sweep"},
        {"--grid \"layers=1\" --seed 3", "--seed: set by the sweep for each run"},
        {"--grid \"layers=1\" --layers 2", "--layers: also an axis of --grid"},
        {"--grid \"layers=1\" --probes --trained quick", "--probes: only at init"},
        {"--grid \"layers=1\" --trained slow", "--trained: 'slow' is not allowed"},
        {"--grid \"layers=1\" --seeds 2 --seed-list 3,4", "--seed-list: not with --seeds"},
        {"--grid \"layers=1\" --samples 0", "--samples: 0 is outside the allowed 1 to 10000"},
    };
    for (const auto& c : cases) {
        const Result r = run("sweep " + c.args + " " + kTinyInit + " --out " + dir.string());
        EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(fs::exists(dir)) << c.args;
    }
    std::ofstream(m_dir / "file") << "x";
    const Result file = run("sweep --grid \"layers=1\" --out " + (m_dir / "file").string());
    EXPECT_EQ(file.status, 2);
    EXPECT_NE(file.err.find("is a file"), std::string::npos) << file.err;
    const Result nothing = run("sweep --resume " + dir.string());
    EXPECT_EQ(nothing.status, 2);
    EXPECT_NE(nothing.err.find("holds no sweep.json"), std::string::npos) << nothing.err;
}

// A run that passes every check and fails while it runs: a normal init with a mean of 1e300
// overflows float, and training stops at once on the NaN loss (exit 1). The other run goes on.
TEST_F(Cli, SweepReportsAFailedRunAndWritesTheOthers) {
    const fs::path dir = m_dir / "sweep";
    const Result r = run(
        "sweep --trained quick --grid \"init-mean=0,1e300\" --seeds 1 --init normal "
        "--init-std 0.02 --task indexing --layers 1 --dim 32 --heads 2 --steps 4 --eval-every 2 "
        "--snapshot-every 2 --eval-samples 20 --analysis-samples 8 --final-samples 8 "
        "--probe-every 0 --batch 16 --train-size 200 --test-size 100 --jobs 2 --out " +
        dir.string());
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("run 002-init-mean=1e300-seed=1 failed (exit 1)"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("NaN"), std::string::npos) << r.err;  // the end of its log
    const Json m = manifestOf(dir);
    EXPECT_EQ(statuses(m), (std::vector<std::string>{"done", "failed"}));
    EXPECT_EQ(m.at("runs")[1].at("exit_code"), 1);
    EXPECT_EQ(m.at("preset"), "quick");
    EXPECT_EQ(m.at("runs")[0].at("commands")[0][1], "train");

    const auto sweep = lines(slurp(dir / "sweep.csv"));
    EXPECT_EQ(sweep[0],
              "init_mean,seed,stage,point,layer,adjacency_mean,adjacency_std,best_accuracy");
    ASSERT_GE(sweep.size(), 3u);
    for (size_t i = 1; i < sweep.size(); ++i) {
        EXPECT_EQ(sweep[i].substr(0, 4), "0,1,") << sweep[i];  // only the run that finished
    }
    EXPECT_EQ(sweep[1].substr(0, 8), "0,1,init");
    EXPECT_EQ(sweep.back().substr(0, 11), "0,1,trained");
    const auto summary = lines(slurp(dir / "summary.csv"));
    EXPECT_EQ(summary[0].substr(summary[0].size() - 25), ",seeds,best_accuracy_mean");
}

// Starts the CLI without waiting for it; its output goes to files.
pid_t launch(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
    std::vector<std::string> argv = {NOPESCOPE_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (auto& a : argv) {
        raw.push_back(a.data());
    }
    raw.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int error = posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return error == 0 ? pid : -1;
}

// Longer than 60 lines for a reason: one story, interrupt then resume, whose checks read in order.
TEST_F(Cli, SweepStopsOnSigintAndResumesWhatIsNotDone) {
    const fs::path dir = m_dir / "sweep";
    const pid_t pid =
        launch({"sweep", "--grid", "layers=1,2,3", "--seeds", "2", "--dim", "32", "--heads", "2",
                "--samples", "8", "--task", "reversal", "--jobs", "1", "--out", dir.string()},
               m_dir / "out.txt", m_dir / "err.txt");
    ASSERT_GT(pid, 0);
    // Once a run is done and the next one running (the manifest is written atomically: always
    // whole), a Ctrl-C from elsewhere than the terminal, which the sweep forwards to its child.
    bool midway = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!midway && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (fs::exists(dir / "sweep.json")) {
            const auto s = statuses(manifestOf(dir));
            midway = std::count(s.begin(), s.end(), "done") > 0 &&
                     std::count(s.begin(), s.end(), "running") > 0;
        }
    }
    ASSERT_TRUE(midway);
    ::kill(pid, SIGINT);
    int raw = 0;
    ASSERT_EQ(::waitpid(pid, &raw, 0), pid);
    ASSERT_TRUE(WIFEXITED(raw));
    EXPECT_EQ(WEXITSTATUS(raw), 130) << slurp(m_dir / "err.txt");
    const std::string err = slurp(m_dir / "err.txt");
    EXPECT_NE(err.find("continue with: nopescope-cli sweep --resume " + dir.string()),
              std::string::npos)
        << err;
    const auto stopped = statuses(manifestOf(dir));
    const auto done = std::count(stopped.begin(), stopped.end(), "done");
    EXPECT_GE(done, 1);
    EXPECT_LT(done, 6);
    EXPECT_EQ(std::count(stopped.begin(), stopped.end(), "running"), 0);
    EXPECT_EQ(std::count(stopped.begin(), stopped.end(), "interrupted"), 1) << err;

    // A done run is kept as it is; a run not done is run again from an empty folder.
    const fs::path first = dir / "runs" / "001-layers=1-seed=1";
    const auto firstLog = slurp(first / "log.txt");
    const fs::path last = dir / "runs" / "006-layers=3-seed=2";
    fs::create_directories(last);
    std::ofstream(last / "stale.txt") << "from before";

    const Result resumed = run("sweep --resume " + dir.string() + " --jobs 2");
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_EQ(statuses(manifestOf(dir)), std::vector<std::string>(6, "done"));
    EXPECT_EQ(manifestOf(dir).at("jobs"), 2);
    EXPECT_EQ(slurp(first / "log.txt"), firstLog);
    EXPECT_FALSE(fs::exists(last / "stale.txt"));
    EXPECT_TRUE(fs::exists(last / "analysis" / "scores.csv"));
    EXPECT_EQ(lines(slurp(dir / "sweep.csv")).size(), 1u + 2u * (2u + 3u + 4u));
    EXPECT_EQ(run("sweep --resume " + dir.string() + " --seeds 3").status, 2);
}

}  // namespace
