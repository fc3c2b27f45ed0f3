#include "widgets/projector_tab.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QSplitter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "tasks/vocab.h"
#include "widgets/plot_style.h"
#include "widgets/qcp.h"

namespace nope::ui {

namespace {

constexpr const char* kNothingYet =
    "The analysis prompts' hidden states, projected, appear here once there is a model: press "
    "Initialize, or Train to watch positions take shape.";
constexpr double kHoverPixels = 9.0;
constexpr int kPointSize = 6;

const std::pair<int, int> kAxisPairs[] = {{0, 1}, {0, 2}, {1, 2}};

QString siteName(const Projection& p) {
    return p.point == CapturePoint::Embedding
               ? QString("embedding")
               : QString("%1 layer %2").arg(QString::fromStdString(toString(p.point))).arg(p.layer);
}

QString methodAxis(ProjectionMethod method, int axis) {
    return QString(method == ProjectionMethod::Pca ? "PC%1" : "MDS %1").arg(axis + 1);
}

QString percent(double share) {
    return QString::number(100.0 * share, 'f', 1) + "%";
}

QCustomPlot* makePlot(QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumHeight(160);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    keepTicksApart(plot);
    return plot;
}

}  // namespace

ProjectorTab::ProjectorTab(QWidget* parent)
    : QWidget(parent),
      m_point(new QComboBox),
      m_method(new QComboBox),
      m_axes(new QComboBox),
      m_layer(new QComboBox),
      m_summary(new QLabel),
      m_scatter(makePlot(this)),
      m_position(makePlot(this)),
      m_table(new QTableWidget) {
    for (CapturePoint p : allCapturePoints()) {
        if (p != CapturePoint::Embedding) {
            m_point->addItem(QString::fromStdString(toString(p)), static_cast<int>(p));
        }
    }
    m_point->setCurrentIndex(m_point->findData(static_cast<int>(CapturePoint::Attn)));
    m_method->addItem("PCA", static_cast<int>(ProjectionMethod::Pca));
    m_method->addItem("MDS of 1 - cosine", static_cast<int>(ProjectionMethod::Mds));
    m_axes->addItems({"axes 1 and 2", "axes 1 and 3", "axes 2 and 3"});
    m_point->setToolTip("the capture point whose layers are projected (beside the embedding)");
    m_method->setToolTip(
        "PCA: one fit over every token of the projected prompts (each centred on its own mean), "
        "shared axes. MDS: classical scaling "
        "of each prompt's cosine dissimilarity 1 - C, the positions laid out by similarity "
        "alone. Axes are signed to rise with position.");
    m_axes->setToolTip("which two of the three axes are drawn");
    m_layer->setToolTip("every layer side by side, or one large");
    m_summary->setWordWrap(true);
    m_scatter->setToolTip(QString());  // hover text comes from describeAt
    m_scatter->setMouseTracking(true);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel("point"));
    bar->addWidget(m_point);
    bar->addWidget(new QLabel("method"));
    bar->addWidget(m_method);
    bar->addWidget(m_axes);
    bar->addWidget(new QLabel("layers"));
    bar->addWidget(m_layer);
    bar->addStretch(1);

    m_table->verticalHeader()->setVisible(false);
    m_table->setToolTip(
        "Per layer: each axis' share of the variance (PCA: of all the hidden states' variance; "
        "MDS: of the positive eigenvalues, mean over prompts) and the Pearson R of axis 1 with "
        "position (MDS: mean over prompts).");
    auto* side = new QSplitter(Qt::Vertical);
    side->addWidget(m_position);
    side->addWidget(m_table);
    side->setStretchFactor(0, 3);
    side->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_scatter);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);

    for (QComboBox* box : {m_point, m_method, m_axes, m_layer}) {
        connect(box, &QComboBox::currentIndexChanged, this, [this] { Q_EMIT choiceChanged(); });
    }
    connect(m_scatter, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        const QString text = describeAt(event->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(event->globalPosition().toPoint(), text, m_scatter);
        }
    });
    connect(m_scatter, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        const int layer = layerAt(event->pos());
        if (layer >= 0 && layer != m_focus) {
            setFocusLayer(layer);
        }
    });
    applyPlotTheme(m_scatter, palette());
    applyPlotTheme(m_position, palette());
    showNothing(kNothingYet);
}

CapturePoint ProjectorTab::point() const {
    return static_cast<CapturePoint>(m_point->currentData().toInt());
}

void ProjectorTab::setPoint(CapturePoint point) {
    const int index = m_point->findData(static_cast<int>(point));
    if (index >= 0) {
        m_point->setCurrentIndex(index);
    }
}

