#include "mechanism/ablation_runner.h"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "analysis/analyzer.h"
#include "util/stopwatch.h"

namespace nope {

torch::Tensor drawAblationInputs(Ablation ablation, int64_t N, int64_t T, int64_t C,
                                 uint64_t seed) {
    auto gen = at::detail::createCPUGenerator(seed);
    const auto f32 = torch::TensorOptions().dtype(torch::kFloat);
    switch (ablation) {
        case Ablation::Eqx: {
            TORCH_CHECK(T <= C, "eqx needs a dimension per token");
            auto x = torch::full({N, T, C}, 0.1, f32);
            for (int64_t n = 0; n < N; ++n) {
                const auto columns = torch::randperm(C, gen, torch::kLong).slice(0, 0, T);
                x[n].scatter_add_(1, columns.view({T, 1}), torch::ones({T, 1}, f32));
            }
            return x / x.norm(2, /*dim=*/-1, /*keepdim=*/true) * 0.05;
        }
        case Ablation::Randx:
            return torch::rand({N, T, C}, gen, f32);
        case Ablation::Constant:
            return torch::rand({N, 1, C}, gen, f32).expand({N, T, C}).contiguous();
        default:
            throw std::invalid_argument(toString(ablation) + " does not replace the inputs");
    }
}

AttentionVariantScope::AttentionVariantScope(GptImpl& model, const AttentionVariant& variant)
    : m_model(model) {
    m_model.setAttentionVariant(variant);
}

AttentionVariantScope::~AttentionVariantScope() {
    m_model.setAttentionVariant(AttentionVariant{});
}

namespace {

bool anyNonFinite(const Analysis& analysis) {
    for (const auto& row : analysis.rows) {
        for (float v : row.meanMatrix) {
            if (!std::isfinite(v)) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace

AblationTable runAblations(GptImpl& model, const torch::Tensor& tokens,
                           const AblationConfig& config, const std::vector<std::string>& prompts,
                           const std::atomic<bool>* cancel) {
    TORCH_CHECK(tokens.dim() == 2 && tokens.size(0) >= 1, "ablations need tokens of shape (N, T)");
    const int64_t N = tokens.size(0), T = tokens.size(1);
    if (auto problem = checkAblations(config, static_cast<int>(T), model.config().nEmbd)) {
        throw std::invalid_argument(*problem);
    }
    const auto start = std::chrono::steady_clock::now();
    AblationTable table;
    table.config = config;
    table.samples = static_cast<int>(N);
    table.seqLen = static_cast<int>(T);
    AnalysisOptions options;
    options.points = config.points;
    options.keepPrompts = config.keepPrompts;
    options.cancel = cancel;  // also between the batches of one ablation
    for (Ablation a : config.ablations) {
        if (cancel && cancel->load()) {
            break;
        }
        AblationResult result;
        result.ablation = a;
        {
            AttentionVariantScope scope(model, variantOf(a, config));
            const torch::Tensor inputs =
                replacesInputs(a)
                    ? drawAblationInputs(a, N, T, model.config().nEmbd, config.inputSeed)
                    : tokens;
            result.analysis = analyze(model, inputs, options,
                                      replacesInputs(a) ? std::vector<std::string>{} : prompts);
        }
        if (result.analysis.cancelled) {
            break;  // a partial ablation is left out
        }
        result.nonFinite = anyNonFinite(result.analysis);
        table.results.push_back(std::move(result));
    }
    table.seconds = secondsSince(start);
    return table;
}

}  // namespace nope
