#include "model/capture_point.h"

namespace nope {

const std::vector<CapturePoint>& allCapturePoints() {
    static const std::vector<CapturePoint> kPoints = {CapturePoint::Embedding, CapturePoint::AttnIn,
                                                      CapturePoint::Attn, CapturePoint::Resid};
    return kPoints;
}

std::string toString(CapturePoint point) {
    switch (point) {
        case CapturePoint::Embedding:
            return "embedding";
        case CapturePoint::AttnIn:
            return "attn_in";
        case CapturePoint::Attn:
            return "attn";
        case CapturePoint::Resid:
            return "resid";
    }
    return "?";
}

std::optional<CapturePoint> parseCapturePoint(std::string_view s) {
    for (CapturePoint p : allCapturePoints()) {
        if (toString(p) == s) {
            return p;
        }
    }
    return std::nullopt;
}

std::string capturePointNamesJoined() {
    std::string out;
    for (CapturePoint p : allCapturePoints()) {
        out += (out.empty() ? "" : ", ") + toString(p);
    }
    return out;
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
