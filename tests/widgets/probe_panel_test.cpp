// The Probes panel, headless (QT_QPA_PLATFORM=offscreen), on synthetic reports: bars per layer,
// feature and control for init and current side by side, the R / NRMSE switch, the scatter of
// one probe, the export table, empty reports, NaN controls, and both themes. With
// NOPESCOPE_PROBE_PNG=DIR it also saves the panel as PNGs into DIR, for a look.
#include <gtest/gtest.h>

#include <QApplication>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QImage>
#include <QTest>

#include <cmath>
#include <random>
#include <set>

#include "widgets/curve_panel.h"
#include "widgets/heatmap_grid.h"
#include "widgets/plot_style.h"
#include "widgets/probe_panel.h"
#include "widgets/qcp.h"
#include "widgets/theme.h"

namespace nope {
namespace {

using ui::ProbePanel;

constexpr int kLength = 16;   // positions per string
constexpr int kStrings = 4;   // strings whose predictions are kept
constexpr int kFeatures = 5;  // vector, variance, norm, cosine, cosine_row

// A report of the embedding (layer 0) and attn layers 1..2, every feature; `quality` in 0..1
// scales how well the probes read position. Predictions mix the target with seeded noise.
ProbeReport syntheticReport(double quality, uint64_t seed) {
    ProbeReport report;
    report.config.points = {CapturePoint::Embedding, CapturePoint::Attn};
    report.sequenceLength = kLength;
    auto add = [&](CapturePoint point, int layer) {
        for (ProbeFeature f : allProbeFeatures()) {
            ProbeResult r;
            r.point = point;
            r.layer = layer;
            r.feature = f;
            const int fi = static_cast<int>(f);
            const double strength = layer == 0 ? 0.1 + 0.05 * fi : quality * (0.6 + 0.08 * fi);
            std::mt19937 rng(uint32_t(seed * 100 + layer * 10 + fi));
            std::uniform_real_distribution<double> noise(-5.0, 5.0);
            for (int s = 0; s < kStrings; ++s) {
                for (int p = 0; p < kLength; ++p) {
                    const double target = f == ProbeFeature::Cosine ? kLength - 1 - p : p;
                    const double wobble = noise(rng);
                    r.truth.push_back(float(target));
                    r.predicted.push_back(
                        float(strength * target + (1 - strength) * (7.5 + wobble)));
                }
            }
            std::vector<double> t(r.truth.begin(), r.truth.end());
            std::vector<double> y(r.predicted.begin(), r.predicted.end());
            r.pearsonR = pearsonR(y, t);
            r.nrmse = nrmse(y, t);
            r.controlR = 0.02 * (fi - 2);
            r.controlNrmse = 0.3 + 0.01 * fi;
            report.results.push_back(r);
        }
    };
    add(CapturePoint::Embedding, 0);
    add(CapturePoint::Attn, 1);
    add(CapturePoint::Attn, 2);
    report.trainStrings = 100;
    report.testStrings = 50;
    return report;
}

// The bars that draw results (not the legend's "control" entry), by stage and kind.
std::vector<QCPBars*> dataBars(QCustomPlot* plot, int stage, bool control) {
    std::vector<QCPBars*> out;
    for (int i = 0; i < plot->plottableCount(); ++i) {
        auto* bars = qobject_cast<QCPBars*>(plot->plottable(i));
        if (bars && bars->property("feature").isValid() &&
            bars->property("stage").toInt() == stage &&
            bars->property("control").toBool() == control) {
            out.push_back(bars);
        }
    }
    return out;
}

QCPBars* featureBars(QCustomPlot* plot, int stage, ProbeFeature f, bool control = false) {
    for (QCPBars* bars : dataBars(plot, stage, control)) {
        if (bars->property("feature").toInt() == static_cast<int>(f)) {
            return bars;
        }
    }
    return nullptr;
}

// The value of a bar at layer index k (0 = emb), or NaN.
double valueAt(QCPBars* bars, int k) {
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) {
        if (int(std::lround(it->key)) == k) {
            return it->value;
        }
    }
    return NAN;
}

QCPAxis* yAxis(QCustomPlot* plot, int rect) {
    return plot->axisRects().at(rect)->axis(QCPAxis::atLeft);
}

QStringList legendNames(QCustomPlot* plot) {
    QStringList names;
    for (int i = 0; i < plot->legend->itemCount(); ++i) {
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i))) {
            names << item->plottable()->name();
        }
    }
    return names;
}

