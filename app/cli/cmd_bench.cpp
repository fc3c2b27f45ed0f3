// nopescope-cli bench: training throughput of the default 6-layer, 384-wide model at batch 64 of
// 32 tokens, in fp32 and bf16, and the time of one analysis snapshot.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "training/trainer.h"
#include "util/format.h"
#include "util/runtime.h"

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
        seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    const TrainConfig& c = trainer.trainConfig();
    Timing t;
    t.medianStepSeconds = median(seconds);
    t.minStepSeconds = *std::min_element(seconds.begin(), seconds.end());
    t.tokensPerSecond = double(c.batchSize) * c.windowLength / t.medianStepSeconds;
    return t;
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
    FlagSet flags("nopescope-cli bench [--steps N] [--warmup N] [--batch N] [--window N] [--json]",
                  "Times training steps (forward, backward, clip, AdamW) of the model on addition\n"
                  "windows, in fp32 and in bf16, and prints tokens per second (median over the\n"
                  "timed steps after warm-up); then times one analysis snapshot (all capture\n"
                  "points, --analysis-samples prompts).");
    flags.addInt("steps", &steps, "timed steps per precision", 1, 1000);
    flags.addInt("warmup", &warmup, "untimed steps first", 0, 100);
    flags.addInt("batch", &batch, "sequences per step", 1, 4096);
    flags.addInt("window", &window, "tokens per sequence", 2, 256);
    flags.addInt("analysis-samples", &analysisSamples, "prompts of the timed snapshot", 1, 10000);
    flags.addInt("threads", &threads, "CPU threads (0 = all cores)", 0, 256);
    modelFlags.addTo(flags);
    flags.addSwitch("json", &json,
                    "print one JSON object (fp32_tokens_per_s, bf16_tokens_per_s, analysis_ms)");
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
    train.keepPrompts = 0;
    train.data.trainSize = 2000;
    train.data.testSize = 2000;

    nlohmann::json result = {{"model", model},
                             {"batch", batch},
                             {"window", window},
                             {"threads", 0},
                             {"timed_steps", steps}};
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
        if (!json) {
            std::printf("%-5s %8s tokens/s   (median step %.0f ms, fastest %.0f ms)\n", key.c_str(),
                        withCommas(static_cast<int64_t>(t.tokensPerSecond)).c_str(),
                        t.medianStepSeconds * 1e3, t.minStepSeconds * 1e3);
            std::fflush(stdout);
        }
        if (precision == Precision::Fp32) {
            trainer.analyze();  // warm-up
            std::vector<double> ms;
            for (int i = 0; i < 3; ++i) {
                const auto start = Clock::now();
                trainer.analyze();
                ms.push_back(
                    std::chrono::duration<double, std::milli>(Clock::now() - start).count());
            }
            result["analysis_ms"] = median(ms);
        }
    }
    result["threads"] = at::get_num_threads();
    if (json) {
        std::cout << result.dump(2) << "\n";
    } else {
        std::printf("analysis snapshot: %.0f ms (%d prompts, all capture points)\n",
                    result["analysis_ms"].get<double>(), analysisSamples);
        std::printf("model %d layers x %d wide, batch %d x %d tokens, %d threads\n", model.nLayer,
                    model.nEmbd, batch, window, at::get_num_threads());
    }
    return kExitOk;
}

}  // namespace nope::cli
