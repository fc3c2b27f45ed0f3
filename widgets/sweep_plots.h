// The figures of a sweep's summary (study/results.h), shared by the window's Sweep tab and the
// report that `nopescope --report` renders:
//   a heatmap of the adjacency score over two swept settings for one layer, each cell labelled
//   with its mean and 95% interval over seeds;
//   lines over one swept setting, one line per layer, with the 95% interval as error bars.
// Settings not on the plot are held at one value each (`fixed`). Draws value types only.
#pragma once

#include <QString>

#include <map>
#include <string>
#include <vector>

#include "study/results.h"

class QCustomPlot;

namespace nope::ui {

struct SweepSelection {
    std::string stage = "init";  // "init" or "trained"
    std::string point = "attn";
    int layer = 1;                        // the heatmap's layer
    std::map<size_t, std::string> fixed;  // axis index -> the value the other axes are held at
};

// The summary rows at one stage and point (and the embedding's, layer 0) with every axis not in
// `free` at its fixed value (the first value of an axis that has none).
std::vector<const study::SummaryRow*> selectRows(const study::SweepResults& results,
                                                 const SweepSelection& selection,
                                                 const std::vector<size_t>& free);

// The distinct values of an axis (by its index), in the order the runs have them.
std::vector<std::string> axisValues(const study::SweepResults& results, size_t axis);

// Draws the score over axes x and y (y may equal x for a one-axis sweep: one row). Returns what
// is missing, empty when the figure is complete.
QString drawScoreHeatmap(QCustomPlot* plot, const study::SweepResults& results, size_t x, size_t y,
                         const SweepSelection& selection);
// Draws one line per layer over axis x, error bars the 95% interval over seeds.
QString drawScoreLines(QCustomPlot* plot, const study::SweepResults& results, size_t x,
                       const SweepSelection& selection);

}  // namespace nope::ui
