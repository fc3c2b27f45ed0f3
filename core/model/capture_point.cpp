#include "model/capture_point.h"

#include "util/enum_names.h"

namespace nope {

const std::vector<CapturePoint>& allCapturePoints() {
    static const std::vector<CapturePoint> kPoints = {CapturePoint::Embedding, CapturePoint::AttnIn,
                                                      CapturePoint::Attn, CapturePoint::Resid};
    return kPoints;
}

namespace {

constexpr EnumName<CapturePoint> kPointNames[] = {{CapturePoint::Embedding, "embedding"},
                                                  {CapturePoint::AttnIn, "attn_in"},
                                                  {CapturePoint::Attn, "attn"},
                                                  {CapturePoint::Resid, "resid"}};

}  // namespace

std::string toString(CapturePoint point) {
    return nameOf(kPointNames, point);
}

std::optional<CapturePoint> parseCapturePoint(std::string_view s) {
    return parseName(kPointNames, s);
}

std::string capturePointNamesJoined() {
    return namesJoined(kPointNames);
}

std::vector<CapturePoint> CaptureSet::points() const {
    std::vector<CapturePoint> out;
    for (CapturePoint p : allCapturePoints()) {
        if (contains(p)) {
            out.push_back(p);
        }
    }
    return out;
}

std::vector<CaptureSite> captureSites(const CaptureSet& points, int layers) {
    std::vector<CaptureSite> sites;
    for (CapturePoint p : points.points()) {
        if (p == CapturePoint::Embedding) {
            sites.push_back({p, 0});
        } else {
            for (int l = 1; l <= layers; ++l) {
                sites.push_back({p, l});
            }
        }
    }
    return sites;
}

}  // namespace nope
