// The Sweep tab, headless, on a summary made here: the heatmap's cells hold the means over seeds
// at the chosen layer, the lines have a graph per layer with the 95% intervals as error bars,
// settings off the axes are held at one value, the table lists the rows, and an empty sweep
// says so. With NOPESCOPE_SWEEP_PNG=DIR it saves the tab as PNGs into DIR, for a look.
#include <gtest/gtest.h>

#include <QDir>
#include <QTabWidget>

#include "study/results.h"
#include "widgets/qcp.h"
#include "widgets/sweep_tab.h"

namespace nope {
namespace {

// layers 2, 4 by init-std 0.02, 0.2 by two seeds; the score of attn layer l falls with the std
// and the seed moves it by ±0.01.
study::SweepResults syntheticSweep() {
    study::Manifest manifest;
    manifest.grid = study::parseGrid("layers=2,4 init-std=0.02,0.2");
    manifest.seeds = {1, 2};
    std::vector<study::RunResult> runs;
    size_t index = 0;
    for (const char* layers : {"2", "4"}) {
        for (const char* std : {"0.02", "0.2"}) {
            for (uint64_t seed : manifest.seeds) {
                study::RunResult run;
                run.run = index++;
                run.values = {layers, std};
                run.seed = seed;
                const double base = std::string(std) == "0.02" ? 0.95 : 0.6;
                run.rows.push_back({"init", "embedding", 0, 0.5, 0.01, {}});
                for (int layer = 1; layer <= std::stoi(layers); ++layer) {
                    const double score = base + 0.01 * layer + (seed == 1 ? -0.01 : 0.01);
                    run.rows.push_back({"init", "attn", layer, score, 0.02, {}});
                }
                runs.push_back(run);
            }
        }
    }
    return study::summarize(manifest, std::move(runs));
}

QCPColorMap* colorMapOf(QCustomPlot* plot) {
    for (int i = 0; i < plot->plottableCount(); ++i) {
        if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) {
            return map;
        }
    }
    return nullptr;
}

TEST(SweepTab, HeatmapLinesAndTable) {
    ui::SweepTab tab;
    tab.resize(1100, 800);
    tab.setResults(syntheticSweep(), "/tmp/some-sweep");
    tab.setAxes(1, 0);  // x init-std, y layers
    tab.setLayer(2);
    QCPColorMap* map = colorMapOf(tab.heatmapPlot());
    ASSERT_NE(map, nullptr);
    ASSERT_EQ(map->data()->keySize(), 2);
    ASSERT_EQ(map->data()->valueSize(), 2);
    EXPECT_NEAR(map->data()->cell(0, 0), 0.97, 1e-9);  // std 0.02, 2 layers: 0.95 + 0.02
    EXPECT_NEAR(map->data()->cell(1, 1), 0.62, 1e-9);  // std 0.2, 4 layers
    EXPECT_TRUE(tab.figureProblem().isEmpty()) << tab.figureProblem().toStdString();

    // Lines over init-std with layers held at 2: the embedding and attn 1, 2, with error bars.
    QCustomPlot* lines = tab.linesPlot();
    EXPECT_EQ(lines->graphCount(), 3);
    int bars = 0;
    for (int i = 0; i < lines->plottableCount(); ++i) {
        if (auto* b = qobject_cast<QCPErrorBars*>(lines->plottable(i))) {
            ++bars;
            // attn layers, two seeds at ±0.01: sd 0.01414, half-width t(0.975, 1) sd / sqrt(2)
            // = 0.127; the embedding's seeds agree: 0
            const double expected = b->dataPlottable()->name() == "embedding"
                                        ? 0.0
                                        : 12.706 * 0.0141421 / std::sqrt(2.0);
            EXPECT_NEAR(b->data()->at(0).errorPlus, expected, 1e-3);
        }
    }
    EXPECT_EQ(bars, 3);
    const ui::TableData table = tab.tableData();
    EXPECT_EQ(table.header.front(), "layers");
    EXPECT_EQ(table.rows.size(), 2 * (1 + 2) + 2 * (1 + 4));  // every cell's rows at init
    if (const QByteArray dir = qgetenv("NOPESCOPE_SWEEP_PNG"); !dir.isEmpty()) {
        tab.grab().save(QDir(dir).filePath("sweep_heatmap.png"));
        tab.figures()->setCurrentIndex(1);
        tab.grab().save(QDir(dir).filePath("sweep_lines.png"));
    }
}

TEST(SweepTab, EmptySweepSaysSo) {
    ui::SweepTab tab;
    tab.setResults({}, {});
    EXPECT_FALSE(tab.figureProblem().isEmpty());
    EXPECT_TRUE(tab.tableData().rows.isEmpty());
}

}  // namespace
}  // namespace nope