// Runs the queued replots: a palette change posts an event whose handler queues the replot (a
// zero timer); three rounds of event processing run both, without waiting on the clock.
void settle() {
    for (int round = 0; round < 3; ++round) {
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
    }
}

class ProbePanelTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_init = syntheticReport(0.5, 1);
        m_current = syntheticReport(1.0, 2);
        // attn layer 2's norm probe has no control
        for (auto& r : m_current.results) {
            if (r.point == CapturePoint::Attn && r.layer == 2 && r.feature == ProbeFeature::Norm) {
                r.controlR = NAN;
                r.controlNrmse = NAN;
            }
        }
        m_panel.resize(900, 500);
        m_panel.setReports(&m_init, &m_current, "step 1,250");
    }

    QComboBox* box(const char* name) { return m_panel.findChild<QComboBox*>(name); }

    ProbeReport m_init;
    ProbeReport m_current;
    ProbePanel m_panel;
};

TEST_F(ProbePanelTest, DrawsABarPerFeatureAndControlForEachStage) {
    QCustomPlot* plot = m_panel.barsPlot();
    ASSERT_EQ(plot->axisRects().size(), 2);
    for (int stage = 0; stage < 2; ++stage) {
        EXPECT_EQ(dataBars(plot, stage, false).size(), size_t(kFeatures));
        EXPECT_EQ(dataBars(plot, stage, true).size(), size_t(kFeatures));
        for (QCPBars* bars : dataBars(plot, stage, false)) {
            EXPECT_EQ(bars->dataCount(), 3) << bars->name().toStdString();  // emb, L1, L2
        }
    }
    // the x axis reads emb, L1, L2
    auto ticker =
        plot->axisRects().at(0)->axis(QCPAxis::atBottom)->ticker().dynamicCast<QCPAxisTickerText>();
    ASSERT_TRUE(ticker);
    EXPECT_EQ(ticker->ticks().values(), (QVector<QString>{"emb", "L1", "L2"}));
    // bar values are the reports' R values: current attn L1 vector, init embedding cosine
    const ProbeResult* r = m_current.find(CapturePoint::Attn, 1, ProbeFeature::Vector);
    EXPECT_DOUBLE_EQ(valueAt(featureBars(plot, 1, ProbeFeature::Vector), 1), r->pearsonR);
    const ProbeResult* e = m_init.find(CapturePoint::Embedding, 0, ProbeFeature::Cosine);
    EXPECT_DOUBLE_EQ(valueAt(featureBars(plot, 0, ProbeFeature::Cosine), 0), e->pearsonR);
    EXPECT_DOUBLE_EQ(valueAt(featureBars(plot, 0, ProbeFeature::Cosine, true), 0), e->controlR);
    // a legend entry per feature and one for the controls; the controls are hatched
    EXPECT_EQ(legendNames(plot),
              (QStringList{"vector", "variance", "norm", "cosine", "cosine_row", "control"}));
    EXPECT_EQ(featureBars(plot, 1, ProbeFeature::Vector, true)->brush().style(),
              Qt::TexturePattern);
    EXPECT_EQ(featureBars(plot, 1, ProbeFeature::Vector)->brush().style(), Qt::SolidPattern);
    // titles: init and the current label
    QStringList titles;
    for (QCPLayoutElement* el : plot->plotLayout()->elements(true)) {
        if (auto* t = qobject_cast<QCPTextElement*>(el)) {
            titles << t->text();
        }
    }
    EXPECT_EQ(titles, (QStringList{"init", "step 1,250"}));
    // drawing again replaces the bars (and reuses their groups)
    m_panel.setReports(&m_init, &m_current, "step 1,500");
    m_panel.setReports(&m_init, &m_current, "step 1,750");
    EXPECT_EQ(dataBars(plot, 0, false).size(), size_t(kFeatures));
    EXPECT_EQ(plot->findChildren<QCPBarsGroup*>().size(), 2);
}

