// The Compare tab, headless, on run folders written here: the browser lists them with their
// task, steps and best accuracy; ticking runs overlays their curves and fills the score table;
// the side-by-side view shows two snapshots and their difference, cell by cell. With
// NOPESCOPE_COMPARE_PNG=DIR it saves the tab as a PNG into DIR, for a look.
#include <gtest/gtest.h>

#include <QDir>
#include <QTabWidget>
#include <QTableWidget>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/test_folder.h"
#include "run/run_folder.h"
#include "run/snapshot_io.h"
#include "util/files.h"
#include "widgets/compare_curves.h"
#include "widgets/compare_tab.h"
#include "widgets/heatmap_grid.h"
#include "widgets/qcp.h"
#include "widgets/run_browser.h"
#include "widgets/side_by_side.h"
#include "widgets/theme_colors.h"

namespace nope {
namespace {

namespace fs = std::filesystem;

constexpr int kT = 6;  // tokens per prompt

// A matrix whose cosine falls with distance at `rate`: the adjacency pattern, sharper as rate
// grows.
std::vector<float> decaying(double rate) {
    std::vector<float> m(kT * kT);
    for (int i = 0; i < kT; ++i) {
        for (int j = 0; j < kT; ++j) {
            m[i * kT + j] = static_cast<float>(std::exp(-rate * std::abs(i - j)));
        }
    }
    return m;
}

Snapshot snapshotAt(int step, double score, double rate) {
    Snapshot s;
    s.step = step;
    s.analysis.samples = 8;
    s.analysis.seqLen = kT;
    for (int layer = 0; layer <= 2; ++layer) {
        LayerScores row;
        row.point = layer == 0 ? CapturePoint::Embedding : CapturePoint::Attn;
        row.layer = layer;
        row.adjacencyMean = layer == 0 ? 0.5 : score + 0.01 * layer;
        row.meanMatrix = decaying(rate * layer);
        s.analysis.rows.push_back(row);
    }
    return s;
}

// A run folder as the trainer writes it, with snapshots at steps 0 and 100.
void writeRun(const fs::path& dir, const std::string& task, double finalScore, double accuracy) {
    nlohmann::json config = {{"task", task},
                             {"preset", "quick"},
                             {"model", {{"n_layer", 2}, {"n_embd", 32}, {"positional", "none"}}},
                             {"train", {{"steps", 100}}}};
    writeFileAtomic(dir / RunFiles::kConfig, config.dump());
    writeFileAtomic(dir / RunFiles::kMetrics, std::string(kMetricsCsvHeader) +
                                                  "\n0,,4.5,0,0,0,0,0\n50,2.0,2.1,20,0,0,1,50\n" +
                                                  "100,1.0,1.1," + std::to_string(accuracy) +
                                                  ",0,0,2,100\n");
    std::string adjacency = std::string(kAdjacencyCsvHeader) + "\n";
    for (int step : {0, 50, 100}) {
        const double score = 0.6 + (finalScore - 0.6) * step / 100.0;
        adjacency += std::to_string(step) + ",embedding,0,0.5,0.01\n";
        for (int layer = 1; layer <= 2; ++layer) {
            adjacency += std::to_string(step) + ",attn," + std::to_string(layer) + "," +
                         std::to_string(score + 0.01 * layer) + ",0.02\n";
        }
    }
    writeFileAtomic(dir / RunFiles::kAdjacency, adjacency);
    writeFileAtomic(dir / RunFiles::kFinalScores,
                    std::string(kFinalScoresCsvHeader) + "\ninit,attn,1,0.61,0.02,0,0,8\n" +
                        "trained,attn,1," + std::to_string(finalScore) + ",0.02,0,0,8\n");
    for (const Snapshot& s : {snapshotAt(0, 0.6, 0.1), snapshotAt(100, finalScore, 0.8)}) {
        writeFileAtomic(dir / RunFiles::kSnapshots / snapshotFileName(s.step), toJson(s).dump());
    }
}

class CompareTabTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_folder = std::make_unique<test::TestFolder>("compare");
        m_root = m_folder->path();
        writeRun(m_root / "run-a", "reversal", 0.9, 80.0);
        writeRun(m_root / "run-b", "reversal", 0.7, 40.0);
        fs::create_directories(m_root / "not-a-run");
    }
    void TearDown() override { m_folder.reset(); }
    std::unique_ptr<test::TestFolder> m_folder;
    fs::path m_root;
};

