// The results of a probe run as plain values (no LibTorch): what crosses threads, goes into
// snapshots and files, and what the Probes panel draws.
#pragma once

#include <string>
#include <vector>

#include "model/capture_point.h"
#include "probe/probe_config.h"

namespace nope {

// Pearson correlation of two equally long series; 0 when either is constant.
double pearsonR(const std::vector<double>& x, const std::vector<double>& y);
// Root mean squared error divided by the range (max - min) of the targets; 0 for a constant one.
double nrmse(const std::vector<double>& predicted, const std::vector<double>& targets);

struct ProbeResult {
    CapturePoint point = CapturePoint::Attn;
    int layer = 0;  // 0 for the embedding
    ProbeFeature feature = ProbeFeature::Vector;
    double pearsonR = 0;      // on the test strings
    double nrmse = 0;         // on the test strings
    double controlR = 0;      // the same probe trained on shuffled targets (NaN without controls)
    double controlNrmse = 0;  // its NRMSE against the true targets
    double trainLoss = 0;     // last epoch's mean training MSE
    // Test targets and predictions of the first keepPredictions test strings, for scatter plots.
    std::vector<float> truth;
    std::vector<float> predicted;
};

struct ProbeReport {
    ProbeConfig config;
    int sequenceLength = 0;  // T
    int trainStrings = 0;
    int testStrings = 0;
    std::vector<ProbeResult> results;  // by point, layer, then feature
    double seconds = 0;                // wall time of the whole run
    bool cancelled = false;            // stopped early: results hold what finished

    bool empty() const { return results.empty(); }
    // The result of one probe, or nullptr.
    const ProbeResult* find(CapturePoint point, int layer, ProbeFeature feature) const;
};

}  // namespace nope
