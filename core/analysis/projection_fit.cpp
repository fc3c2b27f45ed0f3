#include "analysis/projection_fit.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <tuple>

#include "model/fast_ops.h"

namespace nope {

namespace {

// Matrices larger than this get their top pairs by subspace iteration (a full decomposition of a
// few hundred rows per capture site would dominate a training snapshot).
constexpr int64_t kFullDecomposition = 48;
constexpr int64_t kSubspace = 12;  // vectors iterated: the 3 wanted and 9 to speed convergence
constexpr int kIterations = 16;    // at most; fewer once the wanted pairs have converged
constexpr int kFirstCheck = 4;     // the first iteration that checks, then every second one
// Converged: every wanted Ritz pair's residual |A v - l v| at most this fraction of the matrix's
// largest Ritz value (float32 iteration leaves residuals near 1e-6 of it).
constexpr double kResidualTolerance = 1e-5;

// LibTorch decomposes a batch of matrices (linalg_eigh, linalg_qr) one LAPACK call after
// another on one thread; a snapshot's batches are hundreds of small matrices. `decompose` on
// parts of the batch, one part per thread, the results joined in order.
template <typename Decompose>
std::pair<torch::Tensor, torch::Tensor> onEveryThread(const torch::Tensor& batch,
                                                      Decompose decompose) {
    const int64_t B = batch.size(0);
    const int64_t parts =
        at::in_parallel_region() ? 1 : std::min<int64_t>(at::get_num_threads(), B);
    if (parts <= 1) {
        return decompose(batch);
    }
    std::vector<torch::Tensor> first(static_cast<size_t>(parts)), second(first.size());
    onEachThread(parts, [&](int64_t p) {
        std::tie(first[p], second[p]) =
            decompose(batch.slice(0, B * p / parts, B * (p + 1) / parts));
    });
    return {torch::cat(first), torch::cat(second)};
}

std::pair<torch::Tensor, torch::Tensor> eigh(const torch::Tensor& symmetric) {
    return onEveryThread(symmetric, [](const torch::Tensor& part) {
        auto [values, vectors] = torch::linalg_eigh(part);
        return std::pair{values, vectors};
    });
}

torch::Tensor orthonormalBasis(const torch::Tensor& columns) {
    return onEveryThread(columns,
                         [](const torch::Tensor& part) {
                             auto [q, r] = torch::linalg_qr(part);
                             return std::pair{q, r};
                         })
        .first;
}

// The top `kProjectionAxes` eigenpairs of each symmetric matrix of a batch (B, n, n), largest
// first, eigenvalues below zero set to zero, missing pairs (n < 3) zero; and the sum of each
// matrix's positive eigenvalues.
struct TopEigen {
    torch::Tensor values;       // (B, 3)
    torch::Tensor vectors;      // (B, n, 3)
    torch::Tensor positiveSum;  // (B)
};

// Whether the top kProjectionAxes Ritz pairs (ascending values (B, k), vectors (B, k, k) of the
// basis q (B, n, k), aq = A q) of every matrix have converged.
bool converged(const torch::Tensor& q, const torch::Tensor& aq, const torch::Tensor& values,
               const torch::Tensor& vectors) {
    const int64_t k = values.size(1);
    const auto top = vectors.narrow(2, k - kProjectionAxes, kProjectionAxes);
    const auto topValues = values.narrow(1, k - kProjectionAxes, kProjectionAxes).unsqueeze(1);
    const auto residual = (torch::bmm(aq, top) - torch::bmm(q, top) * topValues).norm(2, 1);
    const auto largest = values.select(1, k - 1).unsqueeze(1);  // (B, 1)
    return !(residual > kResidualTolerance * largest).any().item<bool>();
}

// Positive semi-definite `psd` (B, n, n): the Rayleigh-Ritz pairs of an orthonormal basis that
// subspace iteration from a fixed start has turned toward the top eigenvectors (iterated in
// float32, the small problem solved in float64); ascending like linalg_eigh. The iteration stops
// once the wanted pairs of every matrix have converged (hidden states' spectra fall steeply: a
// few iterations), at the latest after kIterations.
std::pair<torch::Tensor, torch::Tensor> subspaceEigen(const torch::Tensor& psd) {
    const auto a = psd.to(torch::kFloat);
    at::Generator generator = at::detail::createCPUGenerator(/*seed_in=*/0x5eed);
    auto product = torch::randn({a.size(0), a.size(1), kSubspace}, generator, a.options());
    for (int i = 1;; ++i) {
        const auto basis = orthonormalBasis(product);
        product = batchedMatmul(a, basis, /*transposeB=*/false);  // A Q
        const bool last = i == kIterations;
        if (!last && (i < kFirstCheck || i % 2 != 0)) {
            continue;
        }
        const auto q = basis.to(torch::kDouble);
        const auto aq = product.to(torch::kDouble);
        const auto small = torch::bmm(q.transpose(1, 2), aq);
        auto [values, vectors] = eigh(0.5 * (small + small.transpose(1, 2)));
        if (last || converged(q, aq, values, vectors)) {
            return {values, torch::bmm(q, vectors)};
        }
    }
}

// `psd` says that no eigenvalue is negative, so that the positive ones sum to the trace.
TopEigen topEigen(const torch::Tensor& symmetric, bool psd) {
    const int64_t n = symmetric.size(1);
    const bool iterate = psd && n > kFullDecomposition;
    auto [values, vectors] =
        iterate ? subspaceEigen(symmetric) : eigh(symmetric.to(torch::kDouble));
    const int64_t found = values.size(1);
    const int64_t k = std::min<int64_t>(kProjectionAxes, found);
    TopEigen top;
    top.values = values.narrow(1, found - k, k).flip({1}).clamp_min(0.0);
    top.vectors = vectors.narrow(2, found - k, k).flip({2});
    if (k < kProjectionAxes) {  // fewer points than axes
        top.values = torch::cat(
            {top.values, torch::zeros({values.size(0), kProjectionAxes - k}, values.options())}, 1);
        top.vectors =
            torch::cat({top.vectors,
                        torch::zeros({vectors.size(0), n, kProjectionAxes - k}, vectors.options())},
                       2);
    }
    top.positiveSum = iterate ? symmetric.diagonal(0, 1, 2).sum(1).to(torch::kDouble)
                              : values.clamp_min(0.0).sum(1);
    return top;
}

// values (B, 3) over totals (B), 0 where a total is 0.
torch::Tensor shares(const torch::Tensor& values, const torch::Tensor& totals) {
    const auto t = totals.unsqueeze(1);
    return torch::where(t > 0.0, values / t.clamp_min(1e-300), torch::zeros_like(values));
}

// A batched fit or a single one: adds and removes the batch dimension.
template <typename Fit>
AxesFit maybeBatched(const torch::Tensor& x, int64_t singleDims, Fit fit) {
    if (x.dim() > singleDims) {
        return fit(x);
    }
    AxesFit out = fit(x.unsqueeze(0));
    return {out.coords.squeeze(0), out.explained.squeeze(0)};
}

Projection emptyProjection(const CaptureSite& site, ProjectionMethod method, int prompts, int T) {
    Projection p;
    p.point = site.point;
    p.layer = site.layer;
    p.method = method;
    p.prompts = prompts;
    p.seqLen = T;
    return p;
}

// One Projection per site from the batched results: explained (S, 3), r (S), coords with
// S x P x T x 3 values.
std::vector<Projection> toProjections(const std::vector<CaptureSite>& sites,
                                      ProjectionMethod method, int64_t P, int64_t T,
                                      const torch::Tensor& explained, const torch::Tensor& r,
                                      const torch::Tensor& coords) {
    const auto ex = explained.to(torch::kDouble).contiguous();
    const auto rs = r.to(torch::kDouble).contiguous();
    const auto xyz = coords.to(torch::kFloat).reshape({ex.size(0), -1}).contiguous();
    const auto exa = ex.accessor<double, 2>();
    const auto ra = rs.accessor<double, 1>();
    std::vector<Projection> out;
    for (int64_t s = 0; s < ex.size(0); ++s) {
        Projection p = emptyProjection(sites[static_cast<size_t>(s)], method, static_cast<int>(P),
                                       static_cast<int>(T));
        for (int a = 0; a < kProjectionAxes; ++a) {
            p.explained[a] = exa[s][a];
        }
        p.rPosition = ra[s];
        const float* c = xyz[s].data_ptr<float>();
        p.coords.assign(c, c + P * T * kProjectionAxes);
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace

AxesFit principalAxes(const torch::Tensor& x) {
    TORCH_CHECK(x.dim() == 2 || x.dim() == 3, "principalAxes needs points (n, D) or (B, n, D)");
    return maybeBatched(x, 2, [](const torch::Tensor& batch) {
        // The products in float32 (the bulk of the work), the eigenproblem in float64.
        const auto xf = batch.to(torch::kFloat);
        const auto xc = (xf - xf.mean(1, /*keepdim=*/true)).contiguous();
        AxesFit fit;
        if (xc.size(1) <= xc.size(2)) {
            // Fewer points than dimensions: the Gram matrix's eigenvectors are the coordinates.
            const auto gram = batchedMatmul(xc, xc, /*transposeB=*/true);
            const TopEigen top = topEigen(gram, /*psd=*/true);
            fit.coords = top.vectors * top.values.sqrt().unsqueeze(1);
            fit.explained = shares(top.values, gram.diagonal(0, 1, 2).sum(1).to(torch::kDouble));
        } else {
            // More points than dimensions: the covariance, one matrix product per batch entry
            // (LibTorch's batched product is slower for these tall matrices here).
            std::vector<torch::Tensor> covariances;
            for (int64_t b = 0; b < xc.size(0); ++b) {
                covariances.push_back(torch::mm(xc[b].t(), xc[b]));
            }
            const auto covariance = torch::stack(covariances);
            const TopEigen top = topEigen(covariance, /*psd=*/true);
            std::vector<torch::Tensor> coords;
            const auto axes = top.vectors.to(torch::kFloat);
            for (int64_t b = 0; b < xc.size(0); ++b) {
                coords.push_back(torch::mm(xc[b], axes[b]));
            }
            fit.coords = torch::stack(coords).to(torch::kDouble);
            fit.explained =
                shares(top.values, covariance.diagonal(0, 1, 2).sum(1).to(torch::kDouble));
        }
        return fit;
    });
}

AxesFit classicalMds(const torch::Tensor& d) {
    TORCH_CHECK((d.dim() == 2 || d.dim() == 3) && d.size(-1) == d.size(-2),
                "classicalMds needs square matrices");
    return maybeBatched(d, 2, [](const torch::Tensor& batch) {
        const auto d2 = batch.to(torch::kDouble).square();
        const auto b = -0.5 * (d2 - d2.mean(2, /*keepdim=*/true) - d2.mean(1, /*keepdim=*/true) +
                               d2.mean({1, 2}, /*keepdim=*/true));
        const TopEigen top = topEigen(0.5 * (b + b.transpose(1, 2)), /*psd=*/false);
        return AxesFit{top.vectors * top.values.sqrt().unsqueeze(1),
                       shares(top.values, top.positiveSum)};
    });
}

torch::Tensor signByPosition(torch::Tensor& coords, const torch::Tensor& positions) {
    const bool single = coords.dim() == 2;
    auto c = single ? coords.unsqueeze(0) : coords;  // (B, n, 3), a view
    const auto p = positions.to(torch::kDouble);
    const auto pc = (p - p.mean()).view({1, -1, 1});
    const auto cc = c - c.mean(1, /*keepdim=*/true);
    const auto dot = (cc * pc).sum(1);  // (B, 3)
    const auto norms = (cc.square().sum(1) * pc.square().sum()).sqrt();
    c.mul_((1.0 - 2.0 * (dot < 0.0).to(c.dtype())).unsqueeze(1));
    const auto r =
        torch::where(norms > 0.0, dot.abs() / norms.clamp_min(1e-300), torch::zeros_like(dot));
    return single ? r.squeeze(0) : r;
}

std::vector<Projection> projectPca(const std::vector<CaptureSite>& sites,
                                   const torch::Tensor& hidden) {
    const int64_t S = hidden.size(0), P = hidden.size(1), T = hidden.size(2);
    // each prompt centred on its own mean: the axes show how tokens spread within a prompt
    // (positions), not how prompts differ from one another
    const auto h = hidden.to(torch::kFloat);
    AxesFit fit = principalAxes((h - h.mean(2, /*keepdim=*/true)).reshape({S, P * T, -1}));
    const auto r = signByPosition(fit.coords, torch::arange(T, torch::kDouble).repeat({P}));
    return toProjections(sites, ProjectionMethod::Pca, P, T, fit.explained, r.select(1, 0),
                         fit.coords);
}

std::vector<Projection> projectMds(const std::vector<CaptureSite>& sites,
                                   const torch::Tensor& cosines) {
    const int64_t S = cosines.size(0), P = cosines.size(1), T = cosines.size(2);
    AxesFit fit = classicalMds(1.0 - cosines.reshape({S * P, T, T}).to(torch::kDouble));
    const auto r = signByPosition(fit.coords, torch::arange(T, torch::kDouble));
    // per site: the means over its prompts
    return toProjections(sites, ProjectionMethod::Mds, P, T,
                         fit.explained.view({S, P, kProjectionAxes}).mean(1),
                         r.select(1, 0).reshape({S, P}).mean(1), fit.coords);
}

}  // namespace nope