TEST_F(CompareTabTest, ListsRunsAndOverlaysTheTicked) {
    ui::CompareTab tab;
    tab.resize(1100, 900);
    tab.browser()->setRoot(QString::fromStdString(m_root.string()));
    ASSERT_EQ(tab.browser()->runs().size(), 2u);  // the folder without config.json is no run
    QTableWidget* table = tab.browser()->table();
    EXPECT_EQ(table->item(0, 1)->text(), "reversal");
    EXPECT_EQ(table->item(0, 4)->text(), "100 / 100");
    EXPECT_TRUE(table->item(0, 5)->text() == "80.0%" || table->item(0, 5)->text() == "40.0%");

    tab.browser()->setChecked(0, true);
    tab.browser()->setChecked(1, true);
    ui::CompareCurves* curves = tab.curves();
    EXPECT_EQ(curves->adjacencyPlot()->graphCount(), 2);  // layer 1 of each run
    EXPECT_EQ(curves->accuracyPlot()->graphCount(), 2);
    curves->setLayer(-1);  // every layer: embedding, 1, 2
    EXPECT_EQ(curves->adjacencyPlot()->graphCount(), 6);
    const ui::TableData scores = curves->tableData();
    ASSERT_EQ(scores.rows.size(), 4);  // init and trained of each run
    EXPECT_EQ(scores.rows[0][2], "init");
    EXPECT_EQ(scores.rows[1][2], "trained");
    EXPECT_EQ(scores.header[3], "prompts");  // final_scores.csv's, which the window's table
    EXPECT_EQ(scores.rows[0][3], "8");       // names too: a difference says why
    EXPECT_EQ(scores.header[5], "attn 1");
    EXPECT_TRUE(scores.rows[1][5] == "0.900" || scores.rows[1][5] == "0.700");
    EXPECT_TRUE(tab.problem().isEmpty());
}

// Over wall time each run's points sit at its elapsed_s (0, 1 and 2 s at steps 0, 50 and 100),
// in minutes, the adjacency's snapshot steps placed on the same clock.
TEST_F(CompareTabTest, CurvesOverWallTimeUseEachRunsElapsedSeconds) {
    ui::CompareTab tab;
    tab.resize(1100, 900);
    tab.browser()->setRoot(QString::fromStdString(m_root.string()));
    tab.browser()->setChecked(0, true);
    ui::CompareCurves* curves = tab.curves();
    auto keys = [](QCustomPlot* plot) {
        std::vector<double> x;
        for (auto it = plot->graph(0)->data()->constBegin();
             it != plot->graph(0)->data()->constEnd(); ++it) {
            x.push_back(it->key);
        }
        return x;
    };
    EXPECT_EQ(curves->xAxis(), ui::CompareCurves::XAxis::Step);
    EXPECT_EQ(keys(curves->accuracyPlot()), (std::vector<double>{0, 50, 100}));
    curves->setXAxis(ui::CompareCurves::XAxis::Minutes);
    for (QCustomPlot* plot : {curves->accuracyPlot(), curves->adjacencyPlot()}) {
        const std::vector<double> x = keys(plot);
        ASSERT_EQ(x.size(), 3u);
        EXPECT_DOUBLE_EQ(x[0], 0.0);
        EXPECT_DOUBLE_EQ(x[1], 1.0 / 60.0);
        EXPECT_DOUBLE_EQ(x[2], 2.0 / 60.0);
        EXPECT_EQ(plot->xAxis->label(), "wall time (minutes)");
    }
    curves->setXAxis(ui::CompareCurves::XAxis::Step);
    EXPECT_EQ(keys(curves->adjacencyPlot()), (std::vector<double>{0, 50, 100}));
    EXPECT_EQ(curves->adjacencyPlot()->xAxis->label(), "step");
}

// Many runs overlaid: each keeps a look of its own (the run colours, and past their first round
// another line style and marker), however many there are.
TEST(CompareCurves, EveryRunOfManyLooksDifferent) {
    std::vector<ui::ComparedRun> runs(23);
    for (size_t r = 0; r < runs.size(); ++r) {
        runs[r].summary.name = "run " + std::to_string(r);
        runs[r].curves.evalSteps = {0, 100};
        runs[r].curves.evalAccuracy = {0.0, double(r)};
        runs[r].curves.evalTestLoss = {1.0, 0.5};
        runs[r].curves.evalSeconds = {0.0, 60.0};
    }
    ui::CompareCurves curves;
    curves.setRuns(runs);
    QCustomPlot* plot = curves.accuracyPlot();
    ASSERT_EQ(plot->graphCount(), 23);
    std::set<std::tuple<QRgb, int, int>> looks;
    std::set<QRgb> firstRound;
    for (int g = 0; g < plot->graphCount(); ++g) {
        const QCPGraph* graph = plot->graph(g);
        looks.insert({graph->pen().color().rgb(), int(graph->pen().style()),
                      int(graph->scatterStyle().shape())});
        if (g < ui::runCurveColors()) {
            firstRound.insert(graph->pen().color().rgb());
        }
    }
    EXPECT_EQ(looks.size(), 23u);
    EXPECT_EQ(firstRound.size(), size_t(ui::runCurveColors()));  // no colour twice in a round
    EXPECT_GE(ui::runCurveColors(), 8);
}

