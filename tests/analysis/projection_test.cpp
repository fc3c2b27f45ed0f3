// The projector's fits (PCA, classical scaling, the position sign) and the analysis of a user's
// own prompts.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>

#include "analysis/analyzer.h"
#include "analysis/projection_fit.h"
#include "common/model_config.h"
#include "model/init.h"
#include "probe/probe_result.h"
#include "run/scores_io.h"
#include "run/snapshot_io.h"
#include "tasks/batch.h"
#include "tasks/vocab.h"
#include "training/evaluation.h"
#include "util/format.h"

namespace nope {
namespace {

std::vector<double> column(const torch::Tensor& coords, int axis) {
    const auto c = coords.select(1, axis).contiguous().to(torch::kDouble);
    return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

std::vector<double> range(int n) {
    std::vector<double> out;
    for (int i = 0; i < n; ++i) {
        out.push_back(i);
    }
    return out;
}

torch::Tensor positions(int n) {
    return torch::arange(n, torch::kDouble);
}

// Points along a line in 16 dimensions, in order, with a little noise: the first axis carries
// nearly all the variance and orders them as the line does.
TEST(PrincipalAxes, RecoverALine) {
    torch::manual_seed(3);
    const int n = 40;
    const auto direction = torch::randn({16}, torch::kDouble);
    const auto t = torch::arange(n, torch::kDouble).unsqueeze(1);
    const auto points = t * direction + 0.01 * torch::randn({n, 16}, torch::kDouble) + 5.0;
    AxesFit fit = principalAxes(points);
    EXPECT_GT(fit.share(0), 0.999);
    EXPECT_LT(fit.share(1), 1e-3);
    signByPosition(fit.coords, positions(n));
    const auto first = column(fit.coords, 0);
    for (int i = 1; i < n; ++i) {
        EXPECT_GT(first[i], first[i - 1]) << i;
    }
    EXPECT_NEAR(pearsonR(first, range(n)), 1.0, 1e-6);
    // The distance between neighbours along the axis is the step along the line.
    EXPECT_NEAR(first[1] - first[0], direction.norm().item<double>(), 1e-2);
}

// Points on a circle of radius 2 in a random plane of 8 dimensions: two equal axes, nothing on
// the third, and the points at radius 2 in the first two.
TEST(PrincipalAxes, RecoverACircle) {
    torch::manual_seed(4);
    const int n = 64;
    const auto basis = std::get<0>(torch::linalg_qr(torch::randn({8, 2}, torch::kDouble)));
    const auto angle = torch::arange(n, torch::kDouble) * (2 * M_PI / n);
    const auto plane = torch::stack({2 * angle.cos(), 2 * angle.sin()}, 1);  // (n, 2)
    const AxesFit fit = principalAxes(torch::mm(plane, basis.t()) + 1.0);
    EXPECT_NEAR(fit.share(0), 0.5, 1e-5);
    EXPECT_NEAR(fit.share(1), 0.5, 1e-5);
    EXPECT_NEAR(fit.share(2), 0.0, 1e-5);
    const auto radius = fit.coords.slice(1, 0, 2).norm(2, 1);
    EXPECT_TRUE(torch::allclose(radius, torch::full({n}, 2.0, torch::kDouble), 1e-5, 1e-5));
}

TEST(PrincipalAxes, FewerPointsThanDimensionsAndFewerThanThree) {
    torch::manual_seed(5);
    const auto two = torch::randn({2, 10}, torch::kDouble);
    const AxesFit fit = principalAxes(two);
    EXPECT_NEAR(fit.share(0), 1.0, 1e-6);
    EXPECT_NEAR(fit.share(2), 0.0, 1e-6);
    const double d = (two[0] - two[1]).norm().item<double>();
    EXPECT_NEAR(std::abs(fit.coords[0][0].item<double>() - fit.coords[1][0].item<double>()), d,
                1e-5);
}

// More points than the full decomposition takes (48): the top axes come from subspace iteration,
// and agree with the full eigendecomposition.
TEST(PrincipalAxes, SubspaceIterationAgreesWithTheFullDecomposition) {
    torch::manual_seed(9);
    for (int n : {100, 400}) {  // the Gram matrix's path, then the covariance's (256 wide)
        const auto x = torch::mm(torch::randn({n, 3}, torch::kDouble) *
                                     torch::tensor({6.0, 4.0, 2.5}, torch::kDouble),
                                 torch::randn({3, 256}, torch::kDouble)) +
                       0.5 * torch::randn({n, 256}, torch::kDouble);
        const AxesFit fit = principalAxes(x);
        const auto xc = x - x.mean(0, /*keepdim=*/true);
        const auto values = std::get<0>(torch::linalg_eigh(torch::mm(xc.t(), xc)));
        const double total = values.sum().item<double>();
        for (int a = 0; a < 3; ++a) {
            const double expected = values[255 - a].item<double>() / total;
            EXPECT_NEAR(fit.share(a), expected, 1e-4) << n << " axis " << a;
            // each axis' coordinates carry that share of the variance
            EXPECT_NEAR(fit.coords.select(1, a).square().sum().item<double>() / total, expected,
                        1e-4)
                << n << " axis " << a;
        }
    }
}

// Classical scaling of the exact distances of points in 3 dimensions gives points with the same
// distances (up to rotation, reflection and translation).
TEST(ClassicalMds, ReproducesExactDistances) {
    torch::manual_seed(6);
    const auto points = torch::randn({12, 3}, torch::kDouble);
    const auto distances = torch::cdist(points, points);
    const AxesFit fit = classicalMds(distances);
    EXPECT_TRUE(torch::allclose(torch::cdist(fit.coords, fit.coords), distances, 1e-9, 1e-9));
    EXPECT_NEAR(fit.share(0) + fit.share(1) + fit.share(2), 1.0, 1e-9);
    EXPECT_GE(fit.share(0), fit.share(1));
    EXPECT_GE(fit.share(1), fit.share(2));
}

// Points on a line, seen only through their distances: one axis, in order.
TEST(ClassicalMds, LaysAChainOnOneAxis) {
    const int n = 10;
    const auto t = torch::arange(n, torch::kDouble).unsqueeze(1);
    AxesFit fit = classicalMds((t - t.t()).abs());
    EXPECT_NEAR(fit.share(0), 1.0, 1e-9);
    const auto r = signByPosition(fit.coords, positions(n));
    EXPECT_NEAR(pearsonR(column(fit.coords, 0), range(n)), 1.0, 1e-9);
    EXPECT_NEAR(r[0].item<double>(), 1.0, 1e-9);
}

// Batched fits give each matrix of the batch its own fit: the same as one at a time.
TEST(ClassicalMds, BatchedEqualsOneByOne) {
    torch::manual_seed(8);
    const auto points = torch::randn({4, 7, 5}, torch::kDouble);
    const auto d = torch::cdist(points, points);
    const AxesFit batched = classicalMds(d);
    const AxesFit pca = principalAxes(points);
    for (int b = 0; b < 4; ++b) {
        const AxesFit one = classicalMds(d[b]);
        EXPECT_TRUE(torch::allclose(batched.coords[b].abs(), one.coords.abs(), 1e-9, 1e-9));
        EXPECT_TRUE(torch::allclose(batched.explained[b], one.explained, 1e-12, 1e-12));
        EXPECT_TRUE(
            torch::allclose(pca.explained[b], principalAxes(points[b]).explained, 1e-6, 1e-6));
    }
}

// Each axis is signed to rise with position, so reruns and layers compare.
TEST(Projection, AxesRiseWithPosition) {
    torch::manual_seed(7);
    const int P = 3, T = 12, D = 24;
    // A direction that turns with position (so that cosines change too), walked backwards.
    const auto slope = torch::randn({D}), base = torch::randn({D});
    const auto hidden = 3.0 * base -
                        0.3 * torch::arange(T).to(torch::kFloat).view({1, T, 1}) * slope +
                        0.01 * torch::randn({P, T, D});
    const std::vector<CaptureSite> sites = {{CapturePoint::Attn, 2}, {CapturePoint::Attn, 3}};
    // the second site: the same points walked forwards
    const auto both = torch::stack({hidden, hidden.flip({1})});
    const auto pca = projectPca(sites, both);
    ASSERT_EQ(pca.size(), 2u);
    const Projection& p = pca[0];
    EXPECT_EQ(p.layer, 2);
    EXPECT_EQ(pca[1].layer, 3);
    EXPECT_NEAR(pca[1].rPosition, p.rPosition, 1e-6);  // signed to rise with position both ways
    EXPECT_EQ(p.prompts, P);
    EXPECT_EQ(p.seqLen, T);
    ASSERT_EQ(p.coords.size(), size_t(P * T * kProjectionAxes));
    EXPECT_GT(p.rPosition, 0.99);
    for (int n = 0; n < P; ++n) {
        EXPECT_LT(p.at(n, 0, 0), p.at(n, T - 1, 0));
    }
    const auto mds = projectMds(sites, torch::stack({selfCosine(hidden), selfCosine(hidden)}));
    ASSERT_EQ(mds.size(), 2u);
    const Projection& m = mds[0];
    EXPECT_EQ(m.method, ProjectionMethod::Mds);
    EXPECT_GT(m.rPosition, 0.9);
    EXPECT_LT(m.at(0, 0, 0), m.at(0, T - 1, 0));
}

Gpt initModel() {
    return seededModel(test::smallModelConfig(2, 4, 64, 64), 21);
}

// The analysis projects every site on the first projectionPrompts prompts; at initialization the
// first layer's attention output lays positions along its first axis far more than the
// embedding does (the averaging of nearby tokens).
TEST(Projection, AnalysisProjectsEverySite) {
    Gpt model = initModel();
    const TaskData data = makeTaskData(TaskKind::Reversal, {1000, 200, 5});
    const PromptSet prompts = makePromptSet(data, 24, 9);
    AnalysisOptions options;
    options.points = CaptureSet{CapturePoint::Embedding, CapturePoint::Attn};
    options.projections = {ProjectionMethod::Pca, ProjectionMethod::Mds};
    options.projectionPrompts = 16;
    options.batchSize = 10;  // across batches
    const Analysis a = analyze(*model, prompts.tokens, options);
    const int layers = model->config().nLayer;
    ASSERT_EQ(a.projection.items.size(), size_t(2 * (1 + layers)));
    EXPECT_EQ(a.projection.prompts, 16);
    EXPECT_EQ(a.projection.seqLen, prompts.tokens.size(1));
    ASSERT_EQ(a.projection.tokens.size(), size_t(16 * prompts.tokens.size(1)));
    EXPECT_EQ(a.projection.tokens[5], prompts.tokens[0][5].item<int64_t>());
    const auto* embedding = a.projection.find(CapturePoint::Embedding, 0, ProjectionMethod::Pca);
    const auto* attn = a.projection.find(CapturePoint::Attn, 1, ProjectionMethod::Pca);
    ASSERT_TRUE(embedding && attn);
    EXPECT_GT(attn->rPosition, embedding->rPosition + 0.3);
    EXPECT_EQ(attn->coords.size(), size_t(16 * a.seqLen * kProjectionAxes));

    const std::string csv = projectionCsv(a.projection);
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "point,layer,prompt,position,token,x,y,z");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * (1 + layers) * 16 * a.seqLen);
    const std::string summary = projectionSummaryCsv(a.projection);
    EXPECT_EQ(summary.substr(0, summary.find('\n')),
              "point,layer,method,explained_1,explained_2,explained_3,r_position");
}

// Snapshot files keep the projections (coordinates to 5 significant digits); a file with the
// wrong number of coordinates is refused.
TEST(Projection, SnapshotFilesKeepIt) {
    Gpt model = initModel();
    const PromptSet prompts = makePromptSet(makeTaskData(TaskKind::Addition, {1000, 200, 5}), 6, 9);
    AnalysisOptions options;
    options.projections = {ProjectionMethod::Pca, ProjectionMethod::Mds};
    options.projectionPrompts = 4;
    const Analysis a = analyze(*model, prompts.tokens, options);
    nlohmann::json j = toJson(a);
    const Analysis back = analysisFromJson(j);
    ASSERT_EQ(back.projection.items.size(), a.projection.items.size());
    EXPECT_EQ(back.projection.tokens, a.projection.tokens);
    for (size_t k = 0; k < a.projection.items.size(); ++k) {
        const Projection& p = a.projection.items[k];
        const Projection& q = back.projection.items[k];
        EXPECT_EQ(q.method, p.method);
        EXPECT_EQ(q.explained, p.explained);
        ASSERT_EQ(q.coords.size(), p.coords.size());
        for (size_t i = 0; i < p.coords.size(); ++i) {
            EXPECT_NEAR(q.coords[i], p.coords[i], 1e-4 * std::max(1.0f, std::abs(p.coords[i])));
        }
    }
    j["projection"]["items"][0]["coords"].erase(0);
    EXPECT_THROW(analysisFromJson(j), std::invalid_argument);
    j.erase("projection");  // older snapshots have none
    EXPECT_TRUE(analysisFromJson(j).projection.empty());
}

TEST(OwnPrompts, NamesCharactersOutsideTheVocabulary) {
    EXPECT_TRUE(vocab::outside("rev(1234)=").empty());
    EXPECT_EQ(vocab::outside("a\tb\xC3\xA9\t"),
              (std::vector<std::string>{"tab (U+0009)", "'\xC3\xA9' (U+00E9)"}));
    EXPECT_EQ(vocab::outsideMessage("x\x01"),
              "the character control character (U+0001) is not in the vocabulary (allowed: "
              "printable ASCII and newline)");
    EXPECT_THROW(makePromptSet(std::vector<std::string>{"ok", "caf\xC3\xA9"}, 0),
                 std::invalid_argument);
}

// A prompt typed by hand analyses exactly as the same prompt drawn from the task.
TEST(OwnPrompts, MatchTheSamePromptDrawnFromTheTask) {
    Gpt model = initModel();
    const TaskData data = makeTaskData(TaskKind::Addition, {1000, 200, 5});
    const PromptSet drawn = makePromptSet(data, 1, 9);
    const PromptSet own =
        makePromptSet(std::vector<std::string>{drawn.examples[0].prompt}, longestPrompt(data.task));
    ASSERT_TRUE(torch::equal(drawn.tokens, own.tokens));
    AnalysisOptions options;
    options.points = CaptureSet{CapturePoint::Embedding, CapturePoint::Attn};
    const Analysis a = analyze(*model, drawn.tokens, options);
    const Analysis b = analyze(*model, own.tokens, options);
    ASSERT_EQ(a.rows.size(), b.rows.size());
    for (size_t i = 0; i < a.rows.size(); ++i) {
        EXPECT_EQ(a.rows[i].meanMatrix, b.rows[i].meanMatrix);
    }
}

TEST(OwnPrompts, AnswersAreJudgedOnlyForTaskPrompts) {
    const PromptAnswer right = judgeAnswer(TaskKind::Addition, "$123+456=", "975$\n\n");
    EXPECT_EQ(right.answer, "975");
    EXPECT_EQ(right.expected, "975");
    EXPECT_TRUE(right.correct);
    const PromptAnswer wrong = judgeAnswer(TaskKind::Reversal, "rev(123)=", "322\n");
    EXPECT_EQ(wrong.expected, "321");
    EXPECT_FALSE(wrong.correct);
    const PromptAnswer other = judgeAnswer(TaskKind::Reversal, "hello, world", "abc\n");
    EXPECT_EQ(other.expected, "");
    EXPECT_FALSE(other.correct);
    EXPECT_EQ(answersCsv({right, other}),
              "prompt,answer,expected,correct\n$123+456=,975,975,true\n\"hello, world\",abc,,\n");
    EXPECT_EQ(csvField("rev(12)="), "rev(12)=");
    EXPECT_EQ(csvField("a,\"b\""), "\"a,\"\"b\"\"\"");

    Gpt model = initModel();
    const PromptSet own = makePromptSet(std::vector<std::string>{"rev(12)=", "xy"}, 0);
    const auto answers = answerPrompts(*model, TaskKind::Reversal, {"rev(12)=", "xy"}, own.tokens);
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_EQ(answers[0].expected, "21");
    EXPECT_LE(answers[0].answer.size(), size_t(answerBudget(TaskKind::Reversal)));
}

}  // namespace
}  // namespace nope
