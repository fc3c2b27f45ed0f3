#include "widgets/compare_curves.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <functional>
#include <set>

#include "widgets/plot_style.h"
#include "widgets/qcp.h"
#include "widgets/theme_colors.h"

namespace nope::ui {

namespace {

QString runLabel(const ComparedRun& run) {
    return QString::fromStdString(run.summary.name);
}

// Each run's colour (the theme's distinct run colours, which come round again past the last);
// every layer of a run in that colour, lighter with depth.
QColor runColor(size_t run, int layer, int layers, bool dark) {
    QColor c = runCurveColor(static_cast<int>(run), dark);
    if (layer >= 0 && layers > 0) {
        c = dark ? c.darker(100 + 60 * (layers - layer) / layers)
                 : c.lighter(100 + 60 * (layers - layer) / layers);
    }
    return c;
}

// Runs past the colours' first round get another line style and marker, so that no two look
// alike.
int colorRound(size_t run) {
    return static_cast<int>(run / static_cast<size_t>(runCurveColors())) % 3;
}

Qt::PenStyle runLineStyle(size_t run) {
    const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashDotLine, Qt::DotLine};
    return styles[colorRound(run)];
}

QCPScatterStyle runMarker(size_t run) {
    const QCPScatterStyle::ScatterShape shapes[] = {
        QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle};
    return QCPScatterStyle(shapes[colorRound(run)], 4);
}

QString layerName(CapturePoint point, int layer) {
    return layer == 0 ? "embedding"
                      : QString("%1 %2").arg(QString::fromStdString(toString(point))).arg(layer);
}

// The points of a curve whose x is known: a step, or the run's wall time in minutes.
struct Curve {
    QVector<double> x, y;
};

Curve curveOver(CompareCurves::XAxis axis, const RunCurves& curves, const std::vector<int>& steps,
                const std::vector<double>& values, const std::vector<double>* seconds) {
    Curve c;
    for (size_t i = 0; i < steps.size() && i < values.size(); ++i) {
        double x = steps[i];
        if (axis == CompareCurves::XAxis::Minutes) {
            x = (seconds && i < seconds->size() ? (*seconds)[i] : curves.secondsAt(steps[i])) /
                60.0;
        }
        if (std::isfinite(x)) {
            c.x << x;
            c.y << values[i];
        }
    }
    return c;
}

using LayerScore = std::function<double(int layer)>;

// A row of the table: its stage, the score of each layer (NaN when not recorded) and the number
// of prompts the scores are over (0 when the files do not say).
struct Stage {
    QString label;
    LayerScore scoreOf;
    int samples = 0;
};

// The prompts of a final stage, from its rows of final_scores.csv.
int finalSamples(const RunCurves& curves, const QString& stage) {
    for (const auto& s : curves.final) {
        if (QString::fromStdString(s.stage) == stage) {
            return s.samples;
        }
    }
    return 0;
}

// The stages of a run's table rows. final_scores.csv's init and trained scores are over the
// run's final prompts (finalSamples), the snapshots' over its analysis prompts: the prompts
// column says which, so that a score that differs from the window's table says why.
std::vector<Stage> stagesOf(const RunCurves& curves, CapturePoint point, int snapshotSamples) {
    auto pointOf = [point](int layer) { return layer == 0 ? CapturePoint::Embedding : point; };
    std::vector<Stage> stages;
    if (!curves.final.empty()) {
        for (const QString stage : {"init", "trained"}) {
            stages.push_back({stage,
                              [&curves, pointOf, stage](int layer) {
                                  for (const auto& s : curves.final) {
                                      if (QString::fromStdString(s.stage) == stage &&
                                          s.point == pointOf(layer) && s.layer == layer) {
                                          return s.mean;
                                      }
                                  }
                                  return std::nan("");
                              },
                              finalSamples(curves, stage)});
        }
        return stages;
    }
    const ScoreSeries* any = curves.series(point, 1);
    if (!any || any->steps.empty()) {
        return stages;
    }
    std::vector<int> steps = {any->steps.front()};
    if (any->steps.size() > 1) {
        steps.push_back(any->steps.back());
    }
    for (int step : steps) {
        stages.push_back({step == 0 ? QString("init") : QString("step %1").arg(step),
                          [&curves, pointOf, step](int layer) {
                              const ScoreSeries* s = curves.series(pointOf(layer), layer);
                              for (size_t i = 0; s && i < s->steps.size(); ++i) {
                                  if (s->steps[i] == step) {
                                      return s->mean[i];
                                  }
                              }
                              return std::nan("");
                          },
                          snapshotSamples});
    }
    return stages;
}

}  // namespace

