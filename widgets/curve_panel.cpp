#include "widgets/curve_panel.h"

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "widgets/qcp.h"

#include "widgets/plot_style.h"
#include "widgets/theme_colors.h"

namespace nope::ui {

namespace {

QCPItemStraightLine* makeMarker(QCustomPlot* plot) {
    auto* line = new QCPItemStraightLine(plot);
    line->setVisible(false);
    return line;
}

void placeMarker(QCPItemStraightLine* line, int step, bool dark) {
    line->setPen(QPen(themeColor(ThemeColor::StepMarker, dark), 1, Qt::DashLine));
    line->point1->setCoords(step, 0);
    line->point2->setCoords(step, 1);
    line->setVisible(step >= 0);
}

// A step axis widened by a little on each side, so that the first and last points (and their
// markers) are drawn whole rather than cut by the axes.
void padSteps(QCPAxis* axis) {
    const QCPRange range = axis->range();
    const double margin = std::max(0.5, 0.03 * range.size());
    axis->setRange(range.lower - margin, range.upper + margin);
}

}  // namespace

CurvePanel::CurvePanel(QWidget* parent)
    : QWidget(parent), m_adjacency(new QCustomPlot(this)), m_training(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_adjacency, 1);
    layout->addWidget(m_training, 1);
    for (QCustomPlot* plot : {m_adjacency, m_training}) {
        plot->setMinimumHeight(150);
        plot->legend->setVisible(true);
        plot->legend->setFont(QFont("sans", 8));
        plot->xAxis->setLabel("step");
        plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        keepTicksApart(plot);
    }
    m_adjacency->yAxis->setLabel("adjacency score");
    m_adjacency->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignBottom);
    m_training->yAxis->setLabel("loss");
    m_training->yAxis2->setVisible(true);
    m_training->yAxis2->setLabel("test accuracy (%)");
    m_training->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignTop);
    m_adjacencyMarker = makeMarker(m_adjacency);
    m_trainingMarker = makeMarker(m_training);
    applyPlotTheme(m_adjacency, palette());
    applyPlotTheme(m_training, palette());
    setHistory({}, {}, {}, CapturePoint::Attn, -1);  // the placeholders until there is a model
}

void CurvePanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        applyPlotTheme(m_adjacency, palette());
        applyPlotTheme(m_training, palette());
        m_adjacency->replot(QCustomPlot::rpQueuedReplot);
        m_training->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

void CurvePanel::setHistory(const std::vector<Snapshot>& history,
                            const std::vector<EvalPoint>& evaluations,
                            const std::vector<LossPoint>& liveLosses, CapturePoint point,
                            int marker) {
    const bool dark = isDark(palette());
    drawAdjacency(history, point, marker, dark);
    drawTraining(history, evaluations, liveLosses, marker, dark);
    m_adjacency->replot(QCustomPlot::rpQueuedReplot);
    m_training->replot(QCustomPlot::rpQueuedReplot);
}

void CurvePanel::setOrientation(Qt::Orientation orientation) {
    if (auto* box = qobject_cast<QBoxLayout*>(layout())) {
        box->setDirection(orientation == Qt::Vertical ? QBoxLayout::TopToBottom
                                                      : QBoxLayout::LeftToRight);
    }
}

void CurvePanel::setEmptyTexts(const QString& adjacency, const QString& training) {
    m_adjacencyEmpty = adjacency.isEmpty() ? QString(kAdjacencyEmpty) : adjacency;
    m_trainingEmpty = training.isEmpty() ? QString(kTrainingEmpty) : training;
}

