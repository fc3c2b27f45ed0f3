#include "analysis/projection.h"

#include <algorithm>
#include <cmath>

#include "util/enum_names.h"

namespace nope {

namespace {

constexpr EnumName<ProjectionMethod> kMethods[] = {
    {ProjectionMethod::Pca, "pca"},
    {ProjectionMethod::Mds, "mds"},
};

}  // namespace

std::string toString(ProjectionMethod method) {
    return nameOf(kMethods, method);
}

std::optional<ProjectionMethod> parseProjectionMethod(std::string_view s) {
    return parseName(kMethods, s);
}

const std::vector<std::string>& projectionMethodNames() {
    static const std::vector<std::string> names = {"pca", "mds"};
    return names;
}

const Projection* ProjectionSet::find(CapturePoint point, int layer,
                                      ProjectionMethod method) const {
    for (const auto& p : items) {
        if (p.point == point && p.layer == layer && p.method == method) {
            return &p;
        }
    }
    return nullptr;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
    const size_t n = std::min(x.size(), y.size());
    if (n < 2) {
        return 0.0;
    }
    double mx = 0.0, my = 0.0;
    for (size_t i = 0; i < n; ++i) {
        mx += x[i];
        my += y[i];
    }
    mx /= double(n);
    my /= double(n);
    double sxy = 0.0, sxx = 0.0, syy = 0.0;
    for (size_t i = 0; i < n; ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx <= 0.0 || syy <= 0.0) {
        return 0.0;
    }
    return sxy / std::sqrt(sxx * syy);
}

}  // namespace nope