CompareCurves::CompareCurves(QWidget* parent)
    : QWidget(parent),
      m_point(new QComboBox(this)),
      m_layer(new QComboBox(this)),
      m_axis(new QComboBox(this)),
      m_adjacency(new QCustomPlot(this)),
      m_accuracy(new QCustomPlot(this)),
      m_table(new QTableWidget(this)) {
    m_point->setToolTip("the capture point whose scores are compared");
    m_layer->setToolTip("one layer across runs, or every layer of every run");
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel("point"));
    row->addWidget(m_point);
    row->addWidget(new QLabel("layer"));
    row->addWidget(m_layer);
    row->addWidget(new QLabel("over"));
    row->addWidget(m_axis);
    row->addStretch(1);
    m_axis->addItem("step", static_cast<int>(XAxis::Step));
    m_axis->addItem("wall time (minutes)", static_cast<int>(XAxis::Minutes));
    m_axis->setToolTip(
        "the curves over the training step, or over each run's wall time "
        "(elapsed_s of its tables), to compare runs of different speeds");
    for (QCustomPlot* plot : {m_adjacency, m_accuracy}) {
        plot->setMinimumHeight(140);
        plot->legend->setVisible(true);
        plot->legend->setFont(QFont("sans", 8));
        plot->xAxis->setLabel("step");
        plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        keepTicksApart(plot);
        applyPlotTheme(plot, palette());
    }
    m_adjacency->yAxis->setLabel("adjacency score");
    m_adjacency->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignBottom);
    m_accuracy->yAxis->setLabel("test accuracy (%)");
    // accuracy rises to the right: the legend where the curves start, low
    m_accuracy->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignLeft | Qt::AlignTop);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* plots = new QSplitter(Qt::Vertical, this);
    plots->addWidget(m_adjacency);
    plots->addWidget(m_accuracy);
    plots->addWidget(m_table);
    plots->setStretchFactor(0, 3);
    plots->setStretchFactor(1, 2);
    plots->setStretchFactor(2, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(plots, 1);
    connect(m_point, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    connect(m_layer, &QComboBox::currentIndexChanged, this, [this] {
        m_chosenLayer = m_layer->currentData().toInt();
        redraw();
    });
    connect(m_axis, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    redraw();
}

void CompareCurves::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        applyPlotTheme(m_adjacency, palette());
        applyPlotTheme(m_accuracy, palette());
        redraw();
    }
    QWidget::changeEvent(event);
}

void CompareCurves::setRuns(std::vector<ComparedRun> runs) {
    m_runs = std::move(runs);
    fillChoices();
    redraw();
}

void CompareCurves::setLayer(int layer) {
    const int index = m_layer->findData(layer);
    if (index >= 0) {
        m_layer->setCurrentIndex(index);
    }
}

void CompareCurves::setXAxis(XAxis axis) {
    m_axis->setCurrentIndex(m_axis->findData(static_cast<int>(axis)));
}

CompareCurves::XAxis CompareCurves::xAxis() const {
    return static_cast<XAxis>(m_axis->currentData().toInt());
}

// The points and layers the compared runs recorded; the current choices kept when still there.
void CompareCurves::fillChoices() {
    const QString point = m_point->currentText();
    const int layer = m_chosenLayer;
    std::set<CapturePoint> points;
    int layers = 0;
    for (const auto& run : m_runs) {
        for (const auto& s : run.curves.adjacency) {
            if (s.point != CapturePoint::Embedding) {
                points.insert(s.point);
            }
            layers = std::max(layers, s.layer);
        }
    }
    m_point->blockSignals(true);
    m_layer->blockSignals(true);
    m_point->clear();
    for (CapturePoint p : points) {
        m_point->addItem(QString::fromStdString(toString(p)));
    }
    const int keep = m_point->findText(point.isEmpty() ? "attn" : point);
    m_point->setCurrentIndex(keep >= 0 ? keep : 0);
    m_layer->clear();
    m_layer->addItem("every layer", -1);
    m_layer->addItem("embedding", 0);
    for (int l = 1; l <= layers; ++l) {
        m_layer->addItem(QString("layer %1").arg(l), l);
    }
    const int index = m_layer->findData(layer);
    m_layer->setCurrentIndex(index >= 0 ? index : m_layer->count() - 1);
    m_point->blockSignals(false);
    m_layer->blockSignals(false);
}

