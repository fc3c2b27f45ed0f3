#include "widgets/heatmap_grid.h"

#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "widgets/qcp.h"

#include "tasks/vocab.h"
#include "widgets/plot_style.h"

namespace nope::ui {

QStringList promptTokens(const std::string& prompt) {
    QStringList out;
    for (char c : prompt) {
        out << QString::fromStdString(vocab::display(c));
    }
    return out;
}

namespace {

// Ticks on the matrix only: the axes of a square heatmap may extend past it on one side.
class MatrixTicker : public QCPAxisTicker {
public:
    explicit MatrixTicker(int size) : m_size(size) { setTickCount(4); }

protected:
    double getTickStep(const QCPRange& range) override {
        (void)range;  // the step suits the matrix, not the widened axis
        return QCPAxisTicker::getTickStep(QCPRange(-0.5, m_size - 0.5));
    }
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override {
        QVector<double> ticks = QCPAxisTicker::createTickVector(tickStep, range);
        ticks.erase(std::remove_if(ticks.begin(), ticks.end(),
                                   [this](double t) { return t < 0 || t > m_size - 1; }),
                    ticks.end());
        return ticks;
    }

private:
    int m_size;
};

}  // namespace

HeatmapGrid::HeatmapGrid(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setMouseTracking(true);
    m_plot->setMinimumSize(320, 200);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        const QString text = describeAt(event->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
        }
    });
    // once the layout has sized every axis rect, lengthen one axis so that cells are square
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        squareCells();
        thinTokenLabels();
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* event) {
        for (size_t k = 0; k < m_rects.size(); ++k) {
            if (m_rects[k]->rect().contains(event->pos())) {
                Q_EMIT enlargeRequested(static_cast<int>(k));
                return;
            }
        }
    });
    setHeatmaps({});  // the placeholder until there is a model
}

void HeatmapGrid::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        applyTheme();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

void HeatmapGrid::setScaleLabel(const QString& label) {
    m_scaleLabel = label;
    if (m_scale) {
        m_scale->setLabel(label);
    }
}

