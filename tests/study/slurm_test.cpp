// The Slurm executor's pieces that need no cluster: task id ranges both ways, arrays of at most
// Slurm's default size, the sbatch script, squeue's lines, job states, the status file of an
// array task, sweep.json with the executor, and a captured child process.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "common/test_folder.h"
#include "study/manifest.h"
#include "study/slurm.h"
#include "util/files.h"

namespace {

namespace fs = std::filesystem;
using namespace nope::study;

TEST(Slurm, RangesBothWays) {
    EXPECT_EQ(rangesText({0, 1, 2, 3, 5, 9, 10}), "0-3,5,9-10");
    EXPECT_EQ(rangesText({7}), "7");
    EXPECT_EQ(parseRanges("0-3,5,9-10"), (std::vector<size_t>{0, 1, 2, 3, 5, 9, 10}));
    // squeue's forms: a pending array's tasks with its limit, in brackets, with a step
    EXPECT_EQ(parseRanges("1-4%2"), (std::vector<size_t>{1, 2, 3, 4}));
    EXPECT_EQ(parseRanges("[0-1,8]"), (std::vector<size_t>{0, 1, 8}));
    EXPECT_EQ(parseRanges("[1-3%1]"), (std::vector<size_t>{1, 2, 3}));
    EXPECT_EQ(parseRanges("0-9:3"), (std::vector<size_t>{0, 3, 6, 9}));
    for (const char* bad : {"N/A", "", "5-1", "a", "1,,2", "-3", "1-", "0-9:0"}) {
        EXPECT_THROW(parseRanges(bad), std::invalid_argument) << bad;
    }
}

TEST(Slurm, LargeSweepsAreSplitIntoArraysOfSlurmsDefaultSize) {
    const auto arrays = arrayChunks({0, 1, 999, 1000, 1001, 2500});
    ASSERT_EQ(arrays.size(), 3u);
    EXPECT_EQ(arrays[0].offset, 0u);
    EXPECT_EQ(arrays[0].runs, (std::vector<size_t>{0, 1, 999}));
    EXPECT_EQ(arrays[1].offset, 1000u);
    EXPECT_EQ(arrays[1].runs, (std::vector<size_t>{1000, 1001}));
    EXPECT_EQ(arrays[2].offset, 2000u);
    EXPECT_EQ(arrays[2].runs, (std::vector<size_t>{2500}));
}

TEST(Slurm, TheArrayScriptHoldsTheSettingsAndRunsOneRunPerTask) {
    SlurmSettings settings;
    settings.partition = "debug";
    settings.time = "00:10:00";
    settings.cpusPerTask = 2;
    settings.arrayParallelism = 3;
    settings.workDir = "/home/a b";
    const SlurmArray array{"", 1000, {1000, 1001, 1003}};
    const std::string script =
        arrayScript(settings, array, "/data/it's a sweep", "/opt/nope scope/nopescope-cli");
    EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u) << script;
    for (const char* line :
         {"#SBATCH --array=0-1,3%3\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --partition=debug\n",
          "#SBATCH --time=00:10:00\n", "#SBATCH --output=slurm/%A_%a.out\n",
          "#SBATCH --no-requeue\n", "cd '/home/a b' || exit 1\n",
          "exec '/opt/nope scope/nopescope-cli' sweep --run-index $((1000 + SLURM_ARRAY_TASK_ID)) "
          "--out '/data/it'\\''s a sweep'\n"}) {
        EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
    }
    // unset settings leave Slurm's defaults
    const std::string plain = arrayScript(SlurmSettings{}, {"", 0, {0, 1}}, "/s", "/x");
    EXPECT_NE(plain.find("#SBATCH --array=0-1\n"), std::string::npos) << plain;
    EXPECT_EQ(plain.find("--partition"), std::string::npos);
    EXPECT_EQ(plain.find("--time"), std::string::npos);
    EXPECT_EQ(plain.find("\ncd "), std::string::npos);
}

TEST(Slurm, TimeLimitsAndPartitionNames) {
    for (const char* good : {"10", "10:30", "01:00:00", "2-00", "1-12:30", "1-12:30:00"}) {
        EXPECT_FALSE(slurmTimeProblem(good)) << good;
    }
    for (const char* bad : {"", "1h", "0", "00:00:00", "-1", "1:2:3:4", "1-", "x-10"}) {
        const auto problem = slurmTimeProblem(bad);
        ASSERT_TRUE(problem) << bad;
        EXPECT_NE(problem->find("allowed"), std::string::npos) << *problem;
    }
    EXPECT_TRUE(isPartitionName("debug"));
    EXPECT_TRUE(isPartitionName("cpu,gpu-a100"));
    for (const char* bad : {"", "a b", "x;rm", "a,", ",a"}) {
        EXPECT_FALSE(isPartitionName(bad)) << bad;
    }
}