void CompareCurves::redraw() {
    const bool dark = isDark(palette());
    const auto point = parseCapturePoint(m_point->currentText().toStdString());
    const CapturePoint p = point.value_or(CapturePoint::Attn);
    const int layer = m_layer->currentData().isValid() ? m_layer->currentData().toInt() : 1;
    drawAdjacency(p, layer, dark);
    drawAccuracy(dark);
    const QString over = xAxis() == XAxis::Minutes ? "wall time (minutes)" : "step";
    m_adjacency->xAxis->setLabel(over);
    m_accuracy->xAxis->setLabel(over);
    fillTable(p);
    m_adjacency->replot(QCustomPlot::rpQueuedReplot);
    m_accuracy->replot(QCustomPlot::rpQueuedReplot);
}

void CompareCurves::drawAdjacency(CapturePoint point, int layer, bool dark) {
    m_adjacency->clearGraphs();
    for (size_t r = 0; r < m_runs.size(); ++r) {
        const RunCurves& curves = m_runs[r].curves;
        const int layers = curves.layers(point);
        const int first = layer < 0 ? 0 : layer;
        const int last = layer < 0 ? layers : layer;
        for (int l = first; l <= last; ++l) {
            const ScoreSeries* s = curves.series(l == 0 ? CapturePoint::Embedding : point, l);
            if (!s) {
                continue;
            }
            const Curve c = curveOver(xAxis(), curves, s->steps, s->mean, nullptr);
            QCPGraph* graph = m_adjacency->addGraph();
            graph->setData(c.x, c.y, true);
            graph->setName(layer < 0 ? runLabel(m_runs[r]) + ": " + layerName(point, l)
                                     : runLabel(m_runs[r]));
            graph->setPen(QPen(runColor(r, layer < 0 ? l : -1, layers, dark), 2,
                               l == 0 && layer < 0 ? Qt::DashLine : runLineStyle(r)));
            graph->setScatterStyle(runMarker(r));
        }
    }
    m_adjacency->legend->setVisible(m_adjacency->graphCount() <= 16);
    m_adjacency->xAxis->rescale();
    m_adjacency->yAxis->setRange(0.0, 1.02);
    showPlaceholder(m_adjacency, m_runs.empty() ? "Tick runs above to overlay their adjacency "
                                                  "scores over training."
                                                : QString());
}

void CompareCurves::drawAccuracy(bool dark) {
    m_accuracy->clearGraphs();
    for (size_t r = 0; r < m_runs.size(); ++r) {
        const RunCurves& curves = m_runs[r].curves;
        const Curve c =
            curveOver(xAxis(), curves, curves.evalSteps, curves.evalAccuracy, &curves.evalSeconds);
        QCPGraph* graph = m_accuracy->addGraph();
        graph->setData(c.x, c.y, true);
        graph->setName(runLabel(m_runs[r]));
        graph->setPen(QPen(runColor(r, -1, 0, dark), 2, runLineStyle(r)));
        graph->setScatterStyle(runMarker(r));
    }
    m_accuracy->xAxis->rescale();
    m_accuracy->yAxis->setRange(0.0, 100.0);
    showPlaceholder(m_accuracy, m_runs.empty() ? "Their test accuracy appears here." : QString());
}

// A row per run and stage: init and trained from final_scores.csv; while a run has none, the
// first and the latest snapshot of adjacency.csv.
void CompareCurves::fillTable(CapturePoint point) {
    int layers = 0;
    for (const auto& run : m_runs) {
        layers = std::max(layers, run.curves.layers(point));
    }
    m_data = {};
    m_data.header = {"run", "task", "stage", "prompts", "embedding"};
    for (int l = 1; l <= layers; ++l) {
        m_data.header << layerName(point, l);
    }
    m_data.header << "best accuracy";
    for (const auto& run : m_runs) {
        for (const Stage& stage : stagesOf(run.curves, point, run.summary.analysisSamples)) {
            QStringList row = {runLabel(run), QString::fromStdString(run.summary.task), stage.label,
                               stage.samples > 0 ? QString::number(stage.samples) : QString()};
            const LayerScore& scoreOf = stage.scoreOf;
            for (int l = 0; l <= layers; ++l) {
                const double v = scoreOf(l);
                row << (std::isfinite(v) ? QString::number(v, 'f', 3) : "");
            }
            row << (std::isfinite(run.summary.bestAccuracy)
                        ? QString::number(run.summary.bestAccuracy, 'f', 1)
                        : "");
            m_data.rows << row;
        }
    }
    showTable(m_table, m_data);
}

}  // namespace nope::ui
