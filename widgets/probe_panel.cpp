#include "widgets/probe_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "widgets/qcp.h"

#include "widgets/plot_style.h"
#include "widgets/theme_colors.h"

namespace nope::ui {

namespace {

constexpr double kGroupWidth = 0.8;     // of the space between two layers, in plot coordinates
constexpr double kControlWidth = 0.55;  // a control bar's width over its feature bar's
constexpr double kRLower = -0.2;
constexpr double kRUpper = 1.05;

// Okabe-Ito colours (theme.json), told apart with every kind of colour vision; lighter on a dark
// background.
QColor featureColor(ProbeFeature feature, bool dark) {
    return probeFeatureColor(static_cast<int>(feature), dark);
}

// Diagonal hatching over a faint fill of the colour: a control bar, visible even when narrow.
QBrush hatched(const QColor& colour) {
    constexpr int kTile = 6;
    QPixmap tile(kTile, kTile);
    QColor faint = colour;
    faint.setAlpha(60);
    tile.fill(faint);
    QPainter painter(&tile);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(colour, 1.2));
    painter.drawLine(QPointF(0, kTile), QPointF(kTile, 0));  // tiles into one long diagonal
    painter.drawLine(QPointF(-1, 1), QPointF(1, -1));
    painter.drawLine(QPointF(kTile - 1, kTile + 1), QPointF(kTile + 1, kTile - 1));
    return QBrush(tile);
}

QString featureName(ProbeFeature feature) {
    return QString::fromStdString(toString(feature));
}
QString pointName(CapturePoint point) {
    return QString::fromStdString(toString(point));
}
QString layerName(int layer) {
    return layer == 0 ? QString("emb") : QString("L%1").arg(layer);
}

double metricOf(const ProbeResult& r, bool useR, bool control) {
    if (control) {
        return useR ? r.controlR : r.controlNrmse;
    }
    return useR ? r.pearsonR : r.nrmse;
}

// The result drawn for `layer` at `point`: layer 0 is the embedding, whichever point holds it.
const ProbeResult* resultOf(const ProbeReport& report, CapturePoint point, int layer,
                            ProbeFeature feature) {
    if (layer > 0) {
        return report.find(point, layer, feature);
    }
    if (const ProbeResult* r = report.find(CapturePoint::Embedding, 0, feature)) {
        return r;
    }
    for (const auto& r : report.results) {
        if (r.layer == 0 && r.feature == feature) {
            return &r;
        }
    }
    return nullptr;
}

QString cell(double v) {
    return std::isfinite(v) ? QString::number(v, 'f', 6) : QString();
}

// A centred grey note inside an axis rect ("no probes yet").
QCPItemText* makeNote(QCustomPlot* plot, QCPAxisRect* rect) {
    auto* note = new QCPItemText(plot);
    note->setClipAxisRect(rect);
    note->position->setAxisRect(rect);
    note->position->setType(QCPItemPosition::ptAxisRectRatio);
    note->position->setCoords(0.5, 0.5);
    note->setText("no probes yet");
    note->setFont(QFont("sans", 10));
    note->setVisible(false);
    return note;
}

}  // namespace

