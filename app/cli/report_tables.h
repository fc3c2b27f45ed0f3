// The tables of `nopescope-cli reproduce`'s report.md, in the paper's layout, from the results of
// its sweeps (study/results.h): each cell the mean over seeds and its standard deviation.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "study/results.h"

namespace nope::cli {

// The summary row of given axis values (by axis name), stage, point and layer, or nullptr.
const study::SummaryRow* findRow(const study::SweepResults& results,
                                 const std::map<std::string, std::string>& values,
                                 const std::string& stage, const std::string& point, int layer);

// "0.986 ± 0.004" (mean ± sd over seeds), "-" when missing.
std::string scoreCell(const study::SummaryRow* row);

// Adjacency per layer (embedding, attn 1..L) for each task and stage, NoPE with causal
// attention: `init` holds each task's init sweep (the default model), `trained` its trained
// sweep when there is one (its model at init and trained); the models are named in a column.
// A layer a model does not have is "-".
std::string layerTable(const std::map<std::string, study::SweepResults>& init,
                       const std::map<std::string, study::SweepResults>& trained,
                       const std::string& initModel, const std::string& trainedModel);
// The controls at init per task: causal or bidirectional attention, no or learned PE.
std::string controlsTable(const std::map<std::string, study::SweepResults>& init);
// Layers x widths: layer 1, the middle layer, the last layer and the mean over layers.
std::string sizeTable(const study::SweepResults& sizes);
// Init mean x std: every layer.
std::string initTable(const study::SweepResults& init);
// The probes at init: per feature (vector, variance, cosine) and layer, Pearson R and NRMSE, with
// causal and with bidirectional attention.
std::string probeTable(const study::SweepResults& probes);

}  // namespace nope::cli
