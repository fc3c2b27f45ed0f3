#include "probe/probe_fit.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>

#include "model/fast_ops.h"
#include "probe/probe_result.h"
#include "util/autocast_scope.h"

namespace nope {

namespace {

// Above this input exp continues along its tangent, exp(c) (1 + x - c), so that one large
// pre-activation cannot overflow the next layers into inf and NaN, while its gradient still
// flows (a hard clamp would freeze the unit); below it exp is unchanged.
constexpr double kExpInputCap = 20.0;

torch::Tensor guardedExp(const torch::Tensor& x) {
    const auto capped = x.clamp_max(kExpInputCap);
    return torch::exp(capped) * (1 + (x - capped));
}

torch::Tensor activate(const torch::Tensor& x, ProbeActivation activation) {
    switch (activation) {
        case ProbeActivation::Selu:
            return torch::selu(x);
        case ProbeActivation::Exp:
            return guardedExp(x);
        case ProbeActivation::Relu:
            return torch::relu(x);
        case ProbeActivation::Gelu:
            return torch::gelu(x);
        case ProbeActivation::Identity:
            return x;
    }
    return x;
}

// K independent MLPs: weights (K, in, out) and biases (K, 1, out) per Linear layer, drawn as
// PyTorch's nn.Linear does, U(-1/sqrt(in), 1/sqrt(in)) for both.
struct BatchedMlp {
    std::vector<torch::Tensor> weights;
    std::vector<torch::Tensor> biases;
    std::vector<ProbeActivation> activations;
    bool bf16 = false;

    BatchedMlp(int64_t K, int64_t in, const ProbeConfig& config, at::Generator& gen)
        : activations(config.activations), bf16(config.precision == ProbePrecision::Bf16) {
        std::vector<int64_t> widths = {in};
        for (int w : config.hidden) {
            widths.push_back(w);
        }
        widths.push_back(1);
        for (size_t i = 0; i + 1 < widths.size(); ++i) {
            const double bound = 1.0 / std::sqrt(double(widths[i]));
            weights.push_back(torch::empty({K, widths[i], widths[i + 1]})
                                  .uniform_(-bound, bound, gen)
                                  .requires_grad_());
            biases.push_back(
                torch::empty({K, 1, widths[i + 1]}).uniform_(-bound, bound, gen).requires_grad_());
        }
    }

    std::vector<torch::Tensor> parameters() const {
        std::vector<torch::Tensor> out = weights;
        out.insert(out.end(), biases.begin(), biases.end());
        return out;
    }

