#include "analysis/projection.h"

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

}  // namespace nope
