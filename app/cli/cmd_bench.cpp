// nopescope-cli bench: training throughput of a model (by default 6 layers x 384 at batch 64 of
// 32 tokens) in fp32 and bf16, beside what the machine's matrix products reach (large square
// products through the libraries the model uses) as a fraction, and the time of one analysis
// snapshot in each precision.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "model/fast_ops.h"
#include "model/linear.h"
#include "training/step_profile.h"
#include "training/trainer.h"
#include "util/autocast_scope.h"
#include "util/format.h"
#include "util/runtime.h"
#include "util/stopwatch.h"

namespace nope::cli {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Timing {
    double tokensPerSecond = 0.0;
    double medianStepSeconds = 0.0;
    double minStepSeconds = 0.0;
};

Timing timeSteps(Trainer& trainer, int warmup, int timed) {
    for (int i = 0; i < warmup; ++i) {
        trainer.stepOnce();
    }
    std::vector<double> seconds;
    for (int i = 0; i < timed; ++i) {
        const auto start = Clock::now();
        trainer.stepOnce();
        seconds.push_back(secondsSince(start));
    }
    const TrainConfig& c = trainer.trainConfig();
    Timing t;
    t.medianStepSeconds = median(seconds);
    t.minStepSeconds = *std::min_element(seconds.begin(), seconds.end());
    t.tokensPerSecond = double(c.batchSize) * c.windowLength / t.medianStepSeconds;
    return t;
}

// GFLOP/s of an n x n by n x n product (2 n^3 operations), the median of `reps` after two
// warm-ups: fp32 through nope::linear (oneDNN's sgemm, the model's fp32 Linear), bf16 through
// LibTorch's matmul on bf16 tensors (what the model's products run under bf16 autocast), or where
// bf16 products are emulated, through nope::linear under bf16 autocast (model/fast_ops.h).
double gemmGflops(torch::ScalarType dtype, int64_t n = 2048, int reps = 5) {
    torch::NoGradGuard noGrad;
    const auto a = torch::randn({n, n}).to(dtype);
    const auto b = torch::randn({n, n}).to(dtype);
    const bool emulated = dtype == torch::kBFloat16 && emulatingBf16Products();
    auto product = [&] {
        if (emulated) {
            AutocastScope bf16(true);
            return nope::linear(a, b, {});
        }
        return dtype == torch::kFloat ? nope::linear(a, b, {}) : torch::mm(a, b);
    };
    product();
    product();
    std::vector<double> seconds;
    for (int i = 0; i < reps; ++i) {
        const auto start = Clock::now();
        const auto c = product();
        seconds.push_back(secondsSince(start));
    }
    return 2.0 * double(n) * n * n / median(seconds) / 1e9;
}

// Model FLOPs of one training step (forward and backward): 6 per parameter per token (the tied
// embedding counted once, as the output head's product), plus the attention's two T x T products
// per layer, 12 L T C per token.
double stepFlops(const ModelConfig& model, int64_t parameters, int batch, int window) {
    const double tokens = double(batch) * window;
    return tokens * (6.0 * double(parameters) + 12.0 * model.nLayer * window * model.nEmbd);
}

nlohmann::json profileJson(const StepProfile& p) {
    auto list = [](const std::vector<ProfileShare>& shares, size_t most) {
        nlohmann::json out = nlohmann::json::array();
        for (size_t i = 0; i < shares.size() && i < most; ++i) {
            out.push_back({{"name", shares[i].name},
                           {"ms_per_step", shares[i].msPerStep},
                           {"share", shares[i].share}});
        }
        return out;
    };
    return {{"steps", p.steps},
            {"step_ms", p.stepMs},
            {"busy_ms", p.busyMs},
            {"categories", list(p.categories, 100)},
            {"operators", list(p.operators, 25)}};
}

void printProfile(const std::string& what, const StepProfile& p) {
    std::printf("  %s under the profiler: %.1f ms (%d runs); by category (self time", what.c_str(),
                p.stepMs, p.steps);
    if (p.busyMs > 1.05 * p.stepMs) {  // threads ran operators side by side (onEachThread)
        std::printf("; the threads' together: %.1f ms", p.busyMs);
    }
    std::printf("):\n");
    for (const auto& c : p.categories) {
        std::printf("    %-28s %7.2f ms  %5.1f%%\n", c.name.c_str(), c.msPerStep, 100 * c.share);
    }
    std::printf("  the largest operators:\n");
    for (size_t i = 0; i < p.operators.size() && i < 12; ++i) {
        const auto& o = p.operators[i];
        std::printf("    %-44s %7.2f ms  %5.1f%%\n", o.name.c_str(), o.msPerStep, 100 * o.share);
    }
}

}  // namespace

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, one line each,
// their checks, the work, the output); split, the flags' variables would travel between parts.
int runBench(const Args& args) {
    int warmup = 3;
    int steps = 10;
    int batch = 64;
    int window = 32;
    int threads = 0;
    int analysisSamples = 64;
    bool json = false;
    ModelFlags modelFlags;
    bool noGemm = false;
    FlagSet flags(
        "nopescope-cli bench [--steps N] [--warmup N] [--batch N] [--window N] [model flags] "
        "[--json]",
        "Times training steps (forward, backward, clip, AdamW) of the model on addition\n"
        "windows, in fp32 and in bf16, and prints tokens per second (median over the timed\n"
        "steps after warm-up) and the step's model FLOP rate (6 x parameters x tokens plus the\n"
        "attention's products) beside the machine's matrix-product rate (2048 x 2048 products\n"
        "through the libraries the model uses), as a fraction; then times one analysis\n"
        "snapshot (all capture points, --analysis-samples prompts) in each precision, as\n"
        "train's --snapshot-precision runs it.");
    flags.addSwitch("no-gemm", &noGemm, "skip the matrix-product measurement");
    int profile = 0;
    flags.addInt("profile", &profile,
                 "then this many steps (and analysis snapshots) under LibTorch's profiler: "
                 "where the time goes, by category and operator (self time)",
                 0, 100);
    flags.addInt("steps", &steps, "timed steps per precision", 1, 1000);
    flags.addInt("warmup", &warmup, "untimed steps first", 0, 100);
    flags.addInt("batch", &batch, "sequences per step", 1, 4096);
    flags.addInt("window", &window, "tokens per sequence", 2, 256);
    flags.addInt("analysis-samples", &analysisSamples, "prompts of the timed snapshot", 1, 10000);
    flags.addInt("threads", &threads, "CPU threads (0 = all cores)", 0, 256);
    modelFlags.addTo(flags);
    flags.addSwitch("json", &json,
                    "print one JSON object (fp32_tokens_per_s, bf16_tokens_per_s, "
                    "fp32_model_gflops, bf16_model_gflops, fp32_gemm_gflops, bf16_gemm_gflops, "
                    "analysis_ms, analysis_forward_ms, analysis_scores_ms, projection_ms, the same "
                    "as analysis_bf16_ms... for the snapshot in bf16, bf16_products)");
    if (auto error = flags.parse(args)) {
        return usageError("bench", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    ModelConfig model;
    if (auto error = modelFlags.build(flags, model)) {
        return usageError("bench", *error);
    }
    configureRuntime(threads);

    TrainConfig train;
    train.objective = Objective::Lm;
    train.batchSize = batch;
    train.windowLength = window;
    train.steps = 1000000;
    train.decaySteps = 1000000;
    train.warmupSteps = 0;
    train.threads = threads;
    train.analysisSamples = analysisSamples;
    // as the window's snapshots: the kept prompts' matrices, the projector's points
    train.keepPrompts = std::min(TrainConfig{}.keepPrompts, analysisSamples);
    train.data.trainSize = 2000;
    train.data.testSize = 2000;

    nlohmann::json result = {
        {"model", model},
        {"batch", batch},
        {"window", window},
        {"threads", 0},
        {"timed_steps", steps},
        {"bf16_products", emulatingBf16Products() ? "emulated" : "native"},
        {"weight_gradients", weightGradientsThroughOpenBlas() ? "openblas" : "onednn"}};
    applyThreadCount(threads);
    if (!json) {
        std::printf("weight gradients: %s\n", weightGradientLibrary().c_str());
    }
    if (!json && emulatingBf16Products()) {
        std::printf("bf16 products emulated (%s): fp32 products of bf16-rounded operands\n",
                    bf16EmulationReason().c_str());
        std::fflush(stdout);
    }
    if (!noGemm) {
        for (auto [key, dtype] : {std::pair{"fp32", torch::kFloat}, {"bf16", torch::kBFloat16}}) {
            result[std::string(key) + "_gemm_gflops"] = gemmGflops(dtype);
        }
        if (!json) {
            std::printf("matrix products (2048 x 2048): fp32 %.0f GFLOP/s, bf16 %.0f GFLOP/s\n",
                        result["fp32_gemm_gflops"].get<double>(),
                        result["bf16_gemm_gflops"].get<double>());
            std::fflush(stdout);
        }
    }
    for (Precision precision : {Precision::Fp32, Precision::Bf16}) {
        train.precision = precision;
        std::unique_ptr<Trainer> built;
        try {
            built = std::make_unique<Trainer>(TaskKind::Addition, model, train);
        } catch (const std::invalid_argument& e) {
            return usageError("bench", e.what());
        }
        Trainer& trainer = *built;
        applyThreadCount(threads);
        const Timing t = timeSteps(trainer, warmup, steps);
        const std::string key = toString(precision);
        result[key + "_tokens_per_s"] = t.tokensPerSecond;
        result[key + "_step_ms"] = t.medianStepSeconds * 1e3;
        const double modelGflops =
            stepFlops(model, countParameters(trainer.model()), batch, window) /
            t.medianStepSeconds / 1e9;
        result[key + "_model_gflops"] = modelGflops;
        const bool withGemm = result.contains(key + "_gemm_gflops");
        const double fraction =
            withGemm ? modelGflops / result[key + "_gemm_gflops"].get<double>() : 0.0;
        if (withGemm) {
            result[key + "_fraction_of_gemm"] = fraction;
        }
        if (!json) {
            std::printf("%-5s %8s tokens/s   (median step %.0f ms, fastest %.0f ms; %.0f GFLOP/s",
                        key.c_str(), withCommas(static_cast<int64_t>(t.tokensPerSecond)).c_str(),
                        t.medianStepSeconds * 1e3, t.minStepSeconds * 1e3, modelGflops);
            if (withGemm) {
                std::printf(", %.0f%% of the matrix products'", 100.0 * fraction);
            }
            std::printf(")\n");
            std::fflush(stdout);
        }
        if (profile > 0) {
            const StepProfile p = profileSteps(trainer, profile);
            result[key + "_profile"] = profileJson(p);
            if (!json) {
                printProfile(key + " step", p);
            }
        }
        // the snapshot in this precision (--snapshot-precision): fp32's keys as before, bf16's
        // with "analysis_bf16_" in front
        const std::string prefix = precision == Precision::Fp32 ? "analysis_" : "analysis_bf16_";
        trainer.analyze(0, precision);  // warm-up
        std::vector<double> ms, forwardMs, scoresMs, projectionMs;
        for (int i = 0; i < 5; ++i) {  // the median of five: a snapshot is short, hosts noisy
            const auto start = Clock::now();
            const Analysis a = trainer.analyze(0, precision);
            ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
            forwardMs.push_back(a.forwardSeconds * 1e3);
            scoresMs.push_back(a.scoringSeconds * 1e3);
            projectionMs.push_back(a.projectionSeconds * 1e3);
            result["projected_prompts"] = a.projection.prompts;
        }
        result[prefix + "ms"] = median(ms);
        result[prefix + "fastest_ms"] = *std::min_element(ms.begin(), ms.end());
        result[prefix + "forward_ms"] = median(forwardMs);
        result[prefix + "scores_ms"] = median(scoresMs);
        result[precision == Precision::Fp32 ? "projection_ms" : "analysis_bf16_projection_ms"] =
            median(projectionMs);
        if (profile > 0) {
            const StepProfile p =
                profileCalls(profile, [&trainer, precision] { trainer.analyze(0, precision); });
            result[prefix + "profile"] = profileJson(p);
            if (!json) {
                printProfile("analysis snapshot (" + key + ")", p);
            }
        }
    }
    result["threads"] = at::get_num_threads();
    if (json) {
        std::cout << result.dump(2) << "\n";
    } else {
        for (const char* key : {"fp32", "bf16"}) {
            const bool fp32 = key == std::string("fp32");
            const std::string prefix = fp32 ? "analysis_" : "analysis_bf16_";
            std::printf(
                "analysis snapshot, %s: %.0f ms, fastest %.0f ms (%d prompts, all capture points; "
                "forward %.0f ms, scores %.0f ms, projections of %d prompts %.0f ms)\n",
                key, result[prefix + "ms"].get<double>(),
                result[prefix + "fastest_ms"].get<double>(), analysisSamples,
                result[prefix + "forward_ms"].get<double>(),
                result[prefix + "scores_ms"].get<double>(), result["projected_prompts"].get<int>(),
                result[fp32 ? "projection_ms" : "analysis_bf16_projection_ms"].get<double>());
        }
        std::printf(
            "model %d layers x %d wide, %d heads, dropout %g, batch %d x %d tokens, %d "
            "threads\n",
            model.nLayer, model.nEmbd, model.nHead, model.dropout, batch, window,
            at::get_num_threads());
    }
    return kExitOk;
}

}  // namespace nope::cli