ProjectionMethod ProjectorTab::method() const {
    return static_cast<ProjectionMethod>(m_method->currentData().toInt());
}

void ProjectorTab::setMethod(ProjectionMethod method) {
    m_method->setCurrentIndex(m_method->findData(static_cast<int>(method)));
}

int ProjectorTab::axesChoice() const {
    return m_axes->currentIndex();
}

void ProjectorTab::setAxesChoice(int choice) {
    if (choice >= 0 && choice < m_axes->count()) {
        m_axes->setCurrentIndex(choice);
    }
}

int ProjectorTab::layer() const {
    return m_layer->currentIndex() - 1;
}

void ProjectorTab::setLayer(int layer) {
    if (layer + 1 >= 0 && layer + 1 < m_layer->count()) {
        m_layer->setCurrentIndex(layer + 1);
    }
}

void ProjectorTab::setFocusLayer(int layer) {
    m_focus = layer;
    drawPosition();
}

std::pair<int, int> ProjectorTab::shownAxes() const {
    return kAxisPairs[std::clamp(axesChoice(), 0, 2)];
}

void ProjectorTab::updateLayerChoice(int layers) {
    if (m_layer->count() == layers + 2) {
        return;
    }
    const int kept = layer();
    m_layer->blockSignals(true);
    m_layer->clear();
    m_layer->addItem("all");
    m_layer->addItem("embedding");
    for (int l = 1; l <= layers; ++l) {
        m_layer->addItem(QString("layer %1").arg(l));
    }
    m_layer->setCurrentIndex(std::clamp(kept, -1, layers) + 1);
    m_layer->blockSignals(false);
}

void ProjectorTab::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        applyPlotTheme(m_scatter, palette());
        applyPlotTheme(m_position, palette());
        m_scatter->replot(QCustomPlot::rpQueuedReplot);
        m_position->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

void ProjectorTab::showNothing(const QString& why) {
    m_items.clear();
    m_tokens.clear();
    m_rects.clear();
    m_scatter->clearPlottables();
    m_scatter->plotLayout()->clear();
    m_scatter->plotLayout()->addElement(0, 0, new QCPAxisRect(m_scatter));
    applyPlotTheme(m_scatter, palette());
    showPlaceholder(m_scatter, why);
    m_scatter->replot(QCustomPlot::rpQueuedReplot);
    m_position->clearGraphs();
    showPlaceholder(m_position, "A layer's first axis against position appears here.");
    m_position->replot(QCustomPlot::rpQueuedReplot);
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
    m_shownTable = {};
    m_summary->setText(why);
}

void ProjectorTab::setHistory(const std::vector<Snapshot>& history, int shown) {
    if (shown < 0 || shown >= static_cast<int>(history.size())) {
        showNothing(m_emptyText.isEmpty() ? QString(kNothingYet) : m_emptyText);
        return;
    }
    const Snapshot& s = history[static_cast<size_t>(shown)];
    const ProjectionSet& set = s.analysis.projection;
    if (set.empty()) {
        showNothing(
            "This snapshot has no projections (a run recorded before the projector, or hidden "
            "states that are not finite numbers).");
        return;
    }
    updateLayerChoice(s.analysis.layerCount());
    m_step = s.step;
    m_tokens = set.tokens;
    m_items.clear();
    for (const auto& p : set.items) {
        const bool site = p.point == CapturePoint::Embedding || p.point == point();
        const bool chosenLayer = layer() < 0 || p.layer == layer();
        if (site && chosenLayer && p.method == method()) {
            m_items.push_back(p);
        }
    }
    if (m_items.empty()) {
        showNothing("This snapshot has no projections of " +
                    QString::fromStdString(toString(point())) + " by this method.");
        return;
    }
    if (layer() >= 0) {
        m_focus = layer();
    }
    drawScatter();
    drawPosition();
    fillTable();
    m_summary->setText(
        QString("step %1: %2 tokens (%3 prompts of %4) per panel, coloured by position; hover a "
                "point for its prompt and character, click a panel to plot its first axis "
                "against position.")
            .arg(m_step)
            .arg(set.prompts * set.seqLen)
            .arg(set.prompts)
            .arg(set.seqLen));
}

