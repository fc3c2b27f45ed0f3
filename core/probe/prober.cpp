#include "probe/prober.h"

#include <chrono>
#include <map>
#include <stdexcept>

#include "analysis/analyzer.h"
#include "probe/probe_features.h"
#include "probe/probe_fit.h"
#include "tasks/vocab.h"
#include "util/rng.h"
#include "util/stopwatch.h"

namespace nope {

namespace {

torch::Tensor randomStrings(const std::string& chars, int count, int length, uint64_t seed) {
    Rng rng(seed);
    auto tokens = torch::empty({count, length}, torch::kLong);
    auto* data = tokens.data_ptr<int64_t>();
    for (int64_t i = 0; i < int64_t(count) * length; ++i) {
        data[i] = vocab::encode(chars[uniformInt(rng, 0, chars.size() - 1)]);
    }
    return tokens;
}

// Hidden states (N, T, C) fp32 of every site, by forward passes of 256 strings in eval mode.
std::vector<torch::Tensor> hiddenStates(GptImpl& model, const torch::Tensor& tokens,
                                        const ProbeConfig& config,
                                        const std::vector<CaptureSite>& sites) {
    EvalScope scope(model);
    std::vector<std::vector<torch::Tensor>> parts(sites.size());
    for (int64_t start = 0; start < tokens.size(0); start += 256) {
        HiddenStates states;
        states.wanted = CaptureSet(config.points);
        model.forward(tokens.slice(0, start, std::min(tokens.size(0), start + 256)), &states,
                      Head::None);
        for (size_t s = 0; s < sites.size(); ++s) {
            parts[s].push_back(
                states.at(sites[s].point, sites[s].layer).to(torch::kFloat).to(torch::kCPU));
        }
    }
    std::vector<torch::Tensor> out;
    for (auto& p : parts) {
        out.push_back(torch::cat(p, 0));
    }
    return out;
}

torch::Tensor stackFeature(const std::vector<torch::Tensor>& hidden, ProbeFeature feature) {
    std::vector<torch::Tensor> features;
    for (const auto& h : hidden) {
        features.push_back(probeFeature(h, feature));
    }
    return torch::stack(features);  // (P, N, T, F)
}

}  // namespace

ProbeTokens randomProbeTokens(const ProbeConfig& config) {
    return {randomStrings(config.trainChars, config.trainStrings, config.length,
                          deriveSeed(config.seed, 1)),
            randomStrings(config.testChars, config.testStrings, config.length,
                          deriveSeed(config.seed, 2))};
}

ProbeTokens taskProbeTokens(const ProbeConfig& config, const torch::Tensor& promptTokens) {
    const int64_t need = int64_t(config.trainStrings) + config.testStrings;
    if (promptTokens.dim() != 2 || promptTokens.size(0) < need) {
        throw std::invalid_argument("probe: " + std::to_string(need) +
                                    " task prompts needed (train + test strings), " +
                                    std::to_string(promptTokens.size(0)) + " given");
    }
    return {promptTokens.slice(0, 0, config.trainStrings),
            promptTokens.slice(0, config.trainStrings, need)};
}

ProbeReport runProbes(GptImpl& model, const ProbeConfig& config, const ProbeTokens& tokens,
                      const ProbeRunHooks& hooks) {
    const auto start = std::chrono::steady_clock::now();
    ProbeReport report;
    report.config = config;
    report.sequenceLength = static_cast<int>(tokens.train.size(1));
    report.trainStrings = static_cast<int>(tokens.train.size(0));
    report.testStrings = static_cast<int>(tokens.test.size(0));

    const auto sites = captureSites(CaptureSet(config.points), model.config().nLayer);
    const auto trainHidden = hiddenStates(model, tokens.train, config, sites);
    const auto testHidden = hiddenStates(model, tokens.test, config, sites);
    const int64_t T = report.sequenceLength;

    const int total = config.epochs * static_cast<int>(config.features.size());
    int done = 0;
    std::map<std::pair<CaptureSite, int>, ProbeResult> results;
    for (ProbeFeature feature : config.features) {
        if (hooks.cancel && hooks.cancel->load()) {
            report.cancelled = true;
            break;
        }
        ProbeFitInput input;
        input.trainX = stackFeature(trainHidden, feature);
        input.testX = stackFeature(testHidden, feature);
        if (config.standardize) {  // by the training strings' statistics, per probe and input
            const auto mean = input.trainX.mean({1, 2}, /*keepdim=*/true);
            const auto std =
                input.trainX.std({1, 2}, /*unbiased=*/false, /*keepdim=*/true).clamp_min(1e-8);
            input.trainX = (input.trainX - mean) / std;
            input.testX = (input.testX - mean) / std;
        }
        input.trainY = probeTargets(report.trainStrings, T, feature);
        input.testY = probeTargets(report.testStrings, T, feature);
        ProbeFitHooks fitHooks;
        fitHooks.cancel = hooks.cancel;
        fitHooks.onEpoch = [&](int epochs) {
            if (hooks.progress) {
                hooks.progress(done + epochs, total);
            }
        };
        const uint64_t seed = deriveSeed(config.seed, 100 + static_cast<uint64_t>(feature));
        const auto fits = fitProbes(input, config, seed, fitHooks);
        if (fits.empty()) {
            report.cancelled = true;
            break;
        }
        done += config.epochs;
        for (size_t s = 0; s < sites.size(); ++s) {
            ProbeResult r;
            r.point = sites[s].point;
            r.layer = sites[s].layer;
            r.feature = feature;
            r.pearsonR = fits[s].pearsonR;
            r.nrmse = fits[s].nrmse;
            r.controlR = fits[s].controlR;
            r.controlNrmse = fits[s].controlNrmse;
            r.trainLoss = fits[s].trainLoss;
            r.truth = fits[s].truth;
            r.predicted = fits[s].predicted;
            results[{sites[s], static_cast<int>(feature)}] = std::move(r);
        }
    }
    for (auto& [key, r] : results) {
        report.results.push_back(std::move(r));
    }
    report.seconds = secondsSince(start);
    return report;
}

}  // namespace nope