TEST(Slurm, SqueueLinesAndStates) {
    const auto lines =
        parseSqueue("6|1-5%1|PENDING\n6|0|RUNNING\n4|N/A|CANCELLED\ngarbage\n7|2|TIMEOUT\r\n");
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0].jobId, "6");
    EXPECT_EQ(lines[0].tasks, (std::vector<size_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(lines[0].state, "PENDING");
    EXPECT_EQ(lines[2].state, "TIMEOUT");
    EXPECT_EQ(phaseOf("PENDING"), SlurmPhase::Queued);
    EXPECT_EQ(phaseOf("RUNNING"), SlurmPhase::Running);
    EXPECT_EQ(phaseOf("COMPLETING"), SlurmPhase::Running);
    EXPECT_EQ(phaseOf("TIMEOUT"), SlurmPhase::Ended);
    EXPECT_EQ(phaseOf("CANCELLED by 0"), SlurmPhase::Ended);
    EXPECT_TRUE(stoppedState("CANCELLED by 0"));
    EXPECT_FALSE(stoppedState("OUT_OF_MEMORY"));
}

TEST(Slurm, TheTaskStatusFileRoundTripsAndADamagedOneIsNone) {
    nope::test::TestFolder folder("slurm-test");
    const fs::path file = folder.path() / kTaskEndFile;
    EXPECT_FALSE(readTaskEnd(file));
    nope::writeFileAtomic(file, taskEndJson({RunStatus::Failed, 3, 1.5, "12_4"}));
    const auto end = readTaskEnd(file);
    ASSERT_TRUE(end);
    EXPECT_EQ(end->status, RunStatus::Failed);
    EXPECT_EQ(end->exitCode, 3);
    EXPECT_DOUBLE_EQ(end->seconds, 1.5);
    EXPECT_EQ(end->job, "12_4");
    nope::writeFileAtomic(file, "{\"status\": \"done\"");
    EXPECT_FALSE(readTaskEnd(file));
    nope::writeFileAtomic(file,
                          "{\"status\": \"pending\", \"exit_code\": 0, \"seconds\": 0, "
                          "\"job\": \"1_0\"}");
    EXPECT_FALSE(readTaskEnd(file));
}

Manifest slurmManifest() {
    Manifest m;
    m.grid = parseGrid("layers=1,2");
    m.seeds = {1};
    m.executor = Executor::Slurm;
    m.slurm.partition = "debug";
    m.slurm.time = "1:00:00";
    m.slurm.cpusPerTask = 4;
    m.slurm.arrayParallelism = 2;
    m.slurm.workDir = "/home/me";
    m.slurm.arrays = {{"41", 0, {0, 1}}, {"45", 0, {1}}};
    for (const char* id : {"001-layers=1-seed=1", "002-layers=2-seed=1"}) {
        SweepRun run;
        run.id = id;
        run.settings = {{"layers", id[11] == '1' ? "1" : "2"}};
        run.seed = 1;
        run.log = std::string("runs/") + id + "/log.txt";
        m.runs.push_back(run);
    }
    return m;
}

TEST(Slurm, TheManifestKeepsTheExecutorAndItsArrays) {
    const Manifest m = slurmManifest();
    const Manifest back = parseManifest(manifestJson(m), "sweep.json");
    EXPECT_EQ(back.executor, Executor::Slurm);
    EXPECT_EQ(back.slurm.partition, "debug");
    EXPECT_EQ(back.slurm.time, "1:00:00");
    EXPECT_EQ(back.slurm.cpusPerTask, 4);
    EXPECT_EQ(back.slurm.arrayParallelism, 2);
    EXPECT_EQ(back.slurm.workDir, "/home/me");
    ASSERT_EQ(back.slurm.arrays.size(), 2u);
    EXPECT_EQ(back.slurm.arrays[1].jobId, "45");
    EXPECT_EQ(back.slurm.arrays[1].runs, std::vector<size_t>{1});

    // a sweep.json written before the executor existed ran locally
    Manifest local = m;
    local.executor = Executor::Local;
    std::string text = manifestJson(local);
    const auto key = text.find("  \"executor\": \"local\",\n");
    ASSERT_NE(key, std::string::npos) << text;
    text.erase(key, std::string("  \"executor\": \"local\",\n").size());
    EXPECT_EQ(parseManifest(text, "sweep.json").executor, Executor::Local);

    // an array naming a run the sweep does not have is a damaged file, named
    Manifest wrong = m;
    wrong.slurm.arrays[0].runs = {0, 7};
    try {
        parseManifest(manifestJson(wrong), "/s/sweep.json");
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/s/sweep.json"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("run 7"), std::string::npos) << e.what();
    }
}

TEST(Slurm, ACapturedCommandGivesItsOutputsAndExitStatus) {
    const Captured c = runCaptured({"sh", "-c", "echo out; echo err >&2; exit 3"});
    EXPECT_EQ(c.exitCode, 3);
    EXPECT_EQ(c.out, "out\n");
    EXPECT_EQ(c.err, "err\n");
    nope::test::TestFolder folder("slurm-test");
    const Captured here = runCaptured({"pwd"}, folder.path());
    EXPECT_EQ(here.out, fs::canonical(folder.path()).string() + "\n");
    const Captured missing = runCaptured({"no-such-program-anywhere"});
    EXPECT_EQ(missing.exitCode, 127);
    EXPECT_NE(missing.err.find("no-such-program-anywhere"), std::string::npos);
    const Captured hung = runCaptured({"sleep", "30"}, {}, 0.3);
    EXPECT_EQ(hung.exitCode, 124);
    EXPECT_NE(hung.err.find("sleep did not answer within 0.3 s"), std::string::npos) << hung.err;
    const Captured killed = runCaptured({"sh", "-c", "kill -TERM $$"});
    EXPECT_EQ(killed.exitCode, 128 + SIGTERM);
    EXPECT_TRUE(inPath("sh"));
    EXPECT_FALSE(inPath("no-such-program-anywhere"));
}

}  // namespace