void ProjectorTab::drawScatter() {
    m_scatter->clearPlottables();
    m_scatter->plotLayout()->clear();
    m_rects.clear();
    showPlaceholder(m_scatter, QString());
    const int n = static_cast<int>(m_items.size());
    const int columns = n <= 1 ? 1 : n <= 4 ? 2 : n <= 9 ? 3 : 4;
    auto* grid = new QCPLayoutGrid;
    m_scatter->plotLayout()->addElement(0, 0, grid);
    const int T = m_items.front().seqLen;
    auto* scale = new QCPColorScale(m_scatter);
    m_scatter->plotLayout()->addElement(0, 1, scale);
    m_scatter->plotLayout()->setColumnStretchFactor(1, 0.01);
    scale->setType(QCPAxis::atRight);
    scale->setLabel("position");
    scale->setGradient(heatmapGradient());
    scale->setDataRange(QCPRange(0, std::max(1, T - 1)));
    const auto [a, b] = shownAxes();
    QCPColorGradient gradient = heatmapGradient();  // color() is not const in QCustomPlot 2.1
    const QCPRange positions(0, std::max(1, T - 1));
    for (int k = 0; k < n; ++k) {
        const Projection& p = m_items[static_cast<size_t>(k)];
        auto* cell = new QCPLayoutGrid;
        grid->addElement(k / columns, k % columns, cell);
        auto* title = new QCPTextElement(
            m_scatter, QString("%1   R %2").arg(siteName(p)).arg(p.rPosition, 0, 'f', 2),
            QFont("sans", 9));
        cell->addElement(0, 0, title);
        auto* rect = new QCPAxisRect(m_scatter);
        cell->addElement(1, 0, rect);
        cell->setRowStretchFactor(0, 0.001);
        QCPAxis* x = rect->axis(QCPAxis::atBottom);
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        x->setLabel(methodAxis(p.method, a) + " (" + percent(p.explained[a]) + ")");
        y->setLabel(methodAxis(p.method, b) + " (" + percent(p.explained[b]) + ")");
        for (QCPAxis* axis : {x, y}) {
            axis->setTickLabelFont(QFont("sans", 7));
            axis->setLabelFont(QFont("sans", 8));
        }
        for (int t = 0; t < p.seqLen; ++t) {
            QCPGraph* g = m_scatter->addGraph(x, y);
            g->setLineStyle(QCPGraph::lsNone);
            const QColor color = QColor::fromRgb(gradient.color(t, positions));
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, kPointSize));
            QVector<double> xs, ys;
            for (int prompt = 0; prompt < p.prompts; ++prompt) {
                xs.push_back(p.at(prompt, t, a));
                ys.push_back(p.at(prompt, t, b));
            }
            g->setData(xs, ys);
        }
        x->rescale();
        y->rescale();
        for (QCPAxis* axis : {x, y}) {
            const QCPRange r = axis->range();
            const double pad = std::max(0.06 * r.size(), 1e-6);
            axis->setRange(r.lower - pad, r.upper + pad);
        }
        m_rects.push_back(rect);
    }
    applyPlotTheme(m_scatter, palette());
    m_scatter->replot(QCustomPlot::rpQueuedReplot);
}

void ProjectorTab::drawPosition() {
    m_position->clearGraphs();
    const auto it = std::find_if(m_items.begin(), m_items.end(),
                                 [this](const Projection& p) { return p.layer == m_focus; });
    if (m_position->plotLayout()->rowCount() < 2) {  // a title row above the axes
        m_position->plotLayout()->insertRow(0);
        m_position->plotLayout()->addElement(0, 0,
                                             new QCPTextElement(m_position, "", QFont("sans", 9)));
    }
    auto* title = qobject_cast<QCPTextElement*>(m_position->plotLayout()->element(0, 0));
    if (it == m_items.end()) {
        title->setText(QString());
        showPlaceholder(m_position, m_items.empty()
                                        ? "A layer's first axis against position appears here."
                                        : "Click a panel to plot its first axis here.");
        m_position->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    showPlaceholder(m_position, QString());
    const Projection& p = *it;
    const bool dark = isDark(palette());
    QCPGraph* points = m_position->addGraph();
    points->setLineStyle(QCPGraph::lsNone);
    QColor dot = layerColor(std::max(p.layer, 0), std::max(p.layer, 1), dark);
    dot.setAlpha(140);
    points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dot, 5));
    points->setName("tokens");
    QCPGraph* mean = m_position->addGraph();
    mean->setPen(QPen(palette().color(QPalette::WindowText), 1.5));
    mean->setName("mean over prompts");
    QVector<double> xs, ys, mx, my;
    for (int t = 0; t < p.seqLen; ++t) {
        double sum = 0.0;
        for (int prompt = 0; prompt < p.prompts; ++prompt) {
            xs.push_back(t);
            ys.push_back(p.at(prompt, t, 0));
            sum += p.at(prompt, t, 0);
        }
        mx.push_back(t);
        my.push_back(p.prompts > 0 ? sum / p.prompts : 0.0);
    }
    points->setData(xs, ys);
    mean->setData(mx, my, /*alreadySorted=*/true);
    m_position->xAxis->setLabel("position");
    m_position->yAxis->setLabel(methodAxis(p.method, 0));
    m_position->xAxis->setRange(-0.5, p.seqLen - 0.5);
    m_position->yAxis->rescale();
    title->setText(QString("%1: axis 1 against position, R = %2")
                       .arg(siteName(p))
                       .arg(p.rPosition, 0, 'f', 3));
    applyPlotTheme(m_position, palette());
    m_position->replot(QCustomPlot::rpQueuedReplot);
}