TEST_F(ProbePanelTest, SkipsANaNControl) {
    QCPBars* control = featureBars(m_panel.barsPlot(), 1, ProbeFeature::Norm, true);
    ASSERT_NE(control, nullptr);
    EXPECT_EQ(control->dataCount(), 2);  // emb and L1; L2 has no control
    EXPECT_TRUE(std::isnan(valueAt(control, 2)));
    EXPECT_EQ(featureBars(m_panel.barsPlot(), 1, ProbeFeature::Norm)->dataCount(), 3);

    // without any control (controls off) there are no control bars and no legend entry
    for (auto& r : m_current.results) {
        r.controlR = NAN;
        r.controlNrmse = NAN;
    }
    m_panel.setReports(nullptr, &m_current, "step 2");
    EXPECT_TRUE(dataBars(m_panel.barsPlot(), 1, true).empty());
    EXPECT_FALSE(legendNames(m_panel.barsPlot()).contains("control"));
    EXPECT_EQ(legendNames(m_panel.barsPlot()).size(), kFeatures);
}

TEST_F(ProbePanelTest, SwitchesBetweenRAndNrmse) {
    QCustomPlot* plot = m_panel.barsPlot();
    QComboBox* metric = box("probeMetric");
    ASSERT_NE(metric, nullptr);
    EXPECT_EQ(yAxis(plot, 0)->label(), "Pearson R");
    EXPECT_DOUBLE_EQ(yAxis(plot, 0)->range().lower, -0.2);
    EXPECT_DOUBLE_EQ(yAxis(plot, 0)->range().upper, 1.05);

    metric->setCurrentIndex(1);
    EXPECT_EQ(yAxis(plot, 0)->label(), "NRMSE");
    const ProbeResult* r = m_current.find(CapturePoint::Attn, 2, ProbeFeature::Variance);
    EXPECT_DOUBLE_EQ(valueAt(featureBars(plot, 1, ProbeFeature::Variance), 2), r->nrmse);
    EXPECT_DOUBLE_EQ(valueAt(featureBars(plot, 1, ProbeFeature::Variance, true), 2),
                     r->controlNrmse);
    double largest = 0;
    for (const ProbeReport* report : {&m_init, &m_current}) {
        for (const auto& x : report->results) {
            largest =
                std::max({largest, x.nrmse, std::isfinite(x.controlNrmse) ? x.controlNrmse : 0});
        }
    }
    for (int rect = 0; rect < 2; ++rect) {
        EXPECT_DOUBLE_EQ(yAxis(plot, rect)->range().lower, 0.0);
        EXPECT_NEAR(yAxis(plot, rect)->range().upper, largest * 1.1, 1e-12);
    }
    metric->setCurrentIndex(0);
    EXPECT_EQ(yAxis(plot, 0)->label(), "Pearson R");
}

// A probe that reads position backwards has a negative R: its bar is drawn whole, on an axis
// labelled below zero.
TEST_F(ProbePanelTest, NegativeRIsDrawnWithLabelledTicksBelowZero) {
    for (auto& r : m_current.results) {
        if (r.point == CapturePoint::Attn && r.layer == 1 && r.feature == ProbeFeature::Vector) {
            r.pearsonR = -0.63;
        }
    }
    m_panel.setReports(&m_init, &m_current, "step 1,250");
    QCustomPlot* plot = m_panel.barsPlot();
    plot->replot();
    for (int rect = 0; rect < 2; ++rect) {
        QCPAxis* y = yAxis(plot, rect);
        EXPECT_LE(y->range().lower, -0.63 - 0.05);  // the whole bar, and room under it
        const QVector<double> ticks = y->tickVector();
        const QVector<QString> labels = y->tickVectorLabels();
        ASSERT_EQ(ticks.size(), labels.size());
        int below = 0;
        for (int t = 0; t < ticks.size(); ++t) {
            if (ticks[t] < -1e-9 && ticks[t] >= y->range().lower) {
                ++below;
                EXPECT_FALSE(labels[t].isEmpty());
            }
        }
        EXPECT_GE(below, 2) << "ticks below zero on rect " << rect;
    }
}