    // x (K, rows, in) -> (K, rows) float. bf16 runs the products and activations in bfloat16
    // against fp32 master weights, as autocast does.
    torch::Tensor forward(torch::Tensor x) const {
        const auto type = bf16 ? torch::kBFloat16 : torch::kFloat;
        // without bf16 instructions the products run in fp32 on the bf16-rounded operands and
        // are rounded once (model/fast_ops.h)
        const bool emulated = bf16 && emulatingBf16Products();
        x = x.to(type);
        for (size_t i = 0; i < weights.size(); ++i) {
            x = emulated ? torch::baddbmm(bf16Rounded(biases[i]), bf16Rounded(x),
                                          bf16Rounded(weights[i]))
                               .to(type)
                         : torch::baddbmm(biases[i].to(type), x, weights[i].to(type));
            if (i + 1 < weights.size()) {
                x = activate(x, activations[i]);
            }
        }
        return x.squeeze(-1).to(torch::kFloat);
    }
};

// Rows of probe inputs for a batch of strings: (P, N, T, F) -> (K = P * R, b * T, F), each of
// the P inputs repeated for its R = 1 or 2 probes (the probe and its control).
torch::Tensor batchInputs(const torch::Tensor& x, const torch::Tensor& strings, int64_t R) {
    const int64_t P = x.size(0), T = x.size(2), F = x.size(3);
    const auto rows = x.index_select(1, strings).reshape({P, 1, -1, F});  // (P, 1, b*T, F)
    return rows.expand({P, R, strings.size(0) * T, F}).reshape({P * R, -1, F});
}

// Targets (R, N, T) -> (K, b * T) in the same probe order.
torch::Tensor batchTargets(const torch::Tensor& y, const torch::Tensor& strings, int64_t P) {
    const int64_t R = y.size(0);
    const auto rows = y.index_select(1, strings).reshape({1, R, -1});  // (1, R, b*T)
    return rows.expand({P, R, rows.size(2)}).reshape({P * R, -1});
}

}  // namespace

std::vector<ProbeFit> fitProbes(const ProbeFitInput& input, const ProbeConfig& config,
                                uint64_t seed, const ProbeFitHooks& hooks) {
    TORCH_CHECK(input.trainX.dim() == 4 && input.testX.dim() == 4, "probe inputs are (P, N, T, F)");
    torch::NoGradGuard outerNoGrad;   // re-enabled only around the training step
    AutocastScope noAutocast(false);  // precision is explicit (see BatchedMlp::forward)
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const int64_t P = input.trainX.size(0);
    const int64_t N = input.trainX.size(1);
    const int64_t T = input.trainX.size(2);
    const int64_t F = input.trainX.size(3);
    const int64_t R = config.controls ? 2 : 1;
    const int64_t K = P * R;

    // Targets per role: the true ones, and (controls) the same values shuffled over every
    // training position.
    const auto trainY = input.trainY.to(torch::kFloat).contiguous();
    std::vector<torch::Tensor> roles = {trainY};
    if (config.controls) {
        const auto flat = trainY.reshape({-1});
        roles.push_back(
            flat.index_select(0, torch::randperm(flat.size(0), gen, torch::kLong)).reshape({N, T}));
    }
    const auto targets = torch::stack(roles);  // (R, N, T)

    BatchedMlp mlp(K, F, config, gen);
    torch::optim::AdamW optimizer(
        mlp.parameters(),
        torch::optim::AdamWOptions(config.learningRate).weight_decay(config.weightDecay));

    const int64_t batch = std::max(1, config.batchStrings);
    torch::Tensor lastEpochLoss;
    for (int epoch = 0; epoch < config.epochs; ++epoch) {
        if (hooks.cancel && hooks.cancel->load()) {
            return {};
        }
        const auto order = torch::randperm(N, gen, torch::kLong);
        auto epochLoss = torch::zeros({K});
        int batches = 0;
        for (int64_t start = 0; start < N; start += batch) {
            const auto strings = order.slice(0, start, std::min(N, start + batch));
            const auto x = batchInputs(input.trainX, strings, R);
            const auto y = batchTargets(targets, strings, P);
            torch::AutoGradMode grad(true);
            optimizer.zero_grad();
            const auto perProbe = (mlp.forward(x) - y).pow(2).mean(1);  // (K) MSE of each probe
            perProbe.sum().backward();  // probes are independent: each gets its own gradient
            optimizer.step();
            epochLoss += perProbe.detach();
            ++batches;
        }
        lastEpochLoss = epochLoss / double(batches);
        if (hooks.onEpoch) {
            hooks.onEpoch(epoch + 1);
        }
    }

    // Test: predictions of every probe for every test position, scored against the true targets.
    const int64_t Ntest = input.testX.size(1);
    std::vector<torch::Tensor> chunks;
    for (int64_t start = 0; start < Ntest; start += 256) {
        const auto strings = torch::arange(start, std::min(Ntest, start + 256), torch::kLong);
        chunks.push_back(mlp.forward(batchInputs(input.testX, strings, R)));
    }
    const auto predicted = torch::cat(chunks, 1).to(torch::kDouble).contiguous();  // (K, Ntest*T)
    const auto truthTensor = input.testY.reshape({-1}).to(torch::kDouble).contiguous();
    const std::vector<double> truth(truthTensor.data_ptr<double>(),
                                    truthTensor.data_ptr<double>() + truthTensor.numel());
    const auto losses = lastEpochLoss.defined() ? lastEpochLoss.to(torch::kDouble).contiguous()
                                                : torch::zeros({K}, torch::kDouble);
    const int64_t kept = std::min<int64_t>(config.keepPredictions, Ntest) * T;

    std::vector<ProbeFit> fits(static_cast<size_t>(P));
    for (int64_t p = 0; p < P; ++p) {
        auto& fit = fits[static_cast<size_t>(p)];
        for (int64_t r = 0; r < R; ++r) {
            const double* row = predicted.data_ptr<double>() + (p * R + r) * predicted.size(1);
            const std::vector<double> pred(row, row + predicted.size(1));
            const double corr = pearsonR(pred, truth);
            const double error = nrmse(pred, truth);
            if (r == 0) {
                fit.pearsonR = corr;
                fit.nrmse = error;
                fit.trainLoss = losses.data_ptr<double>()[p * R];
                fit.truth.assign(truth.begin(), truth.begin() + kept);
                fit.predicted.assign(pred.begin(), pred.begin() + kept);
            } else {
                fit.controlR = corr;
                fit.controlNrmse = error;
            }
        }
        if (!config.controls) {
            fit.controlR = fit.controlNrmse = std::numeric_limits<double>::quiet_NaN();
        }
    }
    return fits;
}

}  // namespace nope
