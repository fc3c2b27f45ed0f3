// Position probes: metrics, the batched probe trainer, features, and probes of a model.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/fast_ops.h"
#include "model/init.h"
#include "probe/probe_features.h"
#include "probe/probe_fit.h"
#include "probe/prober.h"
#include "run/probe_io.h"

namespace nope {
namespace {

// NRMSE of always predicting the mean of positions 0..T-1 (uniform): std / range.
double meanPredictionNrmse(int T) {
    return std::sqrt((double(T) * T - 1) / 12.0) / double(T - 1);
}

ProbeConfig smallProbe() {
    ProbeConfig c;
    c.hidden = {32, 16, 8};
    c.epochs = 30;
    c.batchStrings = 32;
    c.learningRate = 5e-3;
    c.precision = ProbePrecision::Fp32;
    c.seed = 3;
    return c;
}

TEST(ProbeMetrics, PearsonAndNrmseMatchHandComputedValues) {
    // x = 1..4, y = 2,4,5,4: sxy = 3.5, sxx = 5, syy = 4.75.
    EXPECT_NEAR(pearsonR({1, 2, 3, 4}, {2, 4, 5, 4}), 3.5 / std::sqrt(5 * 4.75), 1e-12);
    EXPECT_NEAR(pearsonR({1, 2, 3}, {3, 2, 1}), -1.0, 1e-12);
    EXPECT_EQ(pearsonR({1, 1, 1}, {1, 2, 3}), 0.0);  // constant predictions
    // errors 0, 0, 0, 1 over targets 0..3: RMSE 0.5, range 3.
    EXPECT_NEAR(nrmse({0, 1, 2, 4}, {0, 1, 2, 3}), 0.5 / 3, 1e-12);
    EXPECT_NEAR(nrmse({1.5, 1.5, 1.5, 1.5}, {0, 1, 2, 3}), std::sqrt(1.25) / 3, 1e-12);
}

// Probe 0 sees a feature that encodes the position (plus noise); probe 1 sees noise only.
ProbeFitInput syntheticInput(int64_t N, int64_t T, uint64_t seed) {
    torch::manual_seed(seed);
    auto make = [&](int64_t n) {
        const auto pos = probeTargets(n, T, ProbeFeature::Vector);  // (n, T)
        auto x = torch::randn({2, n, T, 4});
        x[0].select(-1, 0).copy_(pos / double(T) + 0.01 * torch::randn({n, T}));
        return std::make_pair(x, pos);
    };
    auto [trainX, trainY] = make(N);
    auto [testX, testY] = make(N / 2);
    return {trainX, trainY, testX, testY};
}

TEST(ProbeFit, RecoversAnEncodedPositionAndNotNoise) {
    const auto input = syntheticInput(/*N=*/256, /*T=*/8, /*seed=*/1);
    const auto fits = fitProbes(input, smallProbe(), /*seed=*/5);
    ASSERT_EQ(fits.size(), 2u);
    EXPECT_GT(fits[0].pearsonR, 0.99);
    EXPECT_LT(fits[0].nrmse, 0.05);
    EXPECT_LT(std::abs(fits[1].pearsonR), 0.1);
    // Shuffled targets teach nothing: the control does about as well as predicting the mean.
    EXPECT_NEAR(fits[0].controlNrmse, meanPredictionNrmse(8), 0.06);
    EXPECT_GT(fits[1].nrmse, 0.9 * meanPredictionNrmse(8));
}

// bf16 probes with the products emulated (as on CPUs without bf16 instructions) learn what
// LibTorch's bf16 products learn: the same fit within bf16's rounding.
TEST(ProbeFit, EmulatedBf16ProductsFitAsLibTorchsBf16) {
    const auto input = syntheticInput(/*N=*/128, /*T=*/8, /*seed=*/2);
    ProbeConfig config = smallProbe();
    config.precision = ProbePrecision::Bf16;
    config.epochs = 15;
    auto fit = [&](Bf16Products mode) {
        Bf16ProductsScope products(mode);
        return fitProbes(input, config, /*seed=*/4);
    };
    const auto native = fit(Bf16Products::Native);
    const auto emulated = fit(Bf16Products::Emulated);
    ASSERT_EQ(native.size(), 2u);
    ASSERT_EQ(emulated.size(), 2u);
    EXPECT_GT(emulated[0].pearsonR, 0.95);
    EXPECT_NEAR(emulated[0].pearsonR, native[0].pearsonR, 0.02);
    EXPECT_NEAR(emulated[0].nrmse, native[0].nrmse, 0.02);
    EXPECT_NEAR(emulated[1].nrmse, native[1].nrmse, 0.05);
}

TEST(ProbeFit, IsDeterministicBySeed) {
    const auto input = syntheticInput(64, 8, 2);
    ProbeConfig config = smallProbe();
    config.epochs = 3;
    const auto a = fitProbes(input, config, 7);
    const auto b = fitProbes(input, config, 7);
    const auto c = fitProbes(input, config, 8);
    for (size_t p = 0; p < a.size(); ++p) {
        EXPECT_EQ(a[p].pearsonR, b[p].pearsonR);
        EXPECT_EQ(a[p].controlNrmse, b[p].controlNrmse);
        EXPECT_EQ(a[p].predicted, b[p].predicted);
    }
    EXPECT_NE(a[0].predicted, c[0].predicted);
}

TEST(ProbeFit, LinearProbeAndCancel) {
    const auto input = syntheticInput(128, 8, 3);
    ProbeConfig config = smallProbe();
    config.hidden = {};
    config.activations = {};
    config.learningRate = 5e-2;
    const auto fits = fitProbes(input, config, 1);
    EXPECT_GT(fits[0].pearsonR, 0.99);  // the position is linear in the feature

    std::atomic<bool> cancel{false};
    ProbeFitHooks hooks;
    hooks.cancel = &cancel;
    int epochs = 0;
    hooks.onEpoch = [&](int done) {
        epochs = done;
        cancel = done >= 2;
    };
    EXPECT_TRUE(fitProbes(input, config, 1, hooks).empty());
    EXPECT_EQ(epochs, 2);
}

TEST(ProbeFit, ExpNeverTurnsLargeInputsIntoNan) {
    auto input = syntheticInput(64, 8, 4);
    input.trainX = input.trainX * 1e4;
    input.testX = input.testX * 1e4;
    ProbeConfig config = smallProbe();
    config.epochs = 2;
    for (const auto& fit : fitProbes(input, config, 1)) {
        EXPECT_TRUE(std::isfinite(fit.trainLoss));
        for (float v : fit.predicted) {
            ASSERT_TRUE(std::isfinite(v));
        }
    }
}

TEST(ProbeFeatures, ShapesTargetsAndValues) {
    torch::manual_seed(0);
    const auto h = torch::randn({3, 5, 8});
    EXPECT_EQ(probeFeature(h, ProbeFeature::Vector).sizes(), torch::IntArrayRef({3, 5, 8}));
    EXPECT_EQ(probeFeature(h, ProbeFeature::Norm).sizes(), torch::IntArrayRef({3, 5, 1}));
    const auto cosine = probeFeature(h, ProbeFeature::Cosine);
    EXPECT_NEAR(cosine[1][4][0].item<double>(), 1.0, 1e-6);  // the last token with itself
    const auto row = probeFeature(h, ProbeFeature::CosineRow);
    EXPECT_EQ(row.sizes(), torch::IntArrayRef({3, 5, 5}));
    EXPECT_EQ(row[0][1][2].item<float>(), 0.0f);  // a future token
    EXPECT_NEAR(row[0][2][2].item<double>(), 1.0, 1e-6);
    EXPECT_NEAR(probeFeature(h, ProbeFeature::Variance)[2][3][0].item<double>(),
                h[2][3].var(/*unbiased=*/false).item<double>(), 1e-6);
    const auto distance = probeTargets(2, 5, ProbeFeature::Cosine);
    EXPECT_EQ(distance[1][0].item<float>(), 4.0f);
    EXPECT_EQ(probeTargets(2, 5, ProbeFeature::Norm)[1][3].item<float>(), 3.0f);
}

Gpt tinyModel() {
    ModelConfig c;
    c.nLayer = 2;
    c.nHead = 2;
    c.nEmbd = 32;
    c.blockSize = 32;
    torch::manual_seed(1);
    Gpt model(c);
    initializeWeights(*model);
    return model;
}

TEST(Prober, ProbesEveryPointLayerAndFeatureDeterministically) {
    Gpt model = tinyModel();
    ProbeConfig config = smallProbe();
    config.epochs = 4;
    config.trainStrings = 96;
    config.testStrings = 48;
    config.keepPredictions = 2;
    const auto tokens = randomProbeTokens(config);
    EXPECT_EQ(tokens.train.sizes(), torch::IntArrayRef({96, 16}));
    int lastDone = 0, lastTotal = 0;
    ProbeRunHooks hooks;
    hooks.progress = [&](int done, int total) {
        lastDone = done;
        lastTotal = total;
    };
    const auto report = runProbes(*model, config, tokens, hooks);
    ASSERT_EQ(report.results.size(), 3u * 5u);  // embedding + attn layers 1, 2; five features
    EXPECT_EQ(lastDone, lastTotal);
    EXPECT_EQ(lastTotal, 4 * 5);
    EXPECT_EQ(report.results[0].point, CapturePoint::Embedding);
    EXPECT_EQ(report.results[0].truth.size(), 2u * 16u);
    const auto again = runProbes(*model, config, tokens);
    for (size_t i = 0; i < report.results.size(); ++i) {
        EXPECT_EQ(report.results[i].pearsonR, again.results[i].pearsonR);
    }
    // The embedding of random characters carries no position at all.
    const auto* embedding = report.find(CapturePoint::Embedding, 0, ProbeFeature::Vector);
    ASSERT_NE(embedding, nullptr);
    EXPECT_LT(std::abs(embedding->pearsonR), 0.3);
}

TEST(Prober, ControlsOnRealHiddenStatesLearnNothing) {
    Gpt model = tinyModel();
    ProbeConfig config = smallProbe();
    config.points = {CapturePoint::Attn};
    config.features = {ProbeFeature::Cosine, ProbeFeature::Vector};
    config.epochs = 10;
    config.trainStrings = 200;
    config.testStrings = 100;
    const auto report = runProbes(*model, config, randomProbeTokens(config));
    for (const auto& r : report.results) {
        EXPECT_NEAR(r.controlNrmse, meanPredictionNrmse(16), 0.08)
            << toString(r.feature) << " layer " << r.layer;
    }
    // The cosine to the last token does carry position, even in this tiny model at init.
    const auto* cosine = report.find(CapturePoint::Attn, 1, ProbeFeature::Cosine);
    ASSERT_NE(cosine, nullptr);
    EXPECT_LT(cosine->nrmse, cosine->controlNrmse);
    EXPECT_GT(cosine->pearsonR, 0.5);
}

// Median over the attention layers of the R of each feature's probes.
std::map<ProbeFeature, double> medianR(const std::vector<ProbeReport>& reports) {
    std::map<ProbeFeature, double> out;
    for (ProbeFeature f : allProbeFeatures()) {
        std::vector<double> medians;
        for (const auto& report : reports) {
            std::vector<double> r;
            for (const auto& result : report.results) {
                if (result.point == CapturePoint::Attn && result.feature == f) {
                    r.push_back(result.pearsonR);
                }
            }
            std::sort(r.begin(), r.end());
            medians.push_back(r.size() % 2 ? r[r.size() / 2]
                                           : (r[r.size() / 2 - 1] + r[r.size() / 2]) / 2);
        }
        double sum = 0;
        for (double m : medians) {
            sum += m;
        }
        out[f] = sum / double(medians.size());
    }
    return out;
}

// The fast probe of the live view (fp32) against the full one on the default model at init (6
// layers, 384 wide, seed 1337). The full figures are the mean over probe seeds 0, 1 and 2 of
// `nopescope-cli probe --probe-seed S --probe-precision bf16 --json` (fp32 with seed 0 gives
// medians within 0.015 of these; per-layer R of one feature varies by up to
// 0.1, and of the vector by up to 0.2, between seeds: hence medians over the layers).
TEST(ProbeSettings, FastAgreesWithFullOnTheDefaultModel) {
    torch::manual_seed(1337);
    Gpt model(ModelConfig{});
    initializeWeights(*model);
    const std::map<ProbeFeature, double> full = {{ProbeFeature::Vector, -0.071},
                                                 {ProbeFeature::Variance, 0.456},
                                                 {ProbeFeature::Norm, 0.485},
                                                 {ProbeFeature::Cosine, 0.927},
                                                 {ProbeFeature::CosineRow, 1.000}};
    std::vector<ProbeReport> fast;
    for (uint64_t seed : {0, 1}) {
        ProbeConfig config = fastProbeConfig();
        config.points = {CapturePoint::Attn};
        config.seed = seed;
        config.controls = false;  // the controls do not enter R, and take half the time
        fast.push_back(runProbes(*model, config, randomProbeTokens(config)));
    }
    for (const auto& [feature, r] : medianR(fast)) {
        EXPECT_NEAR(r, full.at(feature), 0.05) << toString(feature);
    }
}

TEST(ProbeIo, JsonRoundTripAndCsvColumns) {
    ProbeReport report;
    report.trainStrings = 10;
    report.testStrings = 5;
    ProbeResult r;
    r.point = CapturePoint::Attn;
    r.layer = 2;
    r.feature = ProbeFeature::Cosine;
    r.pearsonR = 0.5;
    r.nrmse = 0.25;
    r.controlR = std::nan("");
    r.controlNrmse = std::nan("");
    r.truth = {1, 2};
    r.predicted = {1.5f, 2.5f};
    report.results.push_back(r);
    const auto csv = probesCsv(report);
    EXPECT_EQ(csv, std::string(kProbesCsvHeader) +
                       "\nattn,2,cosine,distance_to_last,0.500000,0.250000,,,10,5\n");
    EXPECT_EQ(predictionsCsv(report),
              std::string(kPredictionsCsvHeader) + "\nattn,2,cosine,1,1.5\nattn,2,cosine,2,2.5\n");
    const auto back = probeReportFromJson(probesJson(report, /*withPredictions=*/true));
    ASSERT_EQ(back.results.size(), 1u);
    EXPECT_EQ(back.results[0].feature, ProbeFeature::Cosine);
    EXPECT_TRUE(std::isnan(back.results[0].controlR));
    EXPECT_EQ(back.results[0].predicted, r.predicted);
}

TEST(ProbeConfigTest, ValidationNamesTheField) {
    ProbeConfig c;
    c.testChars = "1256";
    c.length = 400;
    const auto errors = validate(c, 256);
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0].field, "probe-length");
    EXPECT_EQ(errors[1].field, "probe-test-chars");
    EXPECT_TRUE(validate(fullProbeConfig(), 256).empty());
    EXPECT_TRUE(validate(fastProbeConfig(), 256).empty());
}

}  // namespace
}  // namespace nope
