#include "analysis/analyzer.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>

#include "analysis/adjacency.h"
#include "analysis/projection_fit.h"
#include "analysis/state_stats.h"
#include "model/fast_ops.h"
#include "model/linear.h"
#include "util/autocast_scope.h"
#include "util/stopwatch.h"

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
    const auto h = hidden.to(torch::kCPU, torch::kFloat).contiguous();
    const VectorStats stats = vectorStats(h);         // one pass: norms, variances, finiteness
    const auto cos = cosines(h, stats).contiguous();  // (B, T, T)
    if (!stats.finite && !acc.nonFinite) {
        acc.nonFinite = true;
        acc.nan = torch::isnan(h).any().item<bool>();
    }
    const auto& norms = stats.norms;
    const auto& vars = stats.variances;
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
        if (!allFinite(h)) {
            continue;  // nothing to fit: the scores and the run report the non-finite values
        }
        sites.push_back({acc.point, acc.layer});
        hidden.push_back(std::move(h));
        cosines.push_back(torch::cat(acc.projectedCosines));
    }
    if (sites.empty()) {
        return set;
    }
    // the sites split between the threads, each fitting its share by every method
    using Sites = std::vector<CaptureSite>;
    const bool cpu = hidden.front().device().is_cpu();
    const int64_t parts =
        cpu ? std::clamp<int64_t>(at::get_num_threads(), 1, static_cast<int64_t>(sites.size())) : 1;
    std::vector<std::vector<std::vector<Projection>>> fitted(static_cast<size_t>(parts));
    onEachThread(parts, [&](int64_t p) {
        const auto first = static_cast<size_t>(int64_t(sites.size()) * p / parts);
        const auto last = static_cast<size_t>(int64_t(sites.size()) * (p + 1) / parts);
        const Sites some(sites.begin() + first, sites.begin() + last);
        const std::vector<torch::Tensor> someHidden(hidden.begin() + first, hidden.begin() + last);
        const std::vector<torch::Tensor> someCosines(cosines.begin() + first,
                                                     cosines.begin() + last);
        for (ProjectionMethod method : options.projections) {
            fitted[p].push_back(
                method == ProjectionMethod::Pca
                    ? fitSites(
                          some, someHidden,
                          [](const Sites& s, const torch::Tensor& x) { return projectPca(s, x); })
                    : fitSites(some, someCosines, [](const Sites& s, const torch::Tensor& x) {
                          return projectMds(s, x);
                      }));
        }
    });
    std::vector<std::vector<Projection>> byMethod(options.projections.size());
    for (const auto& part : fitted) {
        for (size_t m = 0; m < part.size(); ++m) {
            byMethod[m].insert(byMethod[m].end(), part[m].begin(), part[m].end());
        }
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

// A chunk's prompts split between the threads on the CPU, each thread's share run forward and
// scored into accumulators of its own (each prompt's states do not depend on the others':
// attention stays within a prompt). Its results in prompt order: `add` to the whole's.
struct ChunkPart {
    int64_t offset = 0;  // the first prompt within the chunk
    std::vector<Accumulator> accs;
    AttentionAccumulator attention;
    std::chrono::steady_clock::duration forward{};  // its forward pass's
};

std::vector<ChunkPart> analyzeChunk(GptImpl& model, const torch::Tensor& chunk, int64_t start,
                                    const AnalysisOptions& options) {
    const int64_t rows = chunk.size(0);
    const bool cpu = chunk.device().is_cpu();
    const int64_t parts = cpu ? std::clamp<int64_t>(at::get_num_threads(), 1, rows) : 1;
    std::vector<ChunkPart> out(static_cast<size_t>(parts));
    for (int64_t p = 0; p < parts; ++p) {
        out[p].offset = rows * p / parts;
        out[p].accs = makeAccumulators(options.points, model.config().nLayer);
    }
    onEachThread(parts, [&](int64_t p) {
        using Clock = std::chrono::steady_clock;
        ChunkPart& part = out[static_cast<size_t>(p)];
        const int64_t end = p + 1 < parts ? out[p + 1].offset : rows;
        HiddenStates states;
        states.wanted = options.points;
        states.attentionWeights = options.attention;
        const auto t0 = Clock::now();
        {
            std::optional<AutocastScope> bf16;  // the forward pass only: the scores stay fp32
            if (options.bf16 && cpu) {
                bf16.emplace(true);
            }
            forwardAny(model, chunk.slice(0, part.offset, end), states);
        }
        part.forward = Clock::now() - t0;
        for (auto& acc : part.accs) {
            score(acc, states.at(acc.point, acc.layer), start + part.offset, options);
        }
        if (options.attention) {
            part.attention.add(states.weights, start + part.offset, options.keepPrompts);
        }
    });
    return out;
}

// Appends a later part's scores of the same site.
void add(Accumulator& into, Accumulator&& part) {
    const auto append = [](auto& to, auto& from) {
        to.insert(to.end(), std::make_move_iterator(from.begin()),
                  std::make_move_iterator(from.end()));
    };
    append(into.adjacency, part.adjacency);
    append(into.norm, part.norm);
    append(into.variance, part.variance);
    append(into.kept, part.kept);
    append(into.projectedHidden, part.projectedHidden);
    append(into.projectedCosines, part.projectedCosines);
    into.matrixSum = into.matrixSum.defined() ? into.matrixSum + part.matrixSum : part.matrixSum;
    if (!into.nonFinite && part.nonFinite) {  // the earliest prompts' kind of value
        into.nonFinite = true;
        into.nan = part.nan;
    }
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
    if (!hidden.device().is_cpu()) {
        VectorStats unknown;
        unknown.gramSafe = false;  // each vector scaled to unit length, on its device
        return cosines(hidden.to(torch::kFloat), unknown);
    }
    const auto h = hidden.to(torch::kFloat).contiguous();
    return cosines(h, vectorStats(h));
}

Analysis analyze(GptImpl& model, const torch::Tensor& tokens, const AnalysisOptions& options,
                 const std::vector<std::string>& prompts) {
    TORCH_CHECK((tokens.dim() == 2 || tokens.dim() == 3) && tokens.size(0) >= 1,
                "analysis needs tokens (N, T) or inputs (N, T, C)");
    EvalScope scope(model);
    // each weight cast to bf16 once, split between the threads, for every thread's forward pass
    std::optional<SharedBf16Weights> bf16Weights;
    if (options.bf16 && tokens.device().is_cpu() && fastKernelsEnabled()) {
        bf16Weights.emplace(model.parameters(), at::get_num_threads());
    }
    const int64_t N = tokens.size(0);
    const int T = static_cast<int>(tokens.size(1));
    std::vector<Accumulator> accs = makeAccumulators(options.points, model.config().nLayer);
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
        const auto t0 = Clock::now();
        std::vector<ChunkPart> parts = analyzeChunk(model, chunk, start, options);
        Clock::duration forward{};
        for (ChunkPart& part : parts) {
            forward = std::max(forward, part.forward);  // the slowest thread's
            for (size_t i = 0; i < accs.size(); ++i) {
                add(accs[i], std::move(part.accs[i]));
            }
            attention.add(std::move(part.attention));
        }
        forwardTime += forward;
        scoringTime += Clock::now() - t0 - forward;
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
    out.projectionSeconds = secondsSince(fitStart);
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
