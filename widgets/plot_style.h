// Colours shared by every plot: the heatmap gradient, per-layer line colours, and restyling of a
// QCustomPlot for the light or the dark palette so that plots stay readable in both.
#pragma once

#include <QColor>
#include <QPalette>

class QCustomPlot;
class QCPColorGradient;

namespace nope::ui {

// Dark blue (low) through teal and green to yellow (high); NaN cells are transparent.
QCPColorGradient heatmapGradient();

// A distinct colour for curve i of n (layer 0 = embedding is grey).
QColor layerColor(int layer, int layers, bool dark);

// Background, axes, grid, text and legend colours from the palette.
void applyPlotTheme(QCustomPlot* plot, const QPalette& palette);

bool isDark(const QPalette& palette);

}  // namespace nope::ui
