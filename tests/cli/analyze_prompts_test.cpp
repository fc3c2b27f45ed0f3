// nopescope-cli analyze with a user's own prompts (--prompt, --prompts-file: answers.csv) and the
// projector's files (--projection).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "tasks/batch.h"

namespace {

using namespace nope::cli_test;

constexpr const char* kModel = "--layers 2 --dim 48 --heads 4 --threads 1";

TEST_F(Cli, AnalyzeOwnPromptsWritesAnswersAndTheirMatrices) {
    const fs::path file = m_dir / "prompts.txt";
    std::ofstream(file) << "rev(98)=\r\n\nhello, world\n";
    const fs::path out = m_dir / "own";
    const Result r =
        run(std::string("analyze --task reversal --padding task ") + kModel +
            " --prompt 'rev(1234)=' --prompts-file " + file.string() + " --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("3 own prompts of 22 tokens"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not a task prompt"), std::string::npos) << r.out;
    const auto rows = lines(slurp(out / "answers.csv"));
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[0], "prompt,answer,expected,correct");
    EXPECT_EQ(rows[1].substr(0, 11), "rev(1234)=,");
    EXPECT_EQ(rows[1].substr(rows[1].rfind(",4321,")), ",4321,false");  // a model at init
    EXPECT_EQ(rows[2].substr(0, 9), "rev(98)=,");
    EXPECT_EQ(rows[3].substr(0, 15), "\"hello, world\",");
    EXPECT_EQ(rows[3].substr(rows[3].size() - 2), ",,");
    const auto json = nlohmann::json::parse(slurp(out / "scores.json"));
    EXPECT_EQ(json.at("samples"), 3);
    EXPECT_EQ(json.at("seq_len"), 22);  // padded to the task's longest prompt
    EXPECT_EQ(json.at("prompts").size(), 3u);

    // by default (--padding longest) a single prompt is analysed as it is
    const Result alone =
        run(std::string("analyze --task reversal --json ") + kModel + " --prompt 'rev(1234)='");
    ASSERT_EQ(alone.status, 0) << alone.err;
    const auto j = nlohmann::json::parse(alone.out);
    EXPECT_EQ(j.at("seq_len"), 10);
    EXPECT_EQ(j.at("answers")[0].at("expected"), "4321");
}

// A drawn prompt typed by hand (padded as drawn prompts are) gives exactly its matrices.
TEST_F(Cli, AnalyzeOwnPromptGivesTheDrawnPromptsMatrices) {
    const nope::DataConfig data;
    const nope::PromptSet drawn = nope::makePromptSet(
        nope::makeTaskData(nope::TaskKind::Reversal, {data.trainSize, data.testSize, 1234}), 1,
        nope::analysisPromptSeed(1234));
    const std::string prompt = drawn.examples.at(0).prompt;
    const Result a = run(std::string("analyze --task reversal --samples 1 ") + kModel + " --out " +
                         (m_dir / "drawn").string());
    const Result b = run(std::string("analyze --task reversal --padding task ") + kModel +
                         " --prompt '" + prompt + "' --out " + (m_dir / "own").string());
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    for (const char* file : {"embedding_layer0.csv", "attn_layer1.csv", "attn_layer2.csv"}) {
        const std::string matrix = slurp(m_dir / "drawn" / "matrices" / file);
        EXPECT_FALSE(matrix.empty()) << file;
        EXPECT_EQ(slurp(m_dir / "own" / "matrices" / file), matrix) << file;
    }
}

TEST_F(Cli, AnalyzeRefusesBadPromptsWithTheirProblem) {
    const Result outside =
        run(std::string("analyze ") + kModel + " --prompt \"$(printf 'rev(12)\\t=')\" --out " +
            (m_dir / "x").string());
    EXPECT_EQ(outside.status, 2);
    EXPECT_NE(outside.err.find("--prompt: prompt 'rev(12)\t=': the character tab (U+0009) is not "
                               "in the vocabulary"),
              std::string::npos)
        << outside.err;
    EXPECT_FALSE(fs::exists(m_dir / "x"));

    const Result tooLong = run(std::string("analyze ") + kModel + " --context 16 --prompt '" +
                               std::string(20, '7') + "'");
    EXPECT_EQ(tooLong.status, 2);
    EXPECT_NE(tooLong.err.find("has 20 characters, longer than the model's context of 16"),
              std::string::npos)
        << tooLong.err;

    const Result both = run(std::string("analyze ") + kModel + " --samples 4 --prompt 'x'");
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("--samples:"), std::string::npos) << both.err;

    const Result missing =
        run(std::string("analyze ") + kModel + " --prompts-file " + (m_dir / "none.txt").string());
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("--prompts-file: cannot read"), std::string::npos) << missing.err;
}

// Weights too large for float32: a message naming where the states broke, no table of zeros,
// nothing written.
TEST_F(Cli, AnalyzeNamesNonFiniteHiddenStates) {
    const fs::path out = m_dir / "huge";
    const Result r =
        run("analyze --init normal --init-std 1e30 --layers 1 --dim 32 --heads 2 "
            "--samples 8 --threads 1 --point all --out " +
            out.string());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("the hidden states are"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" layer 1 on"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("0.0000"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, AnalyzeProjectionWritesPointsAndSummary) {
    const fs::path out = m_dir / "proj";
    const Result r = run(std::string("analyze --task reversal --samples 12 --projection pca "
                                     "--projection-prompts 5 ") +
                         kModel + " --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("R position"), std::string::npos) << r.out;
    const auto points = lines(slurp(out / "projection.csv"));
    EXPECT_EQ(points[0], "point,layer,prompt,position,token,x,y,z");
    EXPECT_EQ(points.size(), 1u + 3 * 5 * 22);  // embedding and attn of 2 layers, 5 x 22 tokens
    EXPECT_EQ(points[1].substr(0, 14), "embedding,0,0,");
    const auto summary = lines(slurp(out / "projection_summary.csv"));
    ASSERT_EQ(summary.size(), 4u);
    EXPECT_EQ(summary[0], "point,layer,method,explained_1,explained_2,explained_3,r_position");
    EXPECT_EQ(summary[2].substr(0, 11), "attn,1,pca,");

    const Result mds = run(std::string("analyze --task reversal --samples 6 --json "
                                       "--projection mds ") +
                           kModel);
    ASSERT_EQ(mds.status, 0) << mds.err;
    const auto j = nlohmann::json::parse(mds.out);
    ASSERT_EQ(j.at("projection").size(), 3u);
    EXPECT_EQ(j.at("projection")[1].at("method"), "mds");
    EXPECT_GT(j.at("projection")[1].at("r_position").get<double>(),
              j.at("projection")[0].at("r_position").get<double>());
}

}  // namespace