ProbePanel::ProbePanel(QWidget* parent)
    : QWidget(parent),
      m_metric(new QComboBox(this)),
      m_feature(new QComboBox(this)),
      m_layer(new QComboBox(this)),
      m_bars(new QCustomPlot(this)),
      m_scatter(new QCustomPlot(this)) {
    m_metric->setObjectName("probeMetric");
    m_feature->setObjectName("probeFeature");
    m_layer->setObjectName("probeLayer");
    m_metric->addItems({"Pearson R", "NRMSE"});
    m_metric->setToolTip(
        "Pearson R (higher: the position is read better) or NRMSE (RMSE over "
        "the target's range; lower is better) on the test strings");
    m_feature->setToolTip("the feature whose predictions the scatter shows");
    m_layer->setToolTip("the layer whose predictions the scatter shows (or click a bar)");

    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(4, 2, 4, 0);
    controls->addWidget(new QLabel("Metric:", this));
    controls->addWidget(m_metric);
    controls->addSpacing(12);
    controls->addWidget(new QLabel("Scatter:", this));
    controls->addWidget(m_feature);
    controls->addWidget(m_layer);
    controls->addStretch(1);

    auto* plots = new QHBoxLayout;
    plots->setSpacing(0);
    plots->addWidget(m_bars, 2);
    plots->addWidget(m_scatter, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(controls);
    layout->addLayout(plots, 1);

    // Bars: titles over two axis rects side by side, the legend in one row underneath.
    m_bars->setMinimumSize(320, 220);
    m_bars->setAutoAddPlottableToLegend(false);
    m_bars->axisRect()->insetLayout()->take(m_bars->legend);
    m_bars->plotLayout()->clear();
    auto* grid = new QCPLayoutGrid;
    m_bars->plotLayout()->addElement(0, 0, grid);
    auto* legendRow = new QCPLayoutGrid;  // the legend, centred between two empty cells
    m_bars->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(0, 2, 0, 4));
    legendRow->addElement(0, 0, new QCPLayoutElement(m_bars));
    legendRow->addElement(0, 1, m_bars->legend);
    legendRow->addElement(0, 2, new QCPLayoutElement(m_bars));
    legendRow->setColumnStretchFactor(1, 0.001);
    m_bars->plotLayout()->setRowStretchFactor(1, 0.001);
    m_bars->plotLayout()->setRowSpacing(0);
    auto* margins = new QCPMarginGroup(m_bars);
    for (int s = 0; s < 2; ++s) {
        m_titles[s] = new QCPTextElement(m_bars, "", QFont("sans", 9, QFont::Bold));
        m_titles[s]->setMargins(QMargins(0, 4, 0, 0));
        m_rects[s] = new QCPAxisRect(m_bars);
        grid->addElement(0, s, m_titles[s]);
        grid->addElement(1, s, m_rects[s]);
        m_rects[s]->setMarginGroup(QCP::msLeft | QCP::msRight | QCP::msBottom, margins);
        for (QCPAxis* axis : m_rects[s]->axes()) {
            axis->setTickLabelFont(QFont("sans", 8));
            axis->setLabelFont(QFont("sans", 8));
        }
        QCPAxis* x = m_rects[s]->axis(QCPAxis::atBottom);
        x->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
        x->setSubTicks(false);
        x->setTickLength(0, 3);
        x->grid()->setVisible(false);
        m_emptyTexts[s] = makeNote(m_bars, m_rects[s]);
        m_groups[s] = new QCPBarsGroup(m_bars);  // places a layer's bars side by side
        m_groups[s]->setSpacingType(QCPBarsGroup::stAbsolute);
        m_groups[s]->setSpacing(0);
    }
    grid->setRowStretchFactor(0, 0.001);
    grid->setRowSpacing(0);
    grid->setColumnSpacing(8);
    m_bars->legend->setVisible(true);
    m_bars->legend->setFont(QFont("sans", 8));
    m_bars->legend->setIconSize(16, 9);
    m_bars->legend->setMargins(QMargins(4, 2, 4, 2));
    m_bars->installEventFilter(this);  // to wrap the legend when the plot is narrow
    connect(m_bars, &QCustomPlot::plottableClick, this, &ProbePanel::onBarClicked);
    connect(m_bars, &QCustomPlot::mouseMove, this, &ProbePanel::showBarTip);

    // Scatter: predicted against true target, with y = x.
    m_scatter->setMinimumSize(200, 200);
    m_scatter->plotLayout()->insertRow(0);
    m_scatterTitle = new QCPTextElement(m_scatter, "", QFont("sans", 9));
    m_scatter->plotLayout()->addElement(0, 0, m_scatterTitle);
    m_scatter->xAxis->setLabel("true target");
    m_scatter->yAxis->setLabel("predicted");
    for (QCPAxis* axis : {m_scatter->xAxis, m_scatter->yAxis}) {
        axis->ticker()->setTickCount(4);  // whole positions: steps of 5 for T = 16
        axis->setTickLabelFont(QFont("sans", 8));
        axis->setLabelFont(QFont("sans", 8));
    }
    m_scatter->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_diagonal = new QCPItemStraightLine(m_scatter);
    m_diagonal->point1->setCoords(0, 0);
    m_diagonal->point2->setCoords(1, 1);
    m_scatterEmpty = makeNote(m_scatter, m_scatter->axisRect());

    connect(m_metric, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this] { redrawBars(); });
    connect(m_feature, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this] { redrawScatter(); });
    connect(m_layer, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this] { redrawScatter(); });

    m_init.label = "init";
    m_current.label = "current";
    refillChoices();
    redrawBars();
    redrawScatter();
}

void ProbePanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        // Feature colours differ between light and dark: draw again, which restyles as well.
        redrawBars();
        redrawScatter();
    }
    QWidget::changeEvent(event);
}

bool ProbePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_bars && event->type() == QEvent::Resize) {
        fitToWidth();  // before the plot's own resize handler replots
    }
    return QWidget::eventFilter(watched, event);
}

void ProbePanel::fitToWidth() {
    // Layer names, or for many layers in a narrow plot "E", "1", "2"...
    const std::vector<int> layers = shownLayers();
    const CapturePoint point = shownPoint();
    const QFontMetrics metrics(m_rects[0]->axis(QCPAxis::atBottom)->tickLabelFont());
    const double perLayer = (m_bars->width() / 2.0 - 50) / std::max<size_t>(1, layers.size());
    const bool terse = perLayer < metrics.horizontalAdvance("emb") + 8;
    QSharedPointer<QCPAxisTickerText> ticks(new QCPAxisTickerText);
    for (int k = 0; k < int(layers.size()); ++k) {
        ticks->addTick(k, terse ? (layers[k] == 0 ? QString("E") : QString::number(layers[k]))
                                : layerName(layers[k]));
    }
    QString label = "layer";
    if (point != CapturePoint::Embedding) {
        label += QString(" (%1%2)").arg(pointName(point), terse ? "; E: embedding" : "");
    }
    for (QCPAxisRect* rect : m_rects) {
        rect->axis(QCPAxis::atBottom)->setTicker(ticks);
        rect->axis(QCPAxis::atBottom)->setLabel(label);
    }

    QCPLegend* legend = m_bars->legend;
    legend->setWrap(0);  // one row, if it fits
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);
    if (legend->minimumOuterSizeHint().width() > m_bars->width() - 8) {
        legend->setWrap((legend->itemCount() + 1) / 2);  // else two
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);
    }
}

void ProbePanel::setReports(const ProbeReport* init, const ProbeReport* current,
                            const QString& currentLabel) {
    m_init.report.reset();
    m_current.report.reset();
    if (init && !init->empty()) {
        m_init.report = *init;
    }
    if (current && !current->empty()) {
        m_current.report = *current;
    }
    m_current.label = currentLabel.isEmpty() ? QString("current") : currentLabel;
    refillChoices();
    redrawBars();
    redrawScatter();
}

void ProbePanel::setPoint(CapturePoint point) {
    if (point == m_point) {
        return;
    }
    m_point = point;
    refillChoices();
    redrawBars();
    redrawScatter();
}

bool ProbePanel::usesR() const {
    return m_metric->currentIndex() == 0;
}

CapturePoint ProbePanel::shownPoint() const {
    auto holds = [&](CapturePoint p) {
        for (const Stage* stage : {&m_init, &m_current}) {
            if (stage->report) {
                for (const auto& r : stage->report->results) {
                    if (r.point == p && (p == CapturePoint::Embedding || r.layer > 0)) {
                        return true;
                    }
                }
            }
        }
        return false;
    };
    if (holds(m_point)) {
        return m_point;
    }
    for (CapturePoint p : allCapturePoints()) {
        if (p != CapturePoint::Embedding && holds(p)) {
            return p;
        }
    }
    return m_point;
}

std::vector<int> ProbePanel::shownLayers() const {
    const CapturePoint point = shownPoint();
    std::vector<int> layers;
    for (const Stage* stage : {&m_init, &m_current}) {
        if (!stage->report) {
            continue;
        }
        for (const auto& r : stage->report->results) {
            const bool shown =
                r.layer == 0 || (r.point == point && point != CapturePoint::Embedding);
            if (shown && std::find(layers.begin(), layers.end(), r.layer) == layers.end()) {
                layers.push_back(r.layer);
            }
        }
    }
    std::sort(layers.begin(), layers.end());
    return layers;
}

