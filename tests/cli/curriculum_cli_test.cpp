// nopescope-cli train's account of its curriculum: the stages the run reaches, and where every
// example is drawn from, or that the run ends first.
#include <gtest/gtest.h>

#include "cli/cli_fixture.h"

namespace {

using namespace nope::cli_test;

// ordering's numbers of 3 to 5 digits (prompts of 15 to 19 characters): with 8 rows a batch,
// every length fills one
constexpr const char* kTinyOrdering =
    "train --task ordering --layers 1 --dim 16 --heads 2 --batch 8 --eval-every 100 "
    "--eval-samples 16 --analysis-samples 4 --snapshot-every 100 --probe-every 0 --train-size 600 "
    "--test-size 50 --threads 1 --curriculum-steps 12";

TEST_F(Cli, TrainPrintsTheCurriculumStagesItReaches) {
    const Result whole =
        run(std::string(kTinyOrdering) + " --steps 14 --out " + (m_dir / "whole").string());
    ASSERT_EQ(whole.status, 0) << whole.err << whole.out;
    EXPECT_NE(whole.out.find("from step 0, prompts of up to 17 characters"), std::string::npos)
        << whole.out;
    EXPECT_NE(whole.out.find(", all from step 12\n"), std::string::npos) << whole.out;

    // two stages of 6 steps (numbers of up to 3 digits from step 0, up to 4 from step 6); a run
    // of 3 steps reaches the first only
    const Result part =
        run(std::string(kTinyOrdering) + " --steps 3 --out " + (m_dir / "part").string());
    ASSERT_EQ(part.status, 0) << part.err << part.out;
    EXPECT_NE(part.out.find("from step 0 (the run's 3 steps end within the curriculum's 12)"),
              std::string::npos)
        << part.out;
    EXPECT_EQ(part.out.find("from step 6"), std::string::npos) << part.out;
    EXPECT_EQ(part.out.find("all from step"), std::string::npos) << part.out;
}

}  // namespace