TEST_F(ProbePanelTest, ScatterShowsTheChosenProbe) {
    QComboBox* feature = box("probeFeature");
    QComboBox* layer = box("probeLayer");
    ASSERT_NE(feature, nullptr);
    ASSERT_NE(layer, nullptr);
    EXPECT_EQ(feature->count(), kFeatures);
    EXPECT_EQ(layer->count(), 3);
    EXPECT_EQ(layer->currentText(), "L1");  // the default: the paper's layer 1

    feature->setCurrentIndex(feature->findText("cosine"));
    layer->setCurrentIndex(layer->findText("L2"));
    const ProbeResult* r = m_current.find(CapturePoint::Attn, 2, ProbeFeature::Cosine);
    QCustomPlot* scatter = m_panel.scatterPlot();
    ASSERT_EQ(scatter->graphCount(), 1);
    QCPGraph* graph = scatter->graph(0);
    ASSERT_EQ(graph->dataCount(), int(r->truth.size()));
    // every (true, predicted) pair is there
    std::multiset<std::pair<double, double>> expected, shown;
    for (size_t i = 0; i < r->truth.size(); ++i) {
        expected.insert({r->truth[i], r->predicted[i]});
    }
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
        shown.insert({it->key, it->value});
    }
    EXPECT_EQ(shown, expected);
    QString title;
    for (QCPLayoutElement* el : scatter->plotLayout()->elements(true)) {
        if (auto* t = qobject_cast<QCPTextElement*>(el)) {
            title = t->text();
        }
    }
    EXPECT_TRUE(title.contains("step 1,250")) << title.toStdString();
    EXPECT_TRUE(title.contains("attn L2")) << title.toStdString();
    EXPECT_TRUE(title.contains("cosine")) << title.toStdString();
    EXPECT_TRUE(title.contains(QString::number(r->pearsonR, 'f', 3))) << title.toStdString();
    EXPECT_TRUE(title.contains(QString::number(r->nrmse, 'f', 3))) << title.toStdString();
    EXPECT_EQ(scatter->xAxis->label(), "true distance to last");

    // without a current report the scatter falls back to init
    m_panel.setReports(&m_init, nullptr, "");
    const ProbeResult* i = m_init.find(CapturePoint::Attn, 2, ProbeFeature::Cosine);
    ASSERT_EQ(scatter->graph(0)->dataCount(), int(i->truth.size()));
    EXPECT_EQ(feature->currentText(), "cosine");  // the choice survives new reports
    EXPECT_EQ(layer->currentText(), "L2");
}

TEST_F(ProbePanelTest, ClickingABarChoosesItForTheScatter) {
    m_panel.show();
    QCustomPlot* plot = m_panel.barsPlot();
    plot->replot(QCustomPlot::rpImmediateRefresh);
    QCPBars* bars = featureBars(plot, 1, ProbeFeature::Variance);
    ASSERT_NE(bars, nullptr);
    const int index = 2;  // L2
    const QPointF top = bars->dataPixelPosition(index);
    const double zero = bars->valueAxis()->coordToPixel(0);
    const QPoint click(int(top.x()), int((top.y() + zero) / 2));
    QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, click);
    EXPECT_EQ(box("probeFeature")->currentText(), "variance");
    EXPECT_EQ(box("probeLayer")->currentText(), "L2");
    const ProbeResult* r = m_current.find(CapturePoint::Attn, 2, ProbeFeature::Variance);
    EXPECT_EQ(m_panel.scatterPlot()->graph(0)->dataCount(), int(r->truth.size()));
}

