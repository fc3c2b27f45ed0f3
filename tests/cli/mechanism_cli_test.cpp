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

// analyze --point attn_weights: every head's mean attention matrix and its statistics.
TEST_F(Cli, AnalyzeWritesTheAttentionWeights) {
    const fs::path out = m_dir / "attention";
    const Result r =
        run("analyze --task reversal --layers 2 --heads 2 --dim 32 --samples 8 "
            "--point attn,attn_weights --out " +
            out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("mean distance"), std::string::npos) << r.out;
    const auto table = lines(slurp(out / "attention.csv"));
    ASSERT_EQ(table.size(), 1u + 2u * 2u);  // 2 layers x 2 heads
    EXPECT_EQ(table[0], "layer,head,entropy,mean_distance");
    const auto matrix = lines(slurp(out / "attention" / "layer2_head1.csv"));
    ASSERT_EQ(matrix.size(), 22u);  // the reversal prompts' 22 tokens
    double row = 0.0;
    std::stringstream cells(matrix[21]);
    for (std::string cell; std::getline(cells, cell, ',');) {
        row += std::stod(cell);
    }
    EXPECT_NEAR(row, 1.0, 1e-3);  // the last query's weights over every key
    const Result only =
        run("analyze --task reversal --layers 1 --heads 2 --dim 32 --samples 4 "
            "--point attn_weights --json");
    ASSERT_EQ(only.status, 0) << only.err;
    EXPECT_EQ(nlohmann::json::parse(only.out).at("attention").size(), 2u);
}

TEST_F(Cli, MechanismRefusesBadFlags) {
    const struct {
        std::string args;
        std::string mentions;
    } cases[] = {
        {"simulate --length 2", "--length"},
        {"simulate --weights learned",
         "--weights: 'learned' is not allowed (allowed: uniform, random, model)"},
        {"simulate --temperature 0", "--temperature"},
        {"simulate --samples 100000 --length 1024 --dim 1024", "too many"},
        {"transplant", "unknown subcommand 'transplant' (allowed: simulate, ablate)"},
    };
    for (const auto& c : cases) {
        const Result r = run("mechanism " + c.args + " --out " + (m_dir / "x").string());
        EXPECT_EQ(r.status, 2) << c.args;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(fs::exists(m_dir / "x")) << c.args;
    }
}

// mechanism ablate: the table, ablations.csv with exactly its columns, the prompts, bad flags.
TEST_F(Cli, MechanismAblateWritesTheTable) {
    const fs::path out = m_dir / "ablate";
    const Result r =
        run("mechanism ablate --layers 2 --heads 2 --dim 32 --samples 16 --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("attn: adjacency score"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("shrink_x"), std::string::npos) << r.out;
    const auto csv = lines(slurp(out / "ablations.csv"));
    ASSERT_EQ(csv.size(), 1u + 16u * 3u);  // 16 ablations x (embedding + 2 layers)
    EXPECT_EQ(csv[0], "ablation,point,layer,adjacency_mean,adjacency_std");
    EXPECT_EQ(csv[1].substr(0, 20), "softmax,embedding,0,");
    EXPECT_EQ(lines(slurp(out / "tokens.csv")).size(), 16u);
    const auto meta = nlohmann::json::parse(slurp(out / "ablations.json"));
    EXPECT_EQ(meta.at("as_authors"), false);
    EXPECT_EQ(meta.at("rows").size(), 48u);

    const Result authors = run(
        "mechanism ablate --layers 1 --heads 2 --dim 32 --samples 8 --ablations sigmoid,uniform "
        "--as-authors --json");
    ASSERT_EQ(authors.status, 0) << authors.err;
    const auto rows = nlohmann::json::parse(authors.out).at("rows");
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_LT(rows[3].at("adjacency_mean").get<double>(), 0.05);  // uniform over every token

    EXPECT_EQ(run("mechanism ablate --ablations softmax,nope").status, 2);
    EXPECT_EQ(run("mechanism ablate --shrink-x 0").status, 2);
    const Result eqx = run("mechanism ablate --task reversal --dim 8 --heads 2 --ablations eqx");
    EXPECT_EQ(eqx.status, 2);
    EXPECT_NE(eqx.err.find("eqx"), std::string::npos) << eqx.err;
}

// simulate with a model's parts: the prompts set the length, the model's width the dimension.
TEST_F(Cli, MechanismSimulateTakesAModel) {
    const Result r =
        run("mechanism simulate --weights model --inputs tokens --layers 1 --heads 2 --dim 32 "
            "--samples 16 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto score = nlohmann::json::parse(r.out);
    EXPECT_EQ(score.at("weights"), "model");
    EXPECT_EQ(score.at("inputs"), "tokens");
    EXPECT_EQ(score.at("length"), 9);  // the addition prompts
    EXPECT_EQ(score.at("dim"), 32);
    EXPECT_EQ(score.at("task"), "addition");
    EXPECT_FALSE(score.contains("largest_difference_from_closed_form"));
    const Result length = run("mechanism simulate --weights model --length 5");
    EXPECT_EQ(length.status, 2);
    EXPECT_NE(length.err.find("--length"), std::string::npos) << length.err;
    EXPECT_EQ(run("mechanism simulate --task reversal").status, 2);
    EXPECT_EQ(run("mechanism simulate --weights model --bidirectional").status, 2);
}

}  // namespace
