#include "analysis/state_stats.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "model/fast_ops.h"

namespace nope {

VectorStats vectorStats(const torch::Tensor& h) {
    TORCH_CHECK(h.scalar_type() == torch::kFloat && h.is_contiguous() && h.device().is_cpu(),
                "vectorStats takes contiguous float states on the CPU");
    const int64_t D = h.size(-1);
    VectorStats s;
    s.norms = torch::empty(h.sizes().slice(0, h.dim() - 1), h.options());
    s.variances = torch::empty_like(s.norms);
    const int64_t rows = s.norms.numel();
    const double count = double(std::max<int64_t>(D, 1));
    const float* x = h.data_ptr<float>();
    float* norms = s.norms.data_ptr<float>();
    float* variances = s.variances.data_ptr<float>();
    std::atomic<bool> finite{true}, safe{true};
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        constexpr int L = 4;  // independent sums: the loop is not one chain of additions
        const auto total = [](const double(&parts)[L]) {
            return parts[0] + parts[1] + parts[2] + parts[3];
        };
        bool chunkFinite = true, chunkSafe = true;
        for (int64_t r = begin; r < end; ++r) {
            const float* row = x + r * D;
            double sum[L] = {}, squares[L] = {};
            int64_t d = 0;
            for (; d + L <= D; d += L) {
                for (int l = 0; l < L; ++l) {
                    const double value = row[d + l];
                    sum[l] += value;
                    squares[l] += value * value;
                }
            }
            for (; d < D; ++d) {
                sum[0] += row[d];
                squares[0] += double(row[d]) * row[d];
            }
            const double mean = total(sum) / count;
            const double square = total(squares);
            double centred[L] = {};
            for (d = 0; d + L <= D; d += L) {
                for (int l = 0; l < L; ++l) {
                    const double c = row[d + l] - mean;
                    centred[l] += c * c;
                }
            }
            for (; d < D; ++d) {
                centred[0] += (row[d] - mean) * (row[d] - mean);
            }
            const double norm = std::sqrt(square);
            norms[r] = static_cast<float>(norm);
            variances[r] = static_cast<float>(total(centred) / count);
            if (!std::isfinite(square)) {
                chunkFinite = false;
            } else if (norm != 0.0 && (norm < 1e-15 || norm > 1e15)) {
                chunkSafe = false;
            }
        }
        if (!chunkFinite) {
            finite = false;
        }
        if (!chunkSafe) {
            safe = false;
        }
    });
    s.finite = finite;
    s.gramSafe = finite && safe;
    return s;
}

bool allFinite(const torch::Tensor& h) {
    static_assert(sizeof(float) == sizeof(uint32_t));
    const float* x = h.data_ptr<float>();
    constexpr uint32_t kExponent = 0x7f800000u;
    uint32_t infinite = 0;
    for (int64_t i = 0, n = h.numel(); i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, x + i, sizeof bits);
        infinite |= static_cast<uint32_t>((bits & kExponent) == kExponent);
    }
    return infinite == 0;
}

torch::Tensor cosines(const torch::Tensor& h, const VectorStats& stats) {
    if (stats.gramSafe) {
        // a zero vector has cosine 0 with everything
        const auto inverse = torch::where(stats.norms > 0, 1.0f / stats.norms,
                                          torch::zeros_like(stats.norms));  // (B, T)
        return batchedMatmul(h, h, /*transposeB=*/true) * inverse.unsqueeze(2) *
               inverse.unsqueeze(1);
    }
    // Each vector divided by its largest magnitude first (a cosine does not depend on the scale),
    // so that float32's squares neither overflow nor vanish.
    const auto largest = h.abs().amax(/*dim=*/-1, /*keepdim=*/true);
    const auto scaled = h / torch::where(largest > 0, largest, torch::ones_like(largest));
    const auto unit = scaled / scaled.norm(2, /*dim=*/-1, /*keepdim=*/true).clamp_min(1e-8);
    return batchedMatmul(unit, unit, /*transposeB=*/true);
}

}  // namespace nope