TEST_F(ProbePanelTest, TableHasEveryResultOfBothStages) {
    const ui::TableData table = m_panel.table();
    EXPECT_EQ(table.header, (QStringList{"stage", "point", "layer", "feature", "target",
                                         "pearson_r", "nrmse", "control_r", "control_nrmse"}));
    ASSERT_EQ(table.rows.size(), 2 * 3 * kFeatures);
    EXPECT_EQ(table.rows.front()[0], "init");
    EXPECT_EQ(table.rows.back()[0], "step 1,250");
    EXPECT_EQ(table.rows.front().mid(1, 4), (QStringList{"embedding", "0", "vector", "position"}));
    int nanControls = 0;
    for (const QStringList& row : table.rows) {
        ASSERT_EQ(row.size(), table.header.size());
        if (row[3] == "cosine") {
            EXPECT_EQ(row[4], "distance_to_last");
        }
        if (row[7].isEmpty()) {
            ++nanControls;
            EXPECT_EQ(row.mid(0, 4), (QStringList{"step 1,250", "attn", "2", "norm"}));
        }
    }
    EXPECT_EQ(nanControls, 1);
}

TEST_F(ProbePanelTest, EmptyReportsDoNotCrash) {
    ProbeReport empty;
    m_panel.setReports(nullptr, nullptr, "");
    EXPECT_TRUE(dataBars(m_panel.barsPlot(), 0, false).empty());
    EXPECT_TRUE(dataBars(m_panel.barsPlot(), 1, false).empty());
    EXPECT_EQ(m_panel.scatterPlot()->graph(0)->dataCount(), 0);
    EXPECT_TRUE(m_panel.table().rows.isEmpty());
    EXPECT_FALSE(m_panel.grab().isNull());
    m_panel.setReports(&empty, &empty, "step 0");
    box("probeMetric")->setCurrentIndex(1);
    m_panel.setPoint(CapturePoint::Resid);
    EXPECT_FALSE(m_panel.grab().isNull());
    bool noteShown = false;
    for (int i = 0; i < m_panel.barsPlot()->itemCount(); ++i) {
        auto* note = qobject_cast<QCPItemText*>(m_panel.barsPlot()->item(i));
        noteShown = noteShown || (note && note->visible() && note->text() == "no probes yet");
    }
    EXPECT_TRUE(noteShown);
    // only a current report: the init side is empty, the current one drawn
    m_panel.setReports(&empty, &m_current, "step 3");
    EXPECT_TRUE(dataBars(m_panel.barsPlot(), 0, false).empty());
    EXPECT_EQ(dataBars(m_panel.barsPlot(), 1, false).size(), size_t(kFeatures));
    EXPECT_EQ(m_panel.table().rows.size(), 3 * kFeatures);
}

TEST_F(ProbePanelTest, ShowsTheChosenPointWithTheEmbeddingFirst) {
    // add resid layers 1..2 with R 0.5 to the current report
    for (int layer = 1; layer <= 2; ++layer) {
        for (ProbeFeature f : allProbeFeatures()) {
            ProbeResult r;
            r.point = CapturePoint::Resid;
            r.layer = layer;
            r.feature = f;
            r.pearsonR = 0.5;
            m_current.results.push_back(r);
        }
    }
    m_panel.setReports(&m_init, &m_current, "step 4");
    m_panel.setPoint(CapturePoint::Resid);
    QCPBars* bars = featureBars(m_panel.barsPlot(), 1, ProbeFeature::Norm);
    EXPECT_DOUBLE_EQ(valueAt(bars, 1), 0.5);
    const ProbeResult* e = m_current.find(CapturePoint::Embedding, 0, ProbeFeature::Norm);
    EXPECT_DOUBLE_EQ(valueAt(bars, 0), e->pearsonR);
    // a point neither report holds falls back to the first one held
    m_panel.setPoint(CapturePoint::AttnIn);
    bars = featureBars(m_panel.barsPlot(), 1, ProbeFeature::Norm);
    EXPECT_DOUBLE_EQ(valueAt(bars, 1),
                     m_current.find(CapturePoint::Attn, 1, ProbeFeature::Norm)->pearsonR);
    // the embedding alone
    m_panel.setPoint(CapturePoint::Embedding);
    EXPECT_EQ(featureBars(m_panel.barsPlot(), 1, ProbeFeature::Norm)->dataCount(), 1);
    EXPECT_EQ(box("probeLayer")->count(), 1);
}