void HeatmapGrid::setEmptyText(const QString& text) {
    m_emptyText = text.isEmpty() ? QString(kNoModelYet) : text;
    if (m_maps.empty()) {
        showPlaceholder(m_plot, m_emptyText);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void HeatmapGrid::setFixedRange(bool fixed) {
    m_fixedRange = fixed;
    fillData();
}

void HeatmapGrid::setSharedRange(std::optional<std::pair<double, double>> range) {
    m_sharedRange = range;
    fillData();
}

std::optional<std::pair<double, double>> HeatmapGrid::valueRange() const {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const Heatmap& h : m_maps) {
        for (int i = 0; i < h.size; ++i) {
            for (int j = 0; j <= i; ++j) {
                const double v = h.values[static_cast<size_t>(i) * h.size + j];
                if (std::isfinite(v)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
            }
        }
    }
    if (!std::isfinite(lo)) {
        return std::nullopt;
    }
    return std::make_pair(lo, hi);
}

std::pair<double, double> HeatmapGrid::colourRange() const {
    if (!m_scale) {
        return {-1.0, 1.0};
    }
    const QCPRange r = m_scale->dataRange();
    return {r.lower, r.upper};
}

void HeatmapGrid::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (m_columns == 0 && !m_maps.empty() && autoColumns() != m_layoutColumns) {
        rebuildLayout();
        fillData();
    }
}

int HeatmapGrid::autoColumns() const {
    // the arrangement that gives the largest square heatmaps in this widget's shape (about 90
    // pixels go to the colour scale; each heatmap needs about 45 across and 50 down for its
    // title, tick labels and axis labels)
    const int n = static_cast<int>(m_maps.size());
    const double across = std::max(1, width() - 90);
    const double down = std::max(1, height());
    int best = std::max(1, n);
    double bestSide = -1.0;
    for (int columns = 1; columns <= n; ++columns) {
        const int rows = (n + columns - 1) / columns;
        const double side = std::min(across / columns - 45.0, down / rows - 50.0);
        if (side > bestSide) {
            bestSide = side;
            best = columns;
        }
    }
    return best;
}

void HeatmapGrid::setColumns(int columns) {
    m_columns = columns;
    m_layoutCount = -1;
    setHeatmaps(m_maps);
}

void HeatmapGrid::setHeatmaps(std::vector<Heatmap> maps) {
    m_maps = std::move(maps);
    showPlaceholder(m_plot, m_maps.empty() ? m_emptyText : QString());
    const int size = m_maps.empty() ? 0 : m_maps.front().size;
    if (static_cast<int>(m_maps.size()) != m_layoutCount || size != m_layoutSize) {
        rebuildLayout();
    }
    fillData();
}

void HeatmapGrid::rebuildLayout() {
    m_plot->plotLayout()->clear();  // deletes axis rects, maps' axes and the scale
    m_plot->clearPlottables();
    m_rects.clear();
    m_colorMaps.clear();
    m_scale = nullptr;
    m_layoutCount = static_cast<int>(m_maps.size());
    m_layoutSize = m_maps.empty() ? 0 : m_maps.front().size;
    if (m_maps.empty()) {
        m_plot->replot();
        return;
    }
    const int n = static_cast<int>(m_maps.size());
    const int columns = m_columns > 0 ? m_columns : autoColumns();
    m_layoutColumns = columns;
    auto* grid = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(0, 0, grid);
    m_scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(0, 1, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_scale->setLabel(m_scaleLabel);
    m_scale->setGradient(heatmapGradient());
    m_plot->plotLayout()->setColumnStretchFactor(1, 0.01);
    auto* margins = new QCPMarginGroup(m_plot);
    for (int k = 0; k < n; ++k) {
        auto* cell = new QCPLayoutGrid;
        grid->addElement(k / columns, k % columns, cell);
        auto* title = new QCPTextElement(m_plot, m_maps[k].title, QFont("sans", 9));
        cell->addElement(0, 0, title);
        auto* rect = new QCPAxisRect(m_plot);
        cell->addElement(1, 0, rect);
        cell->setRowStretchFactor(0, 0.001);
        rect->setMarginGroup(QCP::msLeft | QCP::msRight | QCP::msTop, margins);
        // j along the top, like a printed matrix: the matrix sits in the rect's top-left corner
        QCPAxis* x = rect->axis(QCPAxis::atTop);
        rect->axis(QCPAxis::atBottom)->setVisible(false);
        x->setVisible(true);
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        y->setRangeReversed(true);  // query 0 at the top, like a matrix
        x->setLabel("j (earlier token)");
        y->setLabel("i (token)");
        for (QCPAxis* axis : {x, y}) {
            axis->grid()->setVisible(false);
            axis->setTickLabelFont(QFont("sans", 7));
            axis->setLabelFont(QFont("sans", 7));
        }
        auto* map = new QCPColorMap(x, y);
        map->setInterpolate(false);
        map->setTightBoundary(false);
        map->setColorScale(m_scale);
        m_rects.push_back(rect);
        m_colorMaps.push_back(map);
    }
    applyTheme();
}

void HeatmapGrid::applyTheme() {
    applyPlotTheme(m_plot, palette());
    for (QCPAxisRect* rect : m_rects) {
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(Qt::NoPen);  // an axis may run past the square matrix
        }
    }
}

void HeatmapGrid::fillData() {
    if (m_colorMaps.empty()) {
        return;
    }
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (size_t k = 0; k < m_maps.size(); ++k) {
        const Heatmap& h = m_maps[k];
        QCPColorMap* map = m_colorMaps[k];
        const int T = h.size;
        map->data()->setSize(T, T);
        map->data()->setRange(QCPRange(0, T - 1), QCPRange(0, T - 1));
        for (int i = 0; i < T; ++i) {
            for (int j = 0; j < T; ++j) {
                const bool future = j > i;
                const double v = future ? std::nan("") : h.values[static_cast<size_t>(i) * T + j];
                map->data()->setCell(j, i, v);
                if (!future && std::isfinite(v)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
            }
        }
        // the title element is the first element of the rect's parent cell
        if (auto* cell = qobject_cast<QCPLayoutGrid*>(m_rects[k]->layout())) {
            if (auto* title = qobject_cast<QCPTextElement*>(cell->element(0, 0))) {
                title->setText(h.title);
            }
        }
        QCPAxis* x = m_rects[k]->axis(QCPAxis::atTop);
        QCPAxis* y = m_rects[k]->axis(QCPAxis::atLeft);
        if (h.tokens.size() == T) {
            // placed by thinTokenLabels() once the cells' size is known
        } else {
            QSharedPointer<QCPAxisTicker> ticker(new MatrixTicker(T));
            x->setTicker(ticker);
            y->setTicker(ticker);
        }
    }
    m_labelStep.assign(m_maps.size(), 0);  // the token labels placed again, to fit
    squareCells();
    if (m_sharedRange && !m_fixedRange) {
        lo = m_sharedRange->first;
        hi = m_sharedRange->second;
    }
    if (m_fixedRange || !std::isfinite(lo)) {
        lo = -1.0;
        hi = 1.0;
    } else if (hi - lo < 1e-6) {
        lo -= 0.5;
        hi += 0.5;
    }
    m_scale->setDataRange(QCPRange(lo, hi));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

// A label of 7-point text needs about 10 pixels: where cells are smaller, every second (third,
// ...) token is labelled, so that labels never overlap.
void HeatmapGrid::thinTokenLabels() {
    bool changed = false;
    m_labelStep.resize(m_maps.size(), 0);
    for (size_t k = 0; k < m_rects.size() && k < m_maps.size(); ++k) {
        const Heatmap& h = m_maps[k];
        if (h.tokens.size() != h.size || h.size == 0) {
            continue;
        }
        QCPAxis* x = m_rects[k]->axis(QCPAxis::atTop);
        const double cell = std::abs(x->coordToPixel(1.0) - x->coordToPixel(0.0));
        const int step = cell > 0 ? std::max(1, static_cast<int>(std::ceil(10.0 / cell))) : 1;
        if (step == m_labelStep[k]) {
            continue;
        }
        m_labelStep[k] = step;
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        for (int t = 0; t < h.size; t += step) {
            ticker->addTick(t, h.tokens[t]);
        }
        x->setTicker(ticker);
        m_rects[k]->axis(QCPAxis::atLeft)->setTicker(ticker);
        changed = true;
    }
    if (changed) {
        m_plot->replot(QCustomPlot::rpQueuedReplot);  // the ticks are placed before the layout
    }
}

void HeatmapGrid::squareCells() {
    for (size_t k = 0; k < m_rects.size() && k < m_maps.size(); ++k) {
        const double T = m_maps[k].size;
        const QRect area = m_rects[k]->rect();
        double spanX = T, spanY = T;
        if (area.width() > 0 && area.height() > 0) {
            if (area.width() > area.height()) {
                spanX = T * area.width() / area.height();
            } else {
                spanY = T * area.height() / area.width();
            }
        }
        m_rects[k]->axis(QCPAxis::atTop)->setRange(-0.5, spanX - 0.5);
        m_rects[k]->axis(QCPAxis::atLeft)->setRange(-0.5, spanY - 0.5);
    }
}

double HeatmapGrid::shownValue(int map, int i, int j) const {
    return m_colorMaps.at(static_cast<size_t>(map))->data()->cell(j, i);
}

QString HeatmapGrid::describeAt(const QPoint& position) const {
    for (size_t k = 0; k < m_rects.size(); ++k) {
        if (!m_rects[k]->rect().contains(position)) {
            continue;
        }
        const Heatmap& h = m_maps[k];
        const int j = static_cast<int>(
            std::lround(m_rects[k]->axis(QCPAxis::atTop)->pixelToCoord(position.x())));
        const int i = static_cast<int>(
            std::lround(m_rects[k]->axis(QCPAxis::atLeft)->pixelToCoord(position.y())));
        if (i < 0 || j < 0 || i >= h.size || j >= h.size) {
            return {};
        }
        auto label = [&](int t) {
            return h.tokens.size() == h.size ? QString("%1 (%2)").arg(t).arg(h.tokens[t])
                                             : QString::number(t);
        };
        const QString value =
            j > i ? QString("future token, not attended")
                  : QString::number(h.values[static_cast<size_t>(i) * h.size + j], 'f', 4);
        return QString("%1\ni = %2, j = %3: %4")
            .arg(h.title.section("  ", 0, 0), label(i), label(j), value);
    }
    return {};
}

}  // namespace nope::ui
