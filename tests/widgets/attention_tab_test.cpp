// The Attention tab and the Mechanism tab's ablation panel, headless, on synthetic value types:
// one heatmap per head of the chosen layer, the per-head numbers beside uniform attention's, the
// curves over training; the ablation table's rows, columns and shading, a row's heatmaps.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>

#include "widgets/ablation_panel.h"
#include "widgets/attention_tab.h"
#include "widgets/heatmap_grid.h"
#include "widgets/qcp.h"

namespace nope {
namespace {

constexpr int T = 4;

// Uniform causal weights scaled towards the diagonal by `sharp` (0: uniform).
std::vector<float> weights(double sharp) {
    std::vector<float> w(T * T, 0.0f);
    for (int i = 0; i < T; ++i) {
        double sum = 0.0;
        for (int j = 0; j <= i; ++j) {
            sum += std::exp(sharp * j);
        }
        for (int j = 0; j <= i; ++j) {
            w[i * T + j] = static_cast<float>(std::exp(sharp * j) / sum);
        }
    }
    return w;
}

Snapshot snapshot(int step, double sharp, bool withAttention = true) {
    Snapshot s;
    s.step = step;
    s.analysis.seqLen = T;
    s.analysis.samples = 8;
    s.analysis.keptPrompts = {"1+2=", "3+4="};
    if (!withAttention) {
        return s;
    }
    s.analysis.attention.samples = 8;
    s.analysis.attention.seqLen = T;
    for (int layer = 1; layer <= 2; ++layer) {
        for (int head = 0; head < 3; ++head) {
            HeadAttention h;
            h.layer = layer;
            h.head = head;
            h.entropy = 1.0 - 0.1 * step / 100.0 - 0.01 * head;
            h.meanDistance = 0.75 - 0.05 * head;
            h.meanMatrix = weights(sharp * (head + 1));
            h.promptMatrices = {weights(5.0), weights(-5.0)};
            s.analysis.attention.heads.push_back(h);
        }
    }
    return s;
}

TEST(AttentionTab, ShowsEveryHeadOfTheChosenLayer) {
    ui::AttentionTab tab;
    const std::vector<Snapshot> history = {snapshot(0, 0.0), snapshot(100, 1.0)};
    tab.setHistory(history, 1);
    ASSERT_EQ(tab.heatmaps()->heatmaps().size(), 3u);  // three heads
    EXPECT_TRUE(tab.heatmaps()->heatmaps()[2].title.startsWith("head 2"));
    EXPECT_EQ(tab.layer(), 1);
    EXPECT_FLOAT_EQ(tab.heatmaps()->heatmaps()[0].values[3 * T + 3], weights(1.0)[3 * T + 3]);
    // the numbers: three heads and uniform causal attention's, mean of ln(i + 1)
    ASSERT_EQ(tab.table()->rowCount(), 4);
    const double uniform = (std::log(1.0) + std::log(2.0) + std::log(3.0) + std::log(4.0)) / 4;
    EXPECT_EQ(tab.table()->item(3, 1)->text(), QString::number(uniform, 'f', 3));
    EXPECT_EQ(tab.tableData().rows.size(), 4);
    EXPECT_EQ(tab.tableData().header.front(), "layer");  // the export names the layer
    // the curves: a line per head over the two snapshots, and uniform's
    ASSERT_EQ(tab.entropyPlot()->graphCount(), 4);
    EXPECT_EQ(tab.entropyPlot()->graph(0)->data()->size(), 2);
    EXPECT_DOUBLE_EQ(tab.entropyPlot()->graph(0)->data()->at(1)->value, 0.9);
    EXPECT_EQ(tab.distancePlot()->graphCount(), 4);

    QSignalSpy changed(&tab, &ui::AttentionTab::choiceChanged);
    tab.setLayer(2);
    EXPECT_EQ(changed.size(), 1);
    tab.setPrompt(1);  // the second kept prompt, its characters on the axes
    tab.setHistory(history, 1);
    EXPECT_EQ(tab.prompt(), 1);
    EXPECT_EQ(tab.heatmaps()->heatmaps()[0].tokens.size(), T);
    EXPECT_FLOAT_EQ(tab.heatmaps()->heatmaps()[0].values[3 * T + 0], weights(-5.0)[3 * T + 0]);
}

TEST(AttentionTab, SaysWhenASnapshotHasNoAttention) {
    ui::AttentionTab tab;
    tab.setHistory({snapshot(0, 0.0, false)}, 0);
    EXPECT_TRUE(tab.heatmaps()->heatmaps().empty());
    EXPECT_EQ(tab.table()->rowCount(), 0);
    tab.setHistory({}, -1);
    EXPECT_TRUE(tab.heatmaps()->heatmaps().empty());
}

AblationTable table() {
    AblationTable t;
    t.samples = 8;
    t.seqLen = T;
    for (Ablation a : {Ablation::Softmax, Ablation::Uniform, Ablation::VOut}) {
        AblationResult r;
        r.ablation = a;
        r.analysis.seqLen = T;
        const double score = a == Ablation::VOut ? 0.4 : 0.99;
        for (auto [point, layer] :
             {std::pair{CapturePoint::Embedding, 0}, std::pair{CapturePoint::Attn, 1},
              std::pair{CapturePoint::Attn, 2}, std::pair{CapturePoint::Resid, 1},
              std::pair{CapturePoint::Resid, 2}}) {
            LayerScores row;
            row.point = point;
            row.layer = layer;
            row.adjacencyMean = layer == 0 ? 0.5 : (point == CapturePoint::Resid ? 0.7 : score);
            row.meanMatrix = std::vector<float>(T * T, static_cast<float>(row.adjacencyMean));
            r.analysis.rows.push_back(row);
        }
        t.results.push_back(r);
    }
    return t;
}

TEST(AblationPanel, TabulatesTheAblationsAndDrawsARow) {
    ui::AblationPanel panel;
    QSignalSpy asked(&panel, &ui::AblationPanel::runRequested);
    panel.runButton()->click();
    ASSERT_EQ(asked.size(), 1);
    const auto config = asked.front().front().value<AblationConfig>();
    EXPECT_EQ(config.ablations.size(), allAblations().size());
    EXPECT_DOUBLE_EQ(config.shrinkX, 10.0);
    EXPECT_FALSE(config.asAuthors);
    EXPECT_EQ(asked.front().at(1).toInt(), 256);

    panel.showTable(table());
    ASSERT_EQ(panel.table()->rowCount(), 3);
    ASSERT_EQ(panel.table()->columnCount(), 4);  // ablation, embedding, attn layers 1 and 2
    EXPECT_EQ(panel.table()->item(2, 0)->text(), "v_out");
    EXPECT_EQ(panel.table()->item(2, 3)->text(), "0.4000");
    EXPECT_NE(panel.table()->item(2, 3)->background(), panel.table()->item(0, 3)->background());
    EXPECT_TRUE(panel.table()->item(1, 0)->toolTip().contains("earlier tokens"));
    panel.select(Ablation::VOut);
    ASSERT_EQ(panel.heatmaps()->heatmaps().size(), 3u);  // embedding, layers 1 and 2
    EXPECT_TRUE(panel.heatmaps()->heatmaps()[1].title.startsWith("v_out layer 1"));
    panel.setPoint(CapturePoint::Resid);
    EXPECT_EQ(panel.table()->item(0, 2)->text(), "0.7000");
    EXPECT_TRUE(panel.tableData().header.contains("resid layer 2"));
    EXPECT_EQ(panel.selected(), Ablation::VOut);  // the selection survives the redraw
}

}  // namespace
}  // namespace nope
