#include "analysis/projection_fit.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

namespace nope {

namespace {

// The top `kProjectionAxes` eigenpairs of a symmetric matrix, largest first, eigenvalues below
// zero set to zero; missing pairs (a matrix smaller than 3 x 3) are zero.
struct TopEigen {
    torch::Tensor values;   // (3)
    torch::Tensor vectors;  // (n, 3)
    double positiveSum = 0.0;
};

// Matrices larger than this get the top pairs by subspace iteration (a full decomposition of a
// few hundred rows per capture site would dominate a training snapshot).
constexpr int64_t kFullDecomposition = 48;
constexpr int64_t kSubspace = 12;  // vectors iterated: the 3 wanted and 9 to speed convergence
constexpr int kIterations = 16;

// Positive semi-definite `psd` (n, n): the Rayleigh-Ritz pairs of an orthonormal basis that
// subspace iteration from a fixed start has turned toward the top eigenvectors (iterated in
// float32, the small problem solved in float64); ascending like linalg_eigh.
std::pair<torch::Tensor, torch::Tensor> subspaceEigen(const torch::Tensor& psd) {
    const int64_t n = psd.size(0);
    const auto a = psd.to(torch::kFloat);
    at::Generator generator = at::detail::createCPUGenerator(/*seed_in=*/0x5eed);
    auto basis = torch::randn({n, kSubspace}, generator, a.options());
    for (int i = 0; i < kIterations; ++i) {
        basis = std::get<0>(torch::linalg_qr(torch::mm(a, basis)));
    }
    const auto q = basis.to(torch::kDouble);
    const auto small = torch::mm(q.t(), torch::mm(a, basis).to(torch::kDouble));
    auto [values, vectors] = torch::linalg_eigh(0.5 * (small + small.t()));
    return {values, torch::mm(q, vectors)};
}

// `psd` says that no eigenvalue is negative, so that the positive ones sum to the trace.
TopEigen topEigen(const torch::Tensor& symmetric, bool psd = false) {
    const int64_t n = symmetric.size(0);
    const bool iterate = psd && n > kFullDecomposition;
    auto [values, vectors] =
        iterate ? subspaceEigen(symmetric) : torch::linalg_eigh(symmetric.to(torch::kDouble));
    const int64_t found = values.size(0);
    const int64_t k = std::min<int64_t>(kProjectionAxes, found);
    TopEigen top{torch::zeros({kProjectionAxes}, torch::kDouble),
                 torch::zeros({n, kProjectionAxes}, torch::kDouble),
                 iterate ? symmetric.trace().to(torch::kDouble).item<double>()
                         : values.clamp_min(0.0).sum().item<double>()};
    for (int64_t i = 0; i < k; ++i) {
        top.values[i] = values[found - 1 - i];
        top.vectors.select(1, i).copy_(vectors.select(1, found - 1 - i));
    }
    top.values.clamp_min_(0.0);
    return top;
}

std::array<double, kProjectionAxes> shares(const torch::Tensor& values, double total) {
    std::array<double, kProjectionAxes> out{};
    for (int i = 0; i < kProjectionAxes; ++i) {
        out[i] = total > 0.0 ? values[i].item<double>() / total : 0.0;
    }
    return out;
}

std::vector<double> toVector(const torch::Tensor& t) {
    const auto c = t.to(torch::kDouble).contiguous();
    return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

std::vector<double> positionsOf(int prompts, int T) {
    std::vector<double> out;
    out.reserve(static_cast<size_t>(prompts) * T);
    for (int p = 0; p < prompts; ++p) {
        for (int t = 0; t < T; ++t) {
            out.push_back(t);
        }
    }
    return out;
}

void store(Projection& out, const torch::Tensor& coords) {
    const auto c = coords.to(torch::kFloat).contiguous();
    out.coords.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

AxesFit principalAxes(const torch::Tensor& x) {
    TORCH_CHECK(x.dim() == 2, "principalAxes needs points (n, D)");
    // The products in float32 (the bulk of the work), the eigenproblem and coordinates in float64.
    const auto xf = x.to(torch::kFloat);
    const auto xc = xf - xf.mean(0, /*keepdim=*/true);
    const double total = xc.square().sum(torch::kDouble).item<double>();
    AxesFit fit;
    if (xc.size(0) <= xc.size(1)) {
        // Fewer points than dimensions: the Gram matrix's eigenvectors are the coordinates.
        const TopEigen top = topEigen(torch::mm(xc, xc.t()), /*psd=*/true);
        fit.coords = top.vectors * top.values.sqrt().unsqueeze(0);
        fit.explained = shares(top.values, total);
    } else {
        const TopEigen top = topEigen(torch::mm(xc.t(), xc), /*psd=*/true);
        fit.coords = torch::mm(xc.to(torch::kDouble), top.vectors);
        fit.explained = shares(top.values, total);
    }
    return fit;
}

AxesFit classicalMds(const torch::Tensor& d) {
    TORCH_CHECK(d.dim() == 2 && d.size(0) == d.size(1), "classicalMds needs a square matrix");
    const auto d2 = d.to(torch::kDouble).square();
    auto b = -0.5 * (d2 - d2.mean(1, /*keepdim=*/true) - d2.mean(0, /*keepdim=*/true) + d2.mean());
    const TopEigen top = topEigen(0.5 * (b + b.t()));
    AxesFit fit;
    fit.coords = top.vectors * top.values.sqrt().unsqueeze(0);
    fit.explained = shares(top.values, top.positiveSum);
    return fit;
}

void signByPosition(torch::Tensor& coords, const std::vector<double>& positions) {
    for (int axis = 0; axis < coords.size(1); ++axis) {
        if (pearson(toVector(coords.select(1, axis)), positions) < 0.0) {
            coords.select(1, axis).neg_();
        }
    }
}

Projection projectPca(CapturePoint point, int layer, const torch::Tensor& hidden) {
    Projection out;
    out.point = point;
    out.layer = layer;
    out.method = ProjectionMethod::Pca;
    out.prompts = static_cast<int>(hidden.size(0));
    out.seqLen = static_cast<int>(hidden.size(1));
    AxesFit fit = principalAxes(hidden.reshape({-1, hidden.size(2)}));
    const auto positions = positionsOf(out.prompts, out.seqLen);
    signByPosition(fit.coords, positions);
    out.explained = fit.explained;
    out.rPosition = pearson(toVector(fit.coords.select(1, 0)), positions);
    store(out, fit.coords);
    return out;
}

Projection projectMds(CapturePoint point, int layer, const torch::Tensor& cosines) {
    Projection out;
    out.point = point;
    out.layer = layer;
    out.method = ProjectionMethod::Mds;
    out.prompts = static_cast<int>(cosines.size(0));
    out.seqLen = static_cast<int>(cosines.size(1));
    const auto positions = positionsOf(1, out.seqLen);
    std::vector<torch::Tensor> coords;
    for (int p = 0; p < out.prompts; ++p) {
        AxesFit fit = classicalMds(1.0 - cosines[p].to(torch::kDouble));
        signByPosition(fit.coords, positions);
        for (int i = 0; i < kProjectionAxes; ++i) {
            out.explained[i] += fit.explained[i] / out.prompts;
        }
        out.rPosition += pearson(toVector(fit.coords.select(1, 0)), positions) / out.prompts;
        coords.push_back(fit.coords);
    }
    store(out, torch::cat(coords, 0));
    return out;
}

}  // namespace nope
