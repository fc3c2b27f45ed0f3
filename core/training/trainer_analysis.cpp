// The trainer's analyses of its model: the snapshots' analysis of the run's prompts, the
// analysis of the user's own prompts, and the position probes.

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "analysis/analyzer.h"
#include "probe/prober.h"
#include "tasks/batch.h"
#include "training/evaluation.h"
#include "training/trainer.h"
#include "util/stopwatch.h"

namespace nope {

ProbeReport Trainer::probe(const ProbeConfig& config, const std::atomic<bool>* cancel,
                           const std::function<void(int, int)>& progress) {
    ProbeTokens tokens;
    if (config.data == ProbeData::Task) {
        const int strings = config.trainStrings + config.testStrings;
        if (strings > int(m_data.test.size())) {
            throw std::invalid_argument(
                "--probe-train-strings: train and test strings of task probes "
                "come from the test set (allowed: a sum up to " +
                std::to_string(m_data.test.size()) + ")");
        }
        tokens = taskProbeTokens(
            config,
            makePromptSet(m_data, strings, analysisPromptSeed(m_trainConfig.data.seed)).tokens);
    } else {
        tokens = randomProbeTokens(config);
    }
    tokens.train = tokens.train.to(m_device);
    tokens.test = tokens.test.to(m_device);
    ProbeRunHooks hooks;
    hooks.cancel = cancel;
    hooks.progress = progress;
    return runProbes(*m_model, config, tokens, hooks);
}

namespace {

// Prompts whose hidden states each snapshot projects for the window's projector: enough tokens
// for a shape (16 prompts of 9 to 22 tokens), a few milliseconds per capture site.
constexpr int kProjectedPrompts = 16;

}  // namespace

Analysis Trainer::analyzeOn(const PromptSet& prompts, const std::atomic<bool>* cancel,
                            Precision precision) {
    AnalysisOptions options;
    options.bf16 = precision == Precision::Bf16;
    options.points = CaptureSet(allCapturePoints());
    options.keepPrompts = m_trainConfig.keepPrompts;
    options.attention = true;  // the Attention panel's weights, in the same forward passes
    // The Projector's points: every token of the first prompts (at least the kept ones).
    options.projections = {ProjectionMethod::Pca, ProjectionMethod::Mds};
    options.projectionPrompts = std::max(m_trainConfig.keepPrompts, kProjectedPrompts);
    options.cancel = cancel;
    return nope::analyze(*m_model, prompts.tokens.to(m_device), options, prompts.padded);
}

Analysis Trainer::analyze(int samples, Precision precision) {
    samples = std::min(samples, static_cast<int>(m_data.test.size()));
    if (samples <= 0 || samples == m_trainConfig.analysisSamples) {
        return analyzeOn(m_prompts, nullptr, precision);
    }
    // the same seeded draw: its first analysisSamples prompts are the run's own
    return analyzeOn(makePromptSet(m_data, samples, analysisPromptSeed(m_trainConfig.data.seed)),
                     nullptr, precision);
}

PromptAnalysis Trainer::analyzePrompts(const std::vector<std::string>& prompts) {
    const auto start = std::chrono::steady_clock::now();
    PromptAnalysis out;
    out.step = m_step;
    out.task = m_task;
    out.prompts = prompts;
    for (const auto& prompt : prompts) {
        if (prompt.empty() || static_cast<int>(prompt.size()) > m_modelConfig.blockSize) {
            throw std::invalid_argument("prompt '" + prompt + "' has " +
                                        std::to_string(prompt.size()) +
                                        " characters (allowed: 1 to the model's context of " +
                                        std::to_string(m_modelConfig.blockSize) + ")");
        }
        const PromptSet set = makePromptSet(std::vector<std::string>{prompt}, 0);
        AnalysisOptions options;
        options.points = CaptureSet(allCapturePoints());  // one prompt: its mean is its matrix
        out.analyses.push_back(
            nope::analyze(*m_model, set.tokens.to(m_device), options, set.padded));
        out.answers.push_back(answerPrompts(*m_model, m_task, {prompt}, set.tokens).front());
    }
    out.seconds = secondsSince(start);
    return out;
}

Analysis Trainer::analyzeBest(int samples) {
    return m_best.withBestIn(*m_model, [&] { return analyze(samples); });
}

}  // namespace nope
