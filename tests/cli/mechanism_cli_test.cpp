// nopescope-cli mechanism simulate end to end: the summary, the files, the control, bad flags.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

namespace {

using namespace nope::cli_test;

TEST_F(Cli, MechanismSimulateWritesTheMatrixAndTheScore) {
    const fs::path out = m_dir / "sim";
    const Result r =
        run("mechanism simulate --length 12 --dim 512 --samples 64 --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("closed form sqrt(k/m)"), std::string::npos) << r.out;
    const auto score = nlohmann::json::parse(slurp(out / "score.json"));
    EXPECT_GT(score.at("adjacency_mean").get<double>(), 0.97);
    EXPECT_LT(score.at("largest_difference_from_closed_form").get<double>(), 0.03);
    EXPECT_EQ(score.at("weights"), "uniform");
    EXPECT_EQ(score.at("length"), 12);
    EXPECT_EQ(lines(slurp(out / "matrix.csv")).size(), 12u);
    EXPECT_EQ(lines(slurp(out / "closed_form.csv")).size(), 12u);

    const Result control = run("mechanism simulate --length 12 --bidirectional --json");
    ASSERT_EQ(control.status, 0) << control.err;
    EXPECT_LT(nlohmann::json::parse(control.out).at("adjacency_mean").get<double>(), 0.2);
    const Result random =
        run("mechanism simulate --weights random --temperature 0.5 --samples 16 --json");
    ASSERT_EQ(random.status, 0) << random.err;
    EXPECT_FALSE(nlohmann::json::parse(random.out).contains("largest_difference_from_closed_form"));
}

TEST_F(Cli, MechanismRefusesBadFlags) {
    const struct {
        std::string args;
        std::string mentions;
    } cases[] = {
        {"simulate --length 2", "--length"},
        {"simulate --weights learned",
         "--weights: 'learned' is not allowed (allowed: uniform, random)"},
        {"simulate --temperature 0", "--temperature"},
        {"simulate --samples 100000 --length 1024 --dim 1024", "too many"},
        {"transplant", "unknown subcommand 'transplant' (allowed: simulate)"},
    };
    for (const auto& c : cases) {
        const Result r = run("mechanism " + c.args + " --out " + (m_dir / "x").string());
        EXPECT_EQ(r.status, 2) << c.args;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(fs::exists(m_dir / "x")) << c.args;
    }
}

}  // namespace
