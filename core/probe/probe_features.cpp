#include "probe/probe_features.h"

#include "analysis/analyzer.h"

namespace nope {

int64_t probeFeatureSize(ProbeFeature feature, int64_t dim, int64_t length) {
    switch (feature) {
        case ProbeFeature::Vector:
            return dim;
        case ProbeFeature::CosineRow:
            return length;
        case ProbeFeature::Variance:
        case ProbeFeature::Norm:
        case ProbeFeature::Cosine:
            return 1;
    }
    return 1;
}

torch::Tensor probeFeature(const torch::Tensor& hidden, ProbeFeature feature) {
    const auto h = hidden.to(torch::kFloat);  // (N, T, C)
    switch (feature) {
        case ProbeFeature::Vector:
            return h.contiguous();
        case ProbeFeature::Variance:
            return h.var(/*dim=*/-1, /*unbiased=*/false, /*keepdim=*/true);  // (N, T, 1)
        case ProbeFeature::Norm:
            return h.norm(2, /*dim=*/-1, /*keepdim=*/true);  // (N, T, 1)
        case ProbeFeature::Cosine: {
            const int64_t T = h.size(1);
            return selfCosine(h).select(1, T - 1).unsqueeze(-1).contiguous();  // (N, T, 1)
        }
        case ProbeFeature::CosineRow: {
            const int64_t T = h.size(1);
            const auto past = torch::ones({T, T}, torch::kFloat).tril();  // j <= p
            return (selfCosine(h) * past).contiguous();                   // (N, T, T)
        }
    }
    return h;
}

torch::Tensor probeTargets(int64_t strings, int64_t length, ProbeFeature feature) {
    auto positions = torch::arange(length, torch::kFloat);
    if (feature == ProbeFeature::Cosine) {
        positions = float(length - 1) - positions;
    }
    return positions.unsqueeze(0).expand({strings, length}).contiguous();
}

}  // namespace nope
