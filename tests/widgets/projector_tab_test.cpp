// The Projector tab, headless, on synthetic projections: one panel per layer (or one large),
// the chosen point and method, hover text with the prompt and character, the focused layer's
// first axis against position, the table, and what it says when a snapshot has nothing.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QTableWidget>

#include "tasks/vocab.h"
#include "widgets/plot_style.h"
#include "widgets/projector_tab.h"
#include "widgets/qcp.h"

namespace nope {
namespace {

constexpr int T = 4;
constexpr int kPrompts = 2;
const char* const kPromptTexts[kPrompts] = {"1+2=", "3+4="};

// Point `layer`'s tokens on a line: axis 1 = position + layer / 10, axis 2 = prompt, axis 3 = 0.
Projection projection(CapturePoint point, int layer, ProjectionMethod method) {
    Projection p;
    p.point = point;
    p.layer = layer;
    p.method = method;
    p.explained = {0.6, 0.3, 0.1};
    p.rPosition = 0.9 + 0.01 * layer;
    p.prompts = kPrompts;
    p.seqLen = T;
    for (int n = 0; n < kPrompts; ++n) {
        for (int t = 0; t < T; ++t) {
            p.coords.insert(p.coords.end(), {float(t + 0.1 * layer), float(n), 0.0f});
        }
    }
    return p;
}

Snapshot snapshot(int step, bool withProjection = true) {
    Snapshot s;
    s.step = step;
    s.analysis.seqLen = T;
    s.analysis.samples = 8;
    s.analysis.keptPrompts = {kPromptTexts[0], kPromptTexts[1]};
    for (CapturePoint point : {CapturePoint::Embedding, CapturePoint::Attn}) {
        for (int layer = point == CapturePoint::Embedding ? 0 : 1;
             layer <= (point == CapturePoint::Embedding ? 0 : 2); ++layer) {
            LayerScores row;
            row.point = point;
            row.layer = layer;
            s.analysis.rows.push_back(row);
            if (withProjection) {
                for (ProjectionMethod m : {ProjectionMethod::Pca, ProjectionMethod::Mds}) {
                    s.analysis.projection.items.push_back(projection(point, layer, m));
                }
            }
        }
    }
    if (withProjection) {
        s.analysis.projection.prompts = kPrompts;
        s.analysis.projection.seqLen = T;
        for (const char* text : kPromptTexts) {
            for (int t = 0; t < T; ++t) {
                s.analysis.projection.tokens.push_back(static_cast<int>(vocab::encode(text[t])));
            }
        }
    }
    return s;
}

// The pixel of token (prompt, position) on panel k, once laid out.
QPoint pixelOf(ui::ProjectorTab& tab, int k, int prompt, int position) {
    tab.show();  // laid out: the panels side by side
    QApplication::processEvents();
    tab.scatterPlot()->replot();
    return tab.pixelOf(k, prompt, position).toPoint();
}

TEST(ProjectorTab, OnePanelPerLayerOrOneLarge) {
    ui::ProjectorTab tab;
    tab.resize(1100, 600);
    const std::vector<Snapshot> history = {snapshot(0), snapshot(100)};
    tab.setHistory(history, 1);
    EXPECT_EQ(tab.panelCount(), 3);                     // the embedding and attn's two layers
    EXPECT_EQ(tab.scatterPlot()->graphCount(), 3 * T);  // one graph per position and panel
    ASSERT_EQ(tab.tableData().rows.size(), 3);
    EXPECT_EQ(tab.tableData().rows[1],
              (QStringList{"attn", "1", "pca", "0.6000", "0.3000", "0.1000", "0.9100"}));
    EXPECT_EQ(tab.table()->item(0, 0)->text(), "embedding");
    EXPECT_EQ(tab.table()->item(1, 1)->text(), "60.0%");

    tab.setLayer(2);
    tab.setHistory(history, 1);
    EXPECT_EQ(tab.panelCount(), 1);
    EXPECT_EQ(tab.focusLayer(), 2);
    EXPECT_EQ(tab.tableData().rows.size(), 1);

    tab.setLayer(-1);
    tab.setMethod(ProjectionMethod::Mds);
    tab.setHistory(history, 1);
    EXPECT_EQ(tab.panelCount(), 3);
    EXPECT_EQ(tab.tableData().rows[0][2], "mds");

    tab.setPoint(CapturePoint::Resid);  // not in these snapshots: only the embedding
    tab.setHistory(history, 1);
    EXPECT_EQ(tab.panelCount(), 1);
}

TEST(ProjectorTab, HoverNamesThePromptPositionAndCharacter) {
    ui::ProjectorTab tab;
    tab.resize(1100, 600);
    const std::vector<Snapshot> history = {snapshot(50)};
    tab.setHistory(history, 0);
    const QPoint p = pixelOf(tab, 1, /*prompt=*/1, /*position=*/2);
    EXPECT_EQ(tab.describeAt(p), "attn layer 1, prompt 2 3+4=, position 2 '4': (2.1, 1)");
    EXPECT_EQ(tab.layerAt(p), 1);
    EXPECT_TRUE(tab.describeAt(QPoint(1, 1)).isEmpty());
}

TEST(ProjectorTab, ClickedPanelSetsTheFocusedLayer) {
    ui::ProjectorTab tab;
    tab.resize(1100, 600);
    const std::vector<Snapshot> history = {snapshot(50)};
    tab.setHistory(history, 0);
    EXPECT_EQ(tab.focusLayer(), 1);
    const QPoint p = pixelOf(tab, 2, 0, 0);
    QMouseEvent press(QEvent::MouseButtonPress, QPointF(p),
                      tab.scatterPlot()->mapToGlobal(QPointF(p)), Qt::LeftButton, Qt::LeftButton,
                      Qt::NoModifier);
    QApplication::sendEvent(tab.scatterPlot(), &press);
    EXPECT_EQ(tab.focusLayer(), 2);
    // the position plot: every token and the mean over prompts
    ASSERT_EQ(tab.positionPlot()->graphCount(), 2);
    EXPECT_EQ(tab.positionPlot()->graph(0)->dataCount(), kPrompts * T);
    EXPECT_EQ(tab.positionPlot()->graph(1)->dataCount(), T);
    EXPECT_NEAR(tab.positionPlot()->graph(1)->data()->at(3)->value, 3.2, 1e-6);
}

TEST(ProjectorTab, SaysWhyThereIsNothingToShow) {
    ui::ProjectorTab tab;
    EXPECT_NE(ui::placeholderText(tab.scatterPlot()).indexOf("press Initialize"), -1);
    const std::vector<Snapshot> old = {snapshot(10, /*withProjection=*/false)};
    tab.setHistory(old, 0);
    EXPECT_EQ(tab.panelCount(), 0);
    EXPECT_NE(ui::placeholderText(tab.scatterPlot()).indexOf("before the projector"), -1);
    EXPECT_TRUE(tab.tableData().rows.isEmpty());
    tab.setHistory(old, 5);  // out of range
    EXPECT_EQ(tab.panelCount(), 0);
}

}  // namespace
}  // namespace nope