TEST_F(CompareTabTest, SideBySideShowsTheDifference) {
    ui::CompareTab tab;
    tab.resize(1100, 900);
    tab.browser()->setRoot(QString::fromStdString(m_root.string()));
    tab.browser()->setChecked(0, true);
    tab.views()->setCurrentIndex(1);
    ui::SideBySide* side = tab.sideBySide();
    // By default the first run at init (A) beside its last snapshot (B).
    ASSERT_EQ(side->grid(0)->heatmaps().size(), 3u);  // embedding, attn 1, attn 2
    ASSERT_EQ(side->grid(1)->heatmaps().size(), 3u);
    ASSERT_EQ(side->grid(2)->heatmaps().size(), 3u);
    const auto a = decaying(0.1 * 2), b = decaying(0.8 * 2);  // layer 2 at steps 0 and 100
    const auto& difference = side->grid(2)->heatmaps()[2].values;
    ASSERT_EQ(difference.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(difference[i], a[i] - b[i], 1e-3) << i;  // snapshots keep 4 decimals
    }
    EXPECT_TRUE(side->message().isEmpty());
    if (const QByteArray dir = qgetenv("NOPESCOPE_COMPARE_PNG"); !dir.isEmpty()) {
        tab.grab().save(QDir(dir).filePath("compare_side_by_side.png"));
        tab.views()->setCurrentIndex(0);
        tab.browser()->setChecked(1, true);
        tab.grab().save(QDir(dir).filePath("compare_curves.png"));
    }
}

// A metrics.csv whose last line a stopped writer cut short: the run is compared without that row,
// and the tab says which row of which file is missing.
TEST_F(CompareTabTest, ATornLastLineIsNamedAndTheRunIsCompared) {
    const fs::path metrics = m_root / "run-a" / RunFiles::kMetrics;
    const std::string whole = readFile(metrics);
    writeFileAtomic(metrics, whole.substr(0, whole.rfind("100,1.0,1.1,") + 10));
    ui::CompareTab tab;
    tab.browser()->setRoot(QString::fromStdString(m_root.string()));
    for (int r = 0; r < 2; ++r) {
        tab.browser()->setChecked(r, true);
    }
    EXPECT_EQ(tab.curves()->accuracyPlot()->graphCount(), 2);  // both runs are compared
    EXPECT_TRUE(tab.problem().startsWith("Compared without a row: "))
        << tab.problem().toStdString();
    EXPECT_TRUE(tab.problem().contains("metrics.csv: line 4 is cut short (3 of 8 cells)"))
        << tab.problem().toStdString();
}

TEST_F(CompareTabTest, DamagedRunIsListedNotFatal) {
    writeFileAtomic(m_root / "run-b" / RunFiles::kConfig, "{ not json");
    ui::CompareTab tab;
    tab.browser()->setRoot(QString::fromStdString(m_root.string()));
    ASSERT_EQ(tab.browser()->runs().size(), 2u);
    int unreadable = 0;
    for (const auto& run : tab.browser()->runs()) {
        unreadable += run.error.empty() ? 0 : 1;
    }
    EXPECT_EQ(unreadable, 1);
    writeFileAtomic(m_root / "run-a" / RunFiles::kAdjacency,
                    std::string(kAdjacencyCsvHeader) + "\n0,attn,1,abc,0.1\n");
    tab.browser()->refresh();
    for (int r = 0; r < 2; ++r) {
        tab.browser()->setChecked(r, true);
    }
    EXPECT_FALSE(tab.problem().isEmpty());  // the damaged table is named, nothing crashes
    tab.browser()->setRoot(QString::fromStdString((m_root / "missing").string()));
    EXPECT_TRUE(tab.browser()->runs().empty());
}

}  // namespace
}  // namespace nope