void ProjectorTab::fillTable() {
    TableData t;
    t.header = {"point",       "layer",       "method",    "explained 1",
                "explained 2", "explained 3", "R position"};
    for (const auto& p : m_items) {
        t.rows.push_back(
            {QString::fromStdString(toString(p.point)), QString::number(p.layer),
             QString::fromStdString(toString(p.method)), QString::number(p.explained[0], 'f', 4),
             QString::number(p.explained[1], 'f', 4), QString::number(p.explained[2], 'f', 4),
             QString::number(p.rPosition, 'f', 4)});
    }
    TableData shown;  // the method and point are in the choosers above
    shown.header = {"layer", "axis 1", "axis 2", "axis 3", "R"};
    for (size_t k = 0; k < m_items.size(); ++k) {
        const Projection& p = m_items[k];
        shown.rows.push_back(
            {p.point == CapturePoint::Embedding ? "embedding" : QString::number(p.layer),
             percent(p.explained[0]), percent(p.explained[1]), percent(p.explained[2]),
             t.rows[static_cast<int>(k)].back()});
    }
    showTable(m_table, shown);
    m_shownTable = std::move(t);
}

QPointF ProjectorTab::pixelOf(int panel, int prompt, int position) const {
    const auto [a, b] = shownAxes();
    const Projection& p = m_items.at(static_cast<size_t>(panel));
    QCPAxisRect* rect = m_rects.at(static_cast<size_t>(panel));
    return {rect->axis(QCPAxis::atBottom)->coordToPixel(p.at(prompt, position, a)),
            rect->axis(QCPAxis::atLeft)->coordToPixel(p.at(prompt, position, b))};
}

int ProjectorTab::layerAt(const QPoint& position) const {
    for (size_t k = 0; k < m_rects.size(); ++k) {
        if (m_rects[k]->rect().contains(position)) {
            return m_items[k].layer;
        }
    }
    return -1;
}

QString ProjectorTab::describeAt(const QPoint& position) const {
    const auto [a, b] = shownAxes();
    for (size_t k = 0; k < m_rects.size(); ++k) {
        QCPAxisRect* rect = m_rects[k];
        if (!rect->rect().contains(position)) {
            continue;
        }
        const Projection& p = m_items[k];
        QCPAxis* x = rect->axis(QCPAxis::atBottom);
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        double best = kHoverPixels;
        int bestPrompt = -1, bestPosition = -1;
        for (int prompt = 0; prompt < p.prompts; ++prompt) {
            for (int t = 0; t < p.seqLen; ++t) {
                const double dx = x->coordToPixel(p.at(prompt, t, a)) - position.x();
                const double dy = y->coordToPixel(p.at(prompt, t, b)) - position.y();
                const double d = std::hypot(dx, dy);
                if (d < best) {
                    best = d;
                    bestPrompt = prompt;
                    bestPosition = t;
                }
            }
        }
        if (bestPrompt < 0) {
            return {};
        }
        const size_t first = static_cast<size_t>(bestPrompt) * p.seqLen;
        QString prompt, token;
        if (first + p.seqLen <= m_tokens.size()) {
            for (int t = 0; t < p.seqLen; ++t) {
                const char c = vocab::decode(m_tokens[first + t]);
                prompt += c == vocab::kPad ? QString() : QString(QChar(c));
            }
            token = " '" +
                    QString::fromStdString(
                        vocab::display(vocab::decode(m_tokens[first + bestPosition]))) +
                    "'";
            prompt = " " + prompt;
        }
        return QString("%1, prompt %2%3, position %4%5: (%6, %7)")
            .arg(siteName(p))
            .arg(bestPrompt + 1)
            .arg(prompt)
            .arg(bestPosition)
            .arg(token)
            .arg(p.at(bestPrompt, bestPosition, a), 0, 'g', 3)
            .arg(p.at(bestPrompt, bestPosition, b), 0, 'g', 3);
    }
    return {};
}

QString ProjectorTab::summaryText() const {
    return m_summary->text();
}

}  // namespace nope::ui