// One graph per layer present in the snapshots for this point, the embedding's dashed.
void CurvePanel::drawAdjacency(const std::vector<Snapshot>& history, CapturePoint point, int marker,
                               bool dark) {
    int layers = 0;
    for (const auto& s : history) {
        layers = std::max(layers, s.analysis.layerCount());
    }
    const int first = point == CapturePoint::Embedding ? 0 : 1;
    const int last = point == CapturePoint::Embedding ? 0 : layers;
    const bool withEmbedding = point != CapturePoint::Embedding;
    const int graphs = (last - first + 1) + (withEmbedding ? 1 : 0);
    if (m_adjacency->graphCount() != graphs) {
        m_adjacency->clearGraphs();
        for (int g = 0; g < graphs; ++g) {
            m_adjacency->addGraph();
        }
    }
    int g = 0;
    auto fill = [&](CapturePoint p, int layer, const QString& name) {
        QVector<double> steps, values;
        for (const auto& s : history) {
            if (const LayerScores* row = s.analysis.find(p, layer)) {
                steps.push_back(s.step);
                values.push_back(row->adjacencyMean);
            }
        }
        QCPGraph* graph = m_adjacency->graph(g++);
        graph->setData(steps, values, /*alreadySorted=*/true);
        graph->setName(name);
        graph->setPen(QPen(layerColor(layer, layers, dark), layer == 0 ? 1.5 : 2.0,
                           layer == 0 ? Qt::DashLine : Qt::SolidLine));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    };
    if (withEmbedding) {
        fill(CapturePoint::Embedding, 0, "embedding");
    }
    for (int layer = first; layer <= last; ++layer) {
        fill(point, layer,
             layer == 0
                 ? "embedding"
                 : QString("%1 layer %2").arg(QString::fromStdString(toString(point))).arg(layer));
    }
    m_adjacency->xAxis->rescale();
    padSteps(m_adjacency->xAxis);
    m_adjacency->yAxis->setRange(0.0, 1.02);
    placeMarker(m_adjacencyMarker, marker, dark);
    showPlaceholder(m_adjacency, history.empty() ? m_adjacencyEmpty : QString());
}

// Train loss per snapshot (and live past the last one), test loss and accuracy per evaluation.
void CurvePanel::drawTraining(const std::vector<Snapshot>& history,
                              const std::vector<EvalPoint>& evaluations,
                              const std::vector<LossPoint>& liveLosses, int marker, bool dark) {
    if (m_training->graphCount() != 3) {
        m_training->clearGraphs();
        m_training->addGraph();
        m_training->addGraph();
        m_training->addGraph(m_training->xAxis, m_training->yAxis2);
    }
    QVector<double> steps, train, testSteps, test, accuracySteps, accuracy;
    for (const auto& s : history) {
        if (std::isfinite(s.trainLoss)) {
            steps.push_back(s.step);
            train.push_back(s.trainLoss);
        }
    }
    for (const LossPoint& p : liveLosses) {
        steps.push_back(p.step);
        train.push_back(p.loss);
    }
    for (const EvalPoint& e : evaluations) {
        if (std::isfinite(e.testLoss)) {
            testSteps.push_back(e.step);
            test.push_back(e.testLoss);
        }
        accuracySteps.push_back(e.step);
        accuracy.push_back(e.accuracy);
    }
    m_training->graph(0)->setData(steps, train, true);
    m_training->graph(0)->setName("train loss");
    m_training->graph(0)->setPen(QPen(themeColor(ThemeColor::TrainLoss, dark), 2));
    m_training->graph(1)->setData(testSteps, test, true);
    m_training->graph(1)->setName("test loss");
    m_training->graph(1)->setPen(QPen(themeColor(ThemeColor::TestLoss, dark), 2));
    m_training->graph(2)->setData(accuracySteps, accuracy, true);
    m_training->graph(2)->setName("test accuracy (%)");
    m_training->graph(2)->setPen(QPen(themeColor(ThemeColor::TestAccuracy, dark), 2, Qt::DashLine));
    for (int g = 0; g < 3; ++g) {  // a curve of one point still shows
        m_training->graph(g)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    }
    m_training->xAxis->rescale();
    padSteps(m_training->xAxis);
    m_training->yAxis->rescale();
    if (m_training->yAxis->range().lower > 0) {
        m_training->yAxis->setRangeLower(0);
    }
    const QCPRange losses = m_training->yAxis->range();  // the highest point below the top
    m_training->yAxis->setRangeUpper(losses.upper + 0.04 * losses.size());
    m_training->yAxis2->setRange(0, 100);
    placeMarker(m_trainingMarker, marker, dark);
    showPlaceholder(m_training,
                    steps.isEmpty() && accuracySteps.isEmpty() ? m_trainingEmpty : QString());
}

}  // namespace nope::ui