std::vector<ProbeFeature> ProbePanel::shownFeatures() const {
    std::vector<ProbeFeature> features;
    for (ProbeFeature f : allProbeFeatures()) {
        bool held = false;
        for (const Stage* stage : {&m_init, &m_current}) {
            if (stage->report) {
                for (const auto& r : stage->report->results) {
                    held = held || r.feature == f;
                }
            }
        }
        if (held) {
            features.push_back(f);
        }
    }
    return features;
}

void ProbePanel::refillChoices() {
    auto refill = [](QComboBox* box, const QStringList& names, const QList<int>& values,
                     int fallback) {
        const QVariant previous = box->currentData();
        const QSignalBlocker block(box);
        box->clear();
        for (int i = 0; i < names.size(); ++i) {
            box->addItem(names[i], values[i]);
        }
        int index = previous.isValid() ? box->findData(previous) : -1;
        if (index < 0) {
            index = box->findData(fallback);
        }
        box->setCurrentIndex(std::max(0, index));
        box->setEnabled(box->count() > 0);
    };
    QStringList names;
    QList<int> values;
    for (ProbeFeature f : shownFeatures()) {
        names << featureName(f);
        values << static_cast<int>(f);
    }
    refill(m_feature, names, values, static_cast<int>(ProbeFeature::Cosine));  // the best feature
    names.clear();
    values.clear();
    for (int layer : shownLayers()) {
        names << layerName(layer);
        values << layer;
    }
    refill(m_layer, names, values, /*fallback=*/1);  // the paper's headline: layer 1
}

// Longer than 60 lines for a reason: one pass over both stages places the bars, the control
// ticks, the tick labels and the legend, which share the same positions.
void ProbePanel::redrawBars() {
    const QPalette pal = palette();
    const bool dark = isDark(pal);
    const bool useR = usesR();
    const CapturePoint point = shownPoint();
    const std::vector<int> layers = shownLayers();
    const std::vector<ProbeFeature> features = shownFeatures();

    m_bars->clearPlottables();
    m_bars->legend->clearItems();
    double largest = 0;   // for the NRMSE range
    double smallest = 0;  // for R: how far below zero the axis goes
    bool anyControl = false;
    bool legendFilled = false;
    const Stage* stages[2] = {&m_init, &m_current};
    for (int s = 0; s < 2; ++s) {
        const Stage& stage = *stages[s];
        QCPAxisRect* rect = m_rects[s];
        QCPAxis* x = rect->axis(QCPAxis::atBottom);
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        m_titles[s]->setText(stage.label);
        x->setRange(-0.5, std::max<double>(1, layers.size()) - 0.5);
        y->setLabel(s == 0 ? (useR ? QString("Pearson R") : QString("NRMSE")) : QString());
        m_emptyTexts[s]->setVisible(!stage.report);
        if (!stage.report) {
            continue;
        }
        const ProbeReport& report = *stage.report;
        bool controls = false;
        for (int layer : layers) {
            for (ProbeFeature f : features) {
                const ProbeResult* r = resultOf(report, point, layer, f);
                controls = controls || (r && std::isfinite(metricOf(*r, useR, true)));
            }
        }
        anyControl = anyControl || controls;
        const double units = double(features.size()) * (1.0 + (controls ? kControlWidth : 0.0));
        const double width = kGroupWidth / std::max(1.0, units);
        for (ProbeFeature f : features) {
            const QColor colour = featureColor(f, dark);
            for (bool control : {false, true}) {
                if (control && !controls) {
                    continue;
                }
                QVector<double> keys, values;
                for (int k = 0; k < int(layers.size()); ++k) {
                    const ProbeResult* r = resultOf(report, point, layers[k], f);
                    const double v = r ? metricOf(*r, useR, control) : NAN;
                    if (std::isfinite(v)) {
                        keys << k;
                        values << v;
                        largest = std::max(largest, v);
                        smallest = std::min(smallest, v);
                    }
                }
                auto* bars = new QCPBars(x, y);
                bars->setWidthType(QCPBars::wtPlotCoords);
                bars->setWidth(control ? width * kControlWidth : width);
                bars->setPen(QPen(colour, 1));
                bars->setBrush(control ? hatched(colour) : QBrush(colour));
                bars->setName(control ? QString("%1 control").arg(featureName(f)) : featureName(f));
                bars->setData(keys, values, /*alreadySorted=*/true);
                bars->setBarsGroup(m_groups[s]);
                bars->setProperty("stage", s);
                bars->setProperty("feature", static_cast<int>(f));
                bars->setProperty("control", control);
                if (!control && !legendFilled) {
                    bars->addToLegend();
                }
            }
        }
        legendFilled = true;  // one entry per feature, from the first stage drawn
    }
    if (anyControl) {
        // One neutral legend entry for every hatched control bar.
        auto* legendOnly =
            new QCPBars(m_rects[0]->axis(QCPAxis::atBottom), m_rects[0]->axis(QCPAxis::atLeft));
        const QColor neutral = pal.color(QPalette::Text);
        legendOnly->setName("control");
        legendOnly->setPen(QPen(neutral, 1));
        legendOnly->setBrush(hatched(neutral));
        legendOnly->addToLegend();
    }
    m_bars->legend->setVisible(m_bars->legend->itemCount() > 0);
    fitToWidth();

    const double upper = useR ? kRUpper : (largest > 0 ? largest * 1.1 : 1.0);
    // R below zero is drawn whole, on an axis labelled every 0.2 down to it
    const double lower = useR ? std::min(kRLower, std::floor((smallest - 0.05) * 5.0) / 5.0) : 0.0;
    for (QCPAxisRect* rect : m_rects) {
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        y->setRange(lower, upper);
        if (useR) {
            QSharedPointer<QCPAxisTickerFixed> fixed(new QCPAxisTickerFixed);
            fixed->setTickStep(upper - lower > 1.4 ? 0.4 : 0.2);
            fixed->setScaleStrategy(QCPAxisTickerFixed::ssNone);
            y->setTicker(fixed);
        } else {
            y->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        }
    }
    applyPlotTheme(m_bars, pal);
    const QColor text = pal.color(QPalette::Text);
    for (QCPAxisRect* rect : m_rects) {
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        y->grid()->setZeroLinePen(QPen(text, 1));
    }
    for (QCPItemText* note : m_emptyTexts) {
        note->setColor(pal.color(QPalette::PlaceholderText));
    }
    m_bars->replot(QCustomPlot::rpQueuedReplot);
}

