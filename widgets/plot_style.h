// Colours shared by every plot: the heatmap gradient, per-layer line colours, and restyling of a
// QCustomPlot for the light or the dark palette so that plots stay readable in both.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

class QCustomPlot;
class QCPColorGradient;

namespace nope::ui {

// theme.json's heatmap stops: dark blue (low) through teal and green to yellow (high); NaN cells
// are transparent.
QCPColorGradient heatmapGradient();

// A distinct colour for curve i of n (layer 0 = embedding is grey), from theme.json.
QColor layerColor(int layer, int layers, bool dark);

// Background, axes, grid, text and legend colours from the palette.
void applyPlotTheme(QCustomPlot* plot, const QPalette& palette);

bool isDark(const QPalette& palette);

// A short centred text instead of the plot's axes while it has nothing to show (an empty `text`
// brings the axes back). The text follows the palette; the caller replots.
void showPlaceholder(QCustomPlot* plot, const QString& text);
// The placeholder shown now, empty when none (for tests).
QString placeholderText(const QCustomPlot* plot);

// Keeps the tick labels of the plot's number axes apart as it is resized: each axis gets as many
// ticks as its length leaves room for (a label about every 90 pixels across, 40 down), checked
// after every layout. Axes with ticks of their own (fixed steps, text, matrices) are left alone.
void keepTicksApart(QCustomPlot* plot);
// The minimum spacing of the labels keepTicksApart() keeps, in pixels.
inline constexpr int kTickSpacingAcross = 90;
inline constexpr int kTickSpacingDown = 40;

}  // namespace nope::ui
