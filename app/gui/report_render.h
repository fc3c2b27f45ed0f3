// The figures of `nopescope-cli reproduce`'s report, drawn with the window's own plots
// (widgets/sweep_plots.h, widgets/heatmap_grid.h) without showing the window: `nopescope
// --report DIR` reads DIR/report.json and each part's sweep, and writes DIR/figures/*.png (at
// twice the size on screen) and *.svg:
//   layers_by_task        the score per layer, one line per task, init solid, trained dashed
//   figure1_<task>        the mean heatmaps at init (top row) and trained (bottom row)
//   sizes_layer1          layer 1's score over layers x widths
//   init_scheme_layer1    layer 1's score over init mean x std
#pragma once

#include <QString>

namespace nope::gui {

// Returns false, printing why on stderr, when the folder holds no study or a figure failed.
bool renderReport(const QString& dir);

}  // namespace nope::gui
