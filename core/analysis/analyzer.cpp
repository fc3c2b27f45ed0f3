#include "analysis/analyzer.h"

#include <chrono>

#include "analysis/adjacency.h"
#include "analysis/projection_fit.h"
#include "util/autocast_scope.h"

namespace nope {

namespace {

// Per capture point and layer: the per-prompt scores and the running sum of matrices.
struct Accumulator {
    CapturePoint point;
    int layer;
    std::vector<double> adjacency, norm, variance;
    torch::Tensor matrixSum;  // (T, T) float64
    std::vector<std::vector<float>> kept;
    std::vector<torch::Tensor> projectedHidden, projectedCosines;  // the projected prompts'
    bool nonFinite = false;  // some hidden state was NaN or infinite
    bool nan = false;
};

// Keeps the hidden states and cosine matrices of the prompts firstPrompt.. that are among the
// first `prompts`.
void keepForProjection(Accumulator& acc, const torch::Tensor& hidden, const torch::Tensor& cos,
                       int64_t firstPrompt, int prompts) {
    const int64_t count = std::min<int64_t>(hidden.size(0), prompts - firstPrompt);
    if (count > 0) {
        acc.projectedHidden.push_back(hidden.slice(0, 0, count).to(torch::kCPU, torch::kFloat));
        acc.projectedCosines.push_back(cos.slice(0, 0, count).clone());
    }
}

void score(Accumulator& acc, const torch::Tensor& hidden, int64_t firstPrompt,
           const AnalysisOptions& options) {
    const int keepPrompts = options.keepPrompts;
    const auto h = hidden.to(torch::kFloat);
    const auto cos = selfCosine(h).to(torch::kCPU).contiguous();  // (B, T, T)
    auto norms = h.norm(2, /*dim=*/-1);                           // (B, T)
    auto vars = h.var(/*dim=*/-1, /*unbiased=*/false);            // (B, T)
    // Finite norms and variances mean finite states: the one pass over the states is rare.
    if (!(torch::isfinite(norms).all().item<bool>() && torch::isfinite(vars).all().item<bool>())) {
        if (!acc.nonFinite && !torch::isfinite(h).all().item<bool>()) {
            acc.nonFinite = true;
            acc.nan = torch::isnan(h).any().item<bool>();
        }
        // large finite states overflow float32's squares: float64 for those
        const auto h64 = h.to(torch::kDouble);
        norms = h64.norm(2, /*dim=*/-1).to(torch::kFloat);
        vars = h64.var(/*dim=*/-1, /*unbiased=*/false).to(torch::kFloat);
    }
    norms = norms.to(torch::kCPU).contiguous();
    vars = vars.to(torch::kCPU).contiguous();
    const int64_t B = cos.size(0);
    const int T = static_cast<int>(cos.size(1));
    const float* c = cos.data_ptr<float>();
    const float* n = norms.data_ptr<float>();
    const float* v = vars.data_ptr<float>();
    for (int64_t b = 0; b < B; ++b) {
        const float* matrix = c + b * T * T;
        acc.adjacency.push_back(adjacencyScore(matrix, T));
        acc.norm.push_back(shrinkScore(n + b * T, T));
        acc.variance.push_back(shrinkScore(v + b * T, T));
        if (firstPrompt + b < keepPrompts) {
            acc.kept.emplace_back(matrix, matrix + T * T);
        }
    }
    auto sum = cos.sum({0}, /*keepdim=*/false, torch::kDouble);  // (T, T)
    acc.matrixSum = acc.matrixSum.defined() ? acc.matrixSum + sum : sum;
    if (!options.projections.empty()) {
        keepForProjection(acc, h, cos, firstPrompt, options.projectionPrompts);
    }
}

// Sites fitted together while their inputs stay this small (a snapshot's all fit in one batch;
// the CLI's hundreds of prompts go site by site, which keeps each in cache).
constexpr int64_t kBatchBytes = int64_t(8) << 20;

// One method's fits of the sites, batched; a batch LAPACK cannot solve (values near overflow)
// is fitted site by site, leaving out the sites that fail.
template <typename Fit>
std::vector<Projection> fitSites(const std::vector<CaptureSite>& sites,
                                 const std::vector<torch::Tensor>& inputs, Fit fit) {
    const int64_t siteBytes = inputs.front().numel() * int64_t(sizeof(float));
    const size_t chunk = static_cast<size_t>(std::max<int64_t>(1, kBatchBytes / siteBytes));
    std::vector<Projection> out;
    for (size_t first = 0; first < sites.size(); first += chunk) {
        const size_t last = std::min(sites.size(), first + chunk);
        const std::vector<CaptureSite> some(sites.begin() + first, sites.begin() + last);
        const std::vector<torch::Tensor> someInputs(inputs.begin() + first, inputs.begin() + last);
        try {
            auto fits = fit(some, torch::stack(someInputs));
            out.insert(out.end(), fits.begin(), fits.end());
        } catch (const c10::Error&) {
            for (size_t k = 0; k < some.size(); ++k) {
                try {
                    out.push_back(fit({some[k]}, someInputs[k].unsqueeze(0)).front());
                } catch (const c10::Error&) {
                    // no projection of this site; the rest of the analysis stands
                }
            }
        }
    }
    return out;
}

ProjectionSet fitProjections(const std::vector<Accumulator>& accs, const torch::Tensor& tokens,
                             const AnalysisOptions& options) {
    ProjectionSet set;
    std::vector<CaptureSite> sites;
    std::vector<torch::Tensor> hidden, cosines;
    for (const auto& acc : accs) {
        if (acc.projectedHidden.empty()) {
            continue;
        }
        auto h = torch::cat(acc.projectedHidden);
        if (!torch::isfinite(h).all().item<bool>()) {
            continue;  // nothing to fit: the scores and the run report the non-finite values
        }
        sites.push_back({acc.point, acc.layer});
        hidden.push_back(std::move(h));
        cosines.push_back(torch::cat(acc.projectedCosines));
    }
    if (sites.empty()) {
        return set;
    }
    std::vector<std::vector<Projection>> byMethod;
    for (ProjectionMethod method : options.projections) {
        using Sites = std::vector<CaptureSite>;
        byMethod.push_back(
            method == ProjectionMethod::Pca
                ? fitSites(sites, hidden,
                           [](const Sites& s, const torch::Tensor& x) { return projectPca(s, x); })
                : fitSites(sites, cosines, [](const Sites& s, const torch::Tensor& x) {
                      return projectMds(s, x);
                  }));
    }
    for (const CaptureSite& site : sites) {  // point-major, then layer, then method
        for (const auto& fits : byMethod) {
            for (const auto& p : fits) {
                if (p.point == site.point && p.layer == site.layer) {
                    set.items.push_back(p);
                }
            }
        }
    }
    if (set.items.empty()) {
        return set;
    }
    set.prompts = set.items.front().prompts;
    set.seqLen = set.items.front().seqLen;
    if (tokens.dim() == 2) {
        const auto ids = tokens.slice(0, 0, set.prompts).to(torch::kCPU, torch::kInt).contiguous();
        set.tokens.assign(ids.data_ptr<int>(), ids.data_ptr<int>() + ids.numel());
    }
    return set;
}

std::vector<Accumulator> makeAccumulators(const CaptureSet& points, int layers) {
    std::vector<Accumulator> out;
    for (const CaptureSite& site : captureSites(points, layers)) {
        Accumulator acc;
        acc.point = site.point;
        acc.layer = site.layer;
        out.push_back(std::move(acc));
    }
    return out;
}

}  // namespace

void forwardAny(GptImpl& model, const torch::Tensor& chunk, HiddenStates& states) {
    if (chunk.dim() == 3) {
        model.forwardInputs(chunk, &states, Head::None);
    } else {
        model.forward(chunk, &states, Head::None);
    }
}

EvalScope::EvalScope(GptImpl& model)
    : m_model(model), m_wasTraining(model.is_training()), m_fp32(false) {
    m_model.eval();
}

EvalScope::~EvalScope() {
    m_model.train(m_wasTraining);
}

torch::Tensor selfCosine(const torch::Tensor& hidden) {
    auto h = hidden.to(torch::kFloat);
    // Vectors whose squares would overflow float32 are scaled down first (a cosine does not
    // depend on the scale); the others are used as they are, to the last bit.
    const auto largest = h.abs().amax(/*dim=*/-1, /*keepdim=*/true);
    if ((largest > 1e15f).any().item<bool>()) {
        h = h / torch::where(largest > 1e15f, largest, torch::ones_like(largest));
    }
    const auto unit = h / h.norm(2, /*dim=*/-1, /*keepdim=*/true).clamp_min(1e-8);  // (B, T, D)
    return torch::bmm(unit, unit.transpose(1, 2));                                  // (B, T, T)
}

Analysis analyze(GptImpl& model, const torch::Tensor& tokens, const AnalysisOptions& options,
                 const std::vector<std::string>& prompts) {
    TORCH_CHECK((tokens.dim() == 2 || tokens.dim() == 3) && tokens.size(0) >= 1,
                "analysis needs tokens (N, T) or inputs (N, T, C)");
    EvalScope scope(model);
    const int64_t N = tokens.size(0);
    const int T = static_cast<int>(tokens.size(1));
    auto accs = makeAccumulators(options.points, model.config().nLayer);
    const int64_t batch = std::max(1, options.batchSize);
    using Clock = std::chrono::steady_clock;
    Clock::duration forwardTime{}, scoringTime{};
    int64_t analysed = 0;
    bool cancelled = false;
    AttentionAccumulator attention;
    for (int64_t start = 0; start < N; start += batch) {
        if (options.cancel && options.cancel->load()) {
            cancelled = true;
            break;
        }
        const auto chunk = tokens.slice(0, start, std::min(N, start + batch));
        analysed = std::min(N, start + batch);
        HiddenStates states;
        states.wanted = options.points;
        states.attentionWeights = options.attention;
        const auto t0 = Clock::now();
        forwardAny(model, chunk, states);
        const auto t1 = Clock::now();
        for (auto& acc : accs) {
            score(acc, states.at(acc.point, acc.layer), start, options);
        }
        if (options.attention) {
            attention.add(states.weights, start, options.keepPrompts);
        }
        forwardTime += t1 - t0;
        scoringTime += Clock::now() - t1;
    }

    Analysis out;
    out.cancelled = cancelled;
    if (analysed == 0) {
        return out;
    }
    out.forwardSeconds = std::chrono::duration<double>(forwardTime).count();
    out.scoringSeconds = std::chrono::duration<double>(scoringTime).count();
    out.samples = static_cast<int>(analysed);
    out.seqLen = T;
    if (options.attention) {
        out.attention = attention.finish(analysed, T);
    }
    for (const auto& acc : accs) {  // the first site, in forward order, where states broke
        const bool earlier =
            out.nonFinite && (acc.layer != out.nonFinite->layer ? acc.layer < out.nonFinite->layer
                                                                : acc.point < out.nonFinite->point);
        if (acc.nonFinite && (!out.nonFinite || earlier)) {
            out.nonFinite = NonFinite{acc.point, acc.layer, acc.nan};
        }
    }
    const auto fitStart = Clock::now();
    out.projection = fitProjections(accs, tokens, options);
    out.projectionSeconds = std::chrono::duration<double>(Clock::now() - fitStart).count();
    for (int64_t i = 0; i < std::min<int64_t>(options.keepPrompts, analysed); ++i) {
        out.keptPrompts.push_back(i < int64_t(prompts.size()) ? prompts[i] : std::string());
    }
    for (auto& acc : accs) {
        LayerScores row;
        row.point = acc.point;
        row.layer = acc.layer;
        const MeanStd adjacency = meanStd(acc.adjacency);
        row.adjacencyMean = adjacency.mean;
        row.adjacencyStd = adjacency.std;
        row.normScore = meanStd(acc.norm).mean;
        row.varianceScore = meanStd(acc.variance).mean;
        const auto mean = (acc.matrixSum / double(analysed)).to(torch::kFloat).contiguous();
        row.meanMatrix.assign(mean.data_ptr<float>(), mean.data_ptr<float>() + mean.numel());
        row.promptMatrices = std::move(acc.kept);
        out.rows.push_back(std::move(row));
    }
    return out;
}

}  // namespace nope