// Longer than 60 lines for a reason: the chosen probe's points, its identity line and the
// axes' ranges are computed from the same predictions in one pass.
void ProbePanel::redrawScatter() {
    const QPalette pal = palette();
    const bool dark = isDark(pal);
    const int layer = m_layer->currentData().isValid() ? m_layer->currentData().toInt() : -1;
    const auto feature = static_cast<ProbeFeature>(
        m_feature->currentData().isValid() ? m_feature->currentData().toInt() : 0);

    const Stage* stage = nullptr;
    const ProbeResult* result = nullptr;
    for (const Stage* s : {&m_current, &m_init}) {
        if (!result && s->report && layer >= 0) {
            result = resultOf(*s->report, shownPoint(), layer, feature);
            stage = s;
        }
    }
    m_scatter->clearGraphs();
    QCPGraph* graph = m_scatter->addGraph();
    const QColor colour = featureColor(feature, dark);
    graph->setLineStyle(QCPGraph::lsNone);
    QColor dot = colour;
    dot.setAlpha(dark ? 170 : 120);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dot, 4));
    m_scatterEmpty->setVisible(!result);
    m_diagonal->setVisible(result != nullptr);
    if (result) {
        QVector<double> truth, predicted;
        const size_t n = std::min(result->truth.size(), result->predicted.size());
        double lo = 0, hi = 1;
        for (size_t i = 0; i < n; ++i) {
            truth << result->truth[i];
            predicted << result->predicted[i];
            lo = std::min({lo, double(result->truth[i]), double(result->predicted[i])});
            hi = std::max({hi, double(result->truth[i]), double(result->predicted[i])});
        }
        graph->setData(truth, predicted);
        const double pad = 0.04 * (hi - lo);
        m_scatter->xAxis->setRange(lo - pad, hi + pad);
        m_scatter->yAxis->setRange(lo - pad, hi + pad);
        const QString where = result->layer == 0 ? QString("embedding")
                                                 : QString("%1 %2").arg(pointName(result->point),
                                                                        layerName(result->layer));
        m_scatterTitle->setText(QString("%1: %2, %3\nR = %4   NRMSE = %5")
                                    .arg(stage->label, where, featureName(feature))
                                    .arg(result->pearsonR, 0, 'f', 3)
                                    .arg(result->nrmse, 0, 'f', 3));
        const QString target = QString::fromStdString(probeTarget(feature)).replace('_', ' ');
        m_scatter->xAxis->setLabel("true " + target);
        m_scatter->yAxis->setLabel("predicted " + target);
    } else {
        m_scatterTitle->setText("predicted against true target");
        m_scatter->xAxis->setRange(0, 1);
        m_scatter->yAxis->setRange(0, 1);
        m_scatter->xAxis->setLabel("true target");
        m_scatter->yAxis->setLabel("predicted");
    }
    applyPlotTheme(m_scatter, pal);
    const QColor text = pal.color(QPalette::Text);
    m_diagonal->setPen(QPen(QColor(text.red(), text.green(), text.blue(), 150), 1, Qt::DashLine));
    m_scatterEmpty->setColor(pal.color(QPalette::PlaceholderText));
    m_scatter->replot(QCustomPlot::rpQueuedReplot);
}

