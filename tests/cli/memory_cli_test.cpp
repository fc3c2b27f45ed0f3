// A model too large for the machine is refused before anything is allocated, with the estimate
// and the memory available.
#include <gtest/gtest.h>

#include "cli/cli_fixture.h"
#include "util/memory.h"

namespace {

using namespace nope::cli_test;

constexpr const char* kHuge = "--layers 48 --dim 4096 --heads 32";

TEST(Memory, EstimateOfTheDefaultModel) {
    nope::ModelConfig m;  // 10,658,688 parameters
    const auto train = nope::trainingMemory(m, 64, 32, /*bf16=*/false);
    EXPECT_DOUBLE_EQ(train.weights, 4.0 * 10658688);
    EXPECT_DOUBLE_EQ(train.gradients, train.weights);
    EXPECT_DOUBLE_EQ(train.optimizer, 2.0 * train.weights);
    EXPECT_GT(train.activations, 0.0);
    const auto analysis = nope::analysisMemory(m, 128, 32);
    EXPECT_EQ(analysis.gradients + analysis.optimizer, 0.0);
    EXPECT_TRUE(nope::memoryProblem(train, 1e12, "to train").empty());
    const std::string problem = nope::memoryProblem(train, 1e8, "to train");
    EXPECT_NE(problem.find("the model needs about"), std::string::npos) << problem;
    EXPECT_NE(problem.find("optimizer state 85 MB"), std::string::npos) << problem;
    EXPECT_NE(problem.find("this machine has 100 MB available"), std::string::npos) << problem;
    EXPECT_EQ(nope::bytesText(38.25e9), "38.2 GB");
}

// The masked attention of per-example rows keeps more than windows' fused attention: a batch
// measured at 8.49 GB (fp32) and 7.43 GB (bf16) peak is estimated at no less.
TEST(Memory, MaskedPaddingCountsTheMaskedAttention) {
    nope::ModelConfig m;  // 6 x 384, 6 heads
    for (bool bf16 : {false, true}) {
        const auto masked = nope::trainingMemory(m, 1024, 38, bf16, /*maskedPadding=*/true);
        EXPECT_GT(masked.total(), 7.8e9);
        EXPECT_LT(masked.total(), 9.0e9);
        EXPECT_GT(masked.total(), nope::trainingMemory(m, 1024, 38, bf16).total());
    }
}

TEST_F(Cli, TooLargeAModelIsRefusedBeforeAllocation) {
    const auto available = nope::availableMemory();
    ASSERT_TRUE(available.has_value());
    nope::ModelConfig huge;
    huge.nLayer = 48;
    huge.nEmbd = 4096;
    huge.nHead = 32;
    // 9.7 billion parameters: 155 GB to train, 39 GB to analyse
    ASSERT_GT(nope::trainingMemory(huge, 256, 32, true).total(), *available);
    const Result train = run(std::string("train --task reversal --steps 1 --check ") + kHuge +
                             " --out " + (m_dir / "run").string());
    EXPECT_EQ(train.status, 2);
    EXPECT_NE(train.err.find("--dim: the model needs about"), std::string::npos) << train.err;
    EXPECT_NE(train.err.find("optimizer state"), std::string::npos) << train.err;
    EXPECT_NE(train.err.find("available"), std::string::npos) << train.err;
    EXPECT_EQ(train.err.find("frame #"), std::string::npos) << train.err;  // no stack trace
    EXPECT_FALSE(fs::exists(m_dir / "run"));

    if (nope::analysisMemory(huge, 128, 64).total() > *available) {  // a machine under 39 GB
        const Result analyze = run(std::string("analyze ") + kHuge);
        EXPECT_EQ(analyze.status, 2);
        EXPECT_NE(analyze.err.find("to analyse (weights"), std::string::npos) << analyze.err;
    }
}

}  // namespace

// Memory that runs out after the estimate said yes (here a limit on the process's address space,
// below what the model takes): one line that says so, never LibTorch's message and backtrace.
TEST_F(Cli, MemoryThatRunsOutGivesOneLineWithoutABacktrace) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: a limit on it cannot "
                    "stand in for a small memory";
#endif
    const std::string command = "bash -c \"ulimit -v 3000000; exec " + std::string(NOPESCOPE_CLI) +
                                " train --layers 12 --dim 1024 --heads 8 --steps 2 --threads 1 "
                                "--out " +
                                (m_dir / "run").string() + "\" >/dev/null 2>" +
                                (m_dir / "err.txt").string();
    const int raw = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(raw));
    const auto err = lines(slurp(m_dir / "err.txt"));
    ASSERT_EQ(err.size(), 1u) << slurp(m_dir / "err.txt");
    if (WEXITSTATUS(raw) == 2) {  // a machine with less memory refuses it before allocation
        EXPECT_NE(err[0].find("the model needs about"), std::string::npos) << err[0];
        return;
    }
    EXPECT_EQ(WEXITSTATUS(raw), 1);
    EXPECT_EQ(err[0].find("nopescope-cli train: error: out of memory"), 0u) << err[0];
    EXPECT_EQ(err[0].find("enforce fail"), std::string::npos) << err[0];
    EXPECT_EQ(err[0].find("frame #"), std::string::npos) << err[0];
}
