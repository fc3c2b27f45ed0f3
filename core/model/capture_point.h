// Where hidden states are read off the model for analysis (no LibTorch here):
//   embedding  the input of the first block: token embedding (plus positional encoding if any)
//   attn_in    block l's LayerNorm output that feeds attention
//   attn       block l's attention output, heads concatenated, before c_proj and the residual add
//              (the paper's "Layer l")
//   resid      the residual stream after block l
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nope {

enum class CapturePoint { Embedding, AttnIn, Attn, Resid };

const std::vector<CapturePoint>& allCapturePoints();
std::string toString(CapturePoint point);
std::optional<CapturePoint> parseCapturePoint(std::string_view s);
std::string capturePointNamesJoined();  // "embedding, attn_in, attn, resid"

// A set of capture points as a bit mask.
class CaptureSet {
public:
    CaptureSet() = default;
    CaptureSet(std::initializer_list<CapturePoint> points) {
        for (CapturePoint p : points) {
            insert(p);
        }
    }
    explicit CaptureSet(const std::vector<CapturePoint>& points) {
        for (CapturePoint p : points) {
            insert(p);
        }
    }
    void insert(CapturePoint p) { m_bits |= bit(p); }
    bool contains(CapturePoint p) const { return (m_bits & bit(p)) != 0; }
    bool empty() const { return m_bits == 0; }
    std::vector<CapturePoint> points() const;  // in the order of allCapturePoints()

private:
    static unsigned bit(CapturePoint p) { return 1u << static_cast<unsigned>(p); }
    unsigned m_bits = 0;
};

// One capture point at one layer (0 for the embedding, 1..L for the others).
struct CaptureSite {
    CapturePoint point;
    int layer;
    bool operator<(const CaptureSite& o) const {
        return point != o.point ? point < o.point : layer < o.layer;
    }
};

// Every site of `points` in a model of `layers` blocks: the embedding once, the others per layer.
std::vector<CaptureSite> captureSites(const CaptureSet& points, int layers);

}  // namespace nope
