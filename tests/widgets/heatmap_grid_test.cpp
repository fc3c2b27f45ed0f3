// The heatmap grid and the number axes of the plots at the sizes people see them: one colour
// scale for grids compared side by side, token labels that never overlap however long the prompt,
// and number ticks kept apart as a plot narrows.
#include <gtest/gtest.h>

#include <QCoreApplication>

#include "widgets/curve_panel.h"
#include "widgets/heatmap_grid.h"
#include "widgets/plot_style.h"
#include "widgets/qcp.h"

namespace nope {
namespace {

// A T x T map whose values run from `lo` at the diagonal's start to `hi`.
ui::Heatmap ramp(int T, float lo, float hi, bool tokens = false) {
    ui::Heatmap h;
    h.title = "layer";
    h.size = T;
    h.values.resize(static_cast<size_t>(T) * T);
    for (int i = 0; i < T; ++i) {
        for (int j = 0; j < T; ++j) {
            h.values[static_cast<size_t>(i) * T + j] = lo + (hi - lo) * float(i + j) / (2 * T - 2);
        }
    }
    for (int t = 0; tokens && t < T; ++t) {
        h.tokens << QString(QChar('a' + t % 26));
    }
    return h;
}

// Lays the plot out and draws it twice: what the layout decides takes effect in the next replot.
void draw(QCustomPlot* plot) {
    for (int round = 0; round < 3; ++round) {
        plot->replot();
        QCoreApplication::processEvents();
    }
}

TEST(HeatmapGrid, GridsComparedShareOneColourScale) {
    ui::HeatmapGrid a, b;
    a.setHeatmaps({ramp(6, 0.2f, 0.9f)});
    b.setHeatmaps({ramp(6, -0.4f, 0.5f)});
    ASSERT_TRUE(a.valueRange() && b.valueRange());
    EXPECT_NEAR(a.valueRange()->first, 0.2, 1e-6);
    EXPECT_NEAR(b.valueRange()->first, -0.4, 1e-6);
    EXPECT_NE(a.colourRange(), b.colourRange());  // each its own until they are compared
    const std::pair<double, double> both{-0.4, 0.9};
    a.setSharedRange(both);
    b.setSharedRange(both);
    EXPECT_EQ(a.colourRange(), b.colourRange());
    EXPECT_NEAR(a.colourRange().first, -0.4, 1e-6);
    EXPECT_NEAR(a.colourRange().second, 0.9, 1e-6);
    a.setFixedRange(true);  // the fixed [-1, 1] wins
    EXPECT_EQ(a.colourRange(), std::make_pair(-1.0, 1.0));
    b.setSharedRange(std::nullopt);
    EXPECT_NEAR(b.colourRange().second, 0.5, 1e-6);
}

TEST(HeatmapGrid, TokenLabelsNeverOverlap) {
    ui::HeatmapGrid small;
    small.resize(360, 300);
    small.show();
    small.setHeatmaps({ramp(48, 0.f, 1.f, /*tokens=*/true)});
    draw(small.plot());
    QCPAxis* x = small.plot()->axisRects().front()->axis(QCPAxis::atTop);
    const QVector<double> ticks = x->tickVector();
    ASSERT_GE(ticks.size(), 2);
    const double apart = std::abs(x->coordToPixel(ticks[1]) - x->coordToPixel(ticks[0]));
    EXPECT_GE(apart, 10.0) << ticks.size() << " labels";  // one 7-point label's room
    EXPECT_LT(ticks.size(), 48);

    ui::HeatmapGrid large;
    large.resize(1400, 1400);
    large.show();
    large.setHeatmaps({ramp(48, 0.f, 1.f, /*tokens=*/true)});
    draw(large.plot());
    EXPECT_EQ(large.plot()->axisRects().front()->axis(QCPAxis::atTop)->tickVector().size(), 48);
}

TEST(PlotStyle, NumberTicksStayApartAsAPlotNarrows) {
    ui::CurvePanel curves;
    Snapshot s;
    s.analysis.rows.push_back(LayerScores{});
    s.analysis.rows.back().point = CapturePoint::Attn;
    s.analysis.rows.back().layer = 1;
    std::vector<Snapshot> history;
    for (int step = 0; step <= 4000; step += 250) {
        s.step = step;
        history.push_back(s);
    }
    curves.setHistory(history, {}, {}, CapturePoint::Attn, 4000);
    curves.show();
    for (int width : {200, 1200}) {
        curves.resize(width, 500);
        QCustomPlot* plot = curves.adjacencyPlot();
        draw(plot);
        const QVector<double> ticks = plot->xAxis->tickVector();
        ASSERT_GE(ticks.size(), 2) << width;
        const double apart =
            std::abs(plot->xAxis->coordToPixel(ticks[1]) - plot->xAxis->coordToPixel(ticks[0]));
        EXPECT_GE(apart, ui::kTickSpacingAcross / 2.0) << width;  // "1,000" fits between
    }
}

}  // namespace
}  // namespace nope
