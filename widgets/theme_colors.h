// The theme's colours in one place: resources/theme.json, compiled into this library with the
// icons (resources/nopescope.qrc) and read here once. Panels and the window ask for a colour by
// name and palette (light or dark) instead of writing it down; the dark Qt palette of theme.cpp
// comes from the same file. Not the palette switching itself (theme.h) nor plot styling
// (plot_style.h), which use these colours.
#pragma once

#include <QColor>
#include <QPalette>

#include <utility>
#include <vector>

#include "util/enum_names.h"

namespace nope::ui {

// The named colours, each given for the light and the dark palette in theme.json's "colors".
enum class ThemeColor {
    Error,             // invalid input: the form's messages and the border of a bad field
    BannerBackground,  // the window's problem banner
    BannerText,
    StepMarker,  // the shown step's line over the curves (translucent)
    TrainLoss,   // the loss curves
    TestLoss,
    TestAccuracy,
    EmbeddingCurve,  // layer 0's adjacency curve (layers 1..L: layerHues)
    Grid,            // plot grid lines and legend borders
};

// The names are theme.json's keys.
inline constexpr EnumName<ThemeColor> kThemeColorNames[] = {
    {ThemeColor::Error, "error"},
    {ThemeColor::BannerBackground, "bannerBackground"},
    {ThemeColor::BannerText, "bannerText"},
    {ThemeColor::StepMarker, "stepMarker"},
    {ThemeColor::TrainLoss, "trainLoss"},
    {ThemeColor::TestLoss, "testLoss"},
    {ThemeColor::TestAccuracy, "testAccuracy"},
    {ThemeColor::EmbeddingCurve, "embeddingCurve"},
    {ThemeColor::Grid, "grid"},
};

// A named colour of the light (dark = false) or the dark palette; `isDark(palette())`
// (plot_style.h) tells which one a widget shows. In a style sheet: `themeColor(...).name()`.
QColor themeColor(ThemeColor color, bool dark);

// The colour of probe feature `index` (ProbeFeature's order; wraps around past the last).
QColor probeFeatureColor(int index, bool dark);

// Overlaid runs (the Compare tab): run `index`'s colour, from a list of distinct ones that comes
// round again past its last, and how many it holds (runCurveStyle tells the rounds apart).
QColor runCurveColor(int index, bool dark);
int runCurveColors();

// Per-layer curve colours: hue from `first` (layer 1) to `last` (layer L) at this saturation and
// value (HSV, 0..1).
struct LayerHues {
    double first = 0.0;
    double last = 0.0;
    double saturation = 0.0;
    double value = 0.0;
};
LayerHues layerHues(bool dark);

// The similarity heatmap's colour stops, (position in 0..1, colour), by position.
std::vector<std::pair<double, QColor>> heatmapStops();

// Sets the palette roles theme.json gives for the light or dark theme over `palette`.
void applyThemePalette(QPalette& palette, bool dark);

// Registers the compiled resources (:/theme.json, :/icons/...) with Qt; idempotent. The functions
// above call it themselves; call it before loading an icon from the resources.
void initResources();

}  // namespace nope::ui