void ProbePanel::onBarClicked(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent*) {
    auto* bars = qobject_cast<QCPBars*>(plottable);
    if (!bars || !bars->property("feature").isValid() || dataIndex < 0 ||
        dataIndex >= bars->dataCount()) {
        return;
    }
    const std::vector<int> layers = shownLayers();
    const int k = int(std::lround(bars->data()->at(dataIndex)->key));
    if (k < 0 || k >= int(layers.size())) {
        return;
    }
    {
        const QSignalBlocker blockFeature(m_feature);
        const QSignalBlocker blockLayer(m_layer);
        m_feature->setCurrentIndex(std::max(0, m_feature->findData(bars->property("feature"))));
        m_layer->setCurrentIndex(std::max(0, m_layer->findData(layers[k])));
    }
    redrawScatter();
}

void ProbePanel::showBarTip(QMouseEvent* event) {
    int dataIndex = -1;
    auto* bars = qobject_cast<QCPBars*>(m_bars->plottableAt(event->pos(), false, &dataIndex));
    if (!bars || !bars->property("feature").isValid() || dataIndex < 0 ||
        dataIndex >= bars->dataCount()) {
        QToolTip::hideText();
        return;
    }
    const std::vector<int> layers = shownLayers();
    const auto point = bars->data()->at(dataIndex);
    const int k = int(std::lround(point->key));
    const QString stage = bars->property("stage").toInt() == 0 ? m_init.label : m_current.label;
    const QString text =
        QString("%1, %2, %3%4\n%5 = %6 (click: scatter)")
            .arg(stage, k >= 0 && k < int(layers.size()) ? layerName(layers[k]) : QString("?"),
                 featureName(static_cast<ProbeFeature>(bars->property("feature").toInt())),
                 bars->property("control").toBool() ? QString(" control") : QString(),
                 usesR() ? QString("R") : QString("NRMSE"))
            .arg(point->value, 0, 'f', 3);
    QToolTip::showText(event->globalPosition().toPoint(), text, m_bars);
}

TableData ProbePanel::table() const {
    TableData table;
    table.header = QStringList{"stage",     "point", "layer",     "feature",      "target",
                               "pearson_r", "nrmse", "control_r", "control_nrmse"};
    for (const Stage* stage : {&m_init, &m_current}) {
        if (!stage->report) {
            continue;
        }
        for (const ProbeResult& r : stage->report->results) {
            table.rows << QStringList{stage->label,
                                      pointName(r.point),
                                      QString::number(r.layer),
                                      featureName(r.feature),
                                      QString::fromStdString(probeTarget(r.feature)),
                                      cell(r.pearsonR),
                                      cell(r.nrmse),
                                      cell(r.controlR),
                                      cell(r.controlNrmse)};
        }
    }
    return table;
}

}  // namespace nope::ui
