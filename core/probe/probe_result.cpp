#include "probe/probe_result.h"

#include <algorithm>
#include <cmath>

namespace nope {

double pearsonR(const std::vector<double>& x, const std::vector<double>& y) {
    const size_t n = std::min(x.size(), y.size());
    if (n < 2) {
        return 0.0;
    }
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; ++i) {
        mx += x[i];
        my += y[i];
    }
    mx /= double(n);
    my /= double(n);
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; ++i) {
        const double dx = x[i] - mx;
        const double dy = y[i] - my;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if (sxx <= 0 || syy <= 0) {
        return 0.0;
    }
    return sxy / std::sqrt(sxx * syy);
}

double nrmse(const std::vector<double>& predicted, const std::vector<double>& targets) {
    const size_t n = std::min(predicted.size(), targets.size());
    if (n == 0) {
        return 0.0;
    }
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
        const double d = predicted[i] - targets[i];
        sum += d * d;
    }
    const auto [lo, hi] = std::minmax_element(targets.begin(), targets.begin() + long(n));
    const double range = *hi - *lo;
    return range > 0 ? std::sqrt(sum / double(n)) / range : 0.0;
}

const ProbeResult* ProbeReport::find(CapturePoint point, int layer, ProbeFeature feature) const {
    for (const auto& r : results) {
        if (r.point == point && r.layer == layer && r.feature == feature) {
            return &r;
        }
    }
    return nullptr;
}

}  // namespace nope