TEST_F(ProbePanelTest, FollowsTheThemeAndRenders) {
    const QString dir = qEnvironmentVariable("NOPESCOPE_PROBE_PNG");
    for (const QString theme : {"light", "dark"}) {
        ui::applyTheme(theme);
        settle();
        const QColor base = m_panel.palette().color(QPalette::Base);
        const QColor text = m_panel.palette().color(QPalette::Text);
        for (QCustomPlot* plot : {m_panel.barsPlot(), m_panel.scatterPlot()}) {
            EXPECT_EQ(plot->axisRect()->backgroundBrush().color(), base) << theme.toStdString();
            EXPECT_EQ(plot->axisRect()->axis(QCPAxis::atLeft)->tickLabelColor(), text);
        }
        EXPECT_EQ(m_panel.barsPlot()->legend->textColor(), text);
        for (QSize size : {QSize(900, 500), QSize(700, 450)}) {
            m_panel.resize(size);
            const QImage image = m_panel.grab().toImage();
            EXPECT_EQ(image.size(), size);
            if (!dir.isEmpty()) {
                const QString name = size.width() == 900 ? "probe_panel" : "probe_panel_small";
                image.save(QDir(dir).filePath(
                    QString("%1%2.png").arg(name, theme == "dark" ? "_dark" : "")));
            }
        }
    }
    ui::applyTheme("system");
}

// Empty plots say what will appear in them instead of showing bare axes; the text goes once
// there is something to draw.
TEST(Placeholders, EmptyPlotsShowATextUntilThereIsData) {
    ui::CurvePanel curves;
    curves.resize(500, 600);
    curves.setHistory({}, {}, {}, CapturePoint::Attn, -1);
    EXPECT_TRUE(ui::placeholderText(curves.adjacencyPlot()).contains("adjacency score"));
    EXPECT_TRUE(ui::placeholderText(curves.trainingPlot()).contains("once training starts"));
    settle();  // the queued replots
    const QImage empty = curves.grab().toImage();
    if (const char* dir = std::getenv("NOPESCOPE_SHOTS")) {
        empty.save(QString(dir) + "/placeholders.png");
    }
    int inked = 0;  // the text is drawn, not only set
    for (int y = 0; y < empty.height(); ++y) {
        for (int x = 0; x < empty.width(); ++x) {
            inked += qGray(empty.pixel(x, y)) < 200;
        }
    }
    EXPECT_GT(inked, 200);

    Snapshot init;
    init.analysis.rows.push_back(LayerScores{});
    init.analysis.rows.back().point = CapturePoint::Attn;
    init.analysis.rows.back().layer = 1;
    init.eval.step = 0;
    init.eval.testLoss = 4.0;
    curves.setHistory({init}, {}, {}, CapturePoint::Attn, 0);
    EXPECT_TRUE(ui::placeholderText(curves.adjacencyPlot()).isEmpty());
    EXPECT_TRUE(curves.adjacencyPlot()->axisRect()->visible());
    EXPECT_FALSE(ui::placeholderText(curves.trainingPlot()).isEmpty());  // no training yet
    Snapshot trained = init;
    trained.step = 5;
    trained.trainLoss = 3.0;
    curves.setHistory({init, trained}, {}, {}, CapturePoint::Attn, 5);
    EXPECT_TRUE(ui::placeholderText(curves.trainingPlot()).isEmpty());

    ui::HeatmapGrid grid;
    grid.setHeatmaps({});
    EXPECT_TRUE(ui::placeholderText(grid.plot()).contains("Press Initialize"));
}

}  // namespace
}  // namespace nope
