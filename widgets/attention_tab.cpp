#include "widgets/attention_tab.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "widgets/heatmap_grid.h"
#include "widgets/plot_style.h"
#include "widgets/qcp.h"
#include "widgets/theme_colors.h"

namespace nope::ui {

namespace {

// Uniform causal attention over T tokens: the mean over queries of ln(i + 1) and of i / 2.
double uniformEntropy(int T) {
    double sum = 0.0;
    for (int i = 0; i < T; ++i) {
        sum += std::log(i + 1.0);
    }
    return T > 0 ? sum / T : 0.0;
}

double uniformDistance(int T) {
    return T > 0 ? (T - 1) / 4.0 : 0.0;
}

QCustomPlot* makeCurvePlot(QWidget* parent, const QString& label) {
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumHeight(130);
    plot->legend->setVisible(false);  // the table's head cells carry the lines' colours
    plot->xAxis->setLabel("step");
    // a narrow plot: at most four step labels (the step between them set in drawCurves)
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed));
    plot->yAxis->setLabel(label);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    return plot;
}

QCPItemStraightLine* makeMarker(QCustomPlot* plot) {
    auto* line = new QCPItemStraightLine(plot);
    line->setVisible(false);
    return line;
}

const AttentionAnalysis& attentionOf(const Snapshot& s) {
    return s.analysis.attention;
}

}  // namespace

AttentionTab::AttentionTab(QWidget* parent)
    : QWidget(parent),
      m_layer(new QComboBox),
      m_prompt(new QComboBox),
      m_summary(new QLabel),
      m_heatmaps(new HeatmapGrid),
      m_table(new QTableWidget),
      m_entropy(makeCurvePlot(this, "entropy (nats)")),
      m_distance(makeCurvePlot(this, "mean distance (tokens)")) {
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel("layer"));
    bar->addWidget(m_layer);
    bar->addWidget(new QLabel("show"));
    bar->addWidget(m_prompt);
    bar->addWidget(m_summary, 1);
    m_layer->setToolTip("the layer whose heads are shown");
    m_prompt->setToolTip("the mean weights over the analysed prompts, or one prompt's own");
    m_prompt->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_summary->setWordWrap(true);
    m_heatmaps->setScaleLabel("attention weight");
    m_heatmaps->setToolTip(
        "Each head's attention weights: row i is query token i, column j the key token j it "
        "reads. Causal attention leaves the upper triangle empty. Double-click to enlarge.");
    m_table->setToolTip(
        "Entropy: -sum w ln w over the keys, mean over queries and prompts; uniform causal "
        "attention has ln(i + 1) at query i. Mean distance: sum w (i - j), how far back a "
        "query reads on average; uniform causal attention reads i / 2 back. Each head's cell "
        "has the colour of its lines in the curves beside (uniform: the dashed grey line).");

    m_table->verticalHeader()->setVisible(false);
    auto* numbers = new QSplitter(Qt::Horizontal);
    numbers->addWidget(m_table);
    numbers->addWidget(m_entropy);
    numbers->addWidget(m_distance);
    numbers->setStretchFactor(0, 1);
    numbers->setStretchFactor(1, 2);
    numbers->setStretchFactor(2, 2);
    auto* split = new QSplitter(Qt::Vertical);  // the heads above, their numbers below
    split->addWidget(m_heatmaps);
    split->addWidget(numbers);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(split, 1);

    m_entropyMarker = makeMarker(m_entropy);
    m_distanceMarker = makeMarker(m_distance);
    applyPlotTheme(m_entropy, palette());
    applyPlotTheme(m_distance, palette());
    connect(m_layer, &QComboBox::currentIndexChanged, this, [this] { Q_EMIT choiceChanged(); });
    connect(m_prompt, &QComboBox::currentIndexChanged, this, [this] { Q_EMIT choiceChanged(); });
    showNothing();
}

int AttentionTab::layer() const {
    return m_layer->currentIndex() + 1;
}

void AttentionTab::setLayer(int layer) {
    if (layer >= 1 && layer <= m_layer->count()) {
        m_layer->setCurrentIndex(layer - 1);
    }
}

int AttentionTab::prompt() const {
    return m_prompt->currentIndex() - 1;
}

void AttentionTab::setPrompt(int prompt) {
    if (prompt + 1 >= 0 && prompt + 1 < m_prompt->count()) {
        m_prompt->setCurrentIndex(prompt + 1);
    }
}

// The layers and the kept prompts of the shown snapshot in the two choosers, keeping the choice.
void AttentionTab::updateChoices(const Snapshot& s) {
    const int layers = attentionOf(s).layerCount();
    const int keptLayer = layer();
    m_layer->blockSignals(true);
    if (m_layer->count() != layers) {
        m_layer->clear();
        for (int l = 1; l <= layers; ++l) {
            m_layer->addItem(QString::number(l));
        }
        m_layer->setCurrentIndex(std::clamp(keptLayer, 1, layers) - 1);
    }
    m_layer->blockSignals(false);
    const int keptPrompt = m_prompt->currentIndex();
    m_prompt->blockSignals(true);
    m_prompt->clear();
    m_prompt->addItem("mean over prompts");
    for (size_t k = 0; k < s.analysis.keptPrompts.size(); ++k) {
        QString text = QString::fromStdString(s.analysis.keptPrompts[k]);
        m_prompt->addItem(QString("prompt %1: %2").arg(k + 1).arg(text.remove('\n')));
    }
    m_prompt->setCurrentIndex(keptPrompt >= 0 && keptPrompt < m_prompt->count() ? keptPrompt : 0);
    m_prompt->blockSignals(false);
}

void AttentionTab::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        applyPlotTheme(m_entropy, palette());
        applyPlotTheme(m_distance, palette());
        m_entropy->replot(QCustomPlot::rpQueuedReplot);
        m_distance->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

void AttentionTab::showNothing() {
    m_heatmaps->setHeatmaps({});
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
    m_shownTable = {};
    m_summary->setText(m_emptyText.isEmpty()
                           ? QString("Each head's attention weights appear here once there is a "
                                     "model: press Initialize, or Train to watch them change.")
                           : m_emptyText);
    for (QCustomPlot* plot : {m_entropy, m_distance}) {
        plot->clearGraphs();
        showPlaceholder(plot, "Curves over training appear here.");
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void AttentionTab::setHistory(const std::vector<Snapshot>& history, int shown) {
    if (shown < 0 || shown >= static_cast<int>(history.size()) ||
        attentionOf(history[static_cast<size_t>(shown)]).empty()) {
        showNothing();
        if (shown >= 0 && shown < static_cast<int>(history.size())) {
            m_summary->setText(
                "This snapshot has no attention weights (a run recorded before they were).");
        }
        return;
    }
    const Snapshot& s = history[static_cast<size_t>(shown)];
    const AttentionAnalysis& a = attentionOf(s);
    updateChoices(s);
    const int prompt = this->prompt();
    m_seqLen = a.seqLen;
    drawHeatmaps(s);
    fillTable(s);
    drawCurves(history, s.step);
    m_summary->setText(
        QString("step %1: layer %2's %3 heads, %4 (%5 tokens). Uniform causal attention would "
                "have entropy %6 and mean distance %7.")
            .arg(s.step)
            .arg(layer())
            .arg(a.headCount())
            .arg(prompt >= 0 ? QString("prompt %1's weights").arg(prompt + 1)
                             : QString("the mean over %1 prompts").arg(a.samples))
            .arg(a.seqLen)
            .arg(uniformEntropy(a.seqLen), 0, 'f', 2)
            .arg(uniformDistance(a.seqLen), 0, 'f', 2));
}

void AttentionTab::drawHeatmaps(const Snapshot& s) {
    const AttentionAnalysis& a = attentionOf(s);
    const int prompt = this->prompt();
    std::vector<Heatmap> maps;
    for (const auto& h : a.heads) {
        if (h.layer != layer()) {
            continue;
        }
        Heatmap map;
        map.title = QString("head %1  H %2, d %3")
                        .arg(h.head)
                        .arg(h.entropy, 0, 'f', 2)
                        .arg(h.meanDistance, 0, 'f', 2);
        map.size = a.seqLen;
        const bool kept = prompt >= 0 && prompt < static_cast<int>(h.promptMatrices.size());
        map.values = kept ? h.promptMatrices[static_cast<size_t>(prompt)] : h.meanMatrix;
        if (kept && prompt < static_cast<int>(s.analysis.keptPrompts.size())) {
            map.tokens = promptTokens(s.analysis.keptPrompts[static_cast<size_t>(prompt)]);
        }
        maps.push_back(std::move(map));
    }
    m_heatmaps->setHeatmaps(std::move(maps));
}

void AttentionTab::fillTable(const Snapshot& s) {
    TableData t;
    t.header = {"layer", "head", "entropy", "mean distance"};
    const QString l = QString::number(layer());
    for (const auto& h : attentionOf(s).heads) {
        if (h.layer == layer()) {
            t.rows.push_back({l, QString::number(h.head), QString::number(h.entropy, 'f', 3),
                              QString::number(h.meanDistance, 'f', 3)});
        }
    }
    t.rows.push_back({l, "uniform causal", QString::number(uniformEntropy(m_seqLen), 'f', 3),
                      QString::number(uniformDistance(m_seqLen), 'f', 3)});
    TableData shown = t;  // without the layer column, which the layer box says
    shown.header.removeFirst();
    for (QStringList& row : shown.rows) {
        row.removeFirst();
    }
    showTable(m_table, shown);
    const bool dark = isDark(palette());
    const int heads = m_table->rowCount() - 1;
    for (int r = 0; r < m_table->rowCount(); ++r) {  // each head in its curves' colour
        QColor color = layerColor(r < heads ? r + 1 : 0, heads, dark);
        color.setAlpha(110);
        m_table->item(r, 0)->setBackground(color);
    }
    int width = 2 * m_table->frameWidth() + 4;  // room for every column
    for (int c = 0; c < m_table->columnCount(); ++c) {
        width += m_table->columnWidth(c);
    }
    m_table->setMinimumWidth(std::min(width, 400));
    m_shownTable = std::move(t);
}

// One line per head of the chosen layer over the snapshots that recorded attention, and a
// dashed line at uniform causal attention's value.
void AttentionTab::drawCurves(const std::vector<Snapshot>& history, int marker) {
    const bool dark = isDark(palette());
    const int heads = [&] {
        for (const auto& s : history) {
            if (!attentionOf(s).empty()) {
                return attentionOf(s).headCount();
            }
        }
        return 0;
    }();
    for (auto [plot, line, isEntropy] : {std::tuple{m_entropy, m_entropyMarker, true},
                                         std::tuple{m_distance, m_distanceMarker, false}}) {
        plot->clearGraphs();
        for (int h = 0; h < heads; ++h) {
            QVector<double> steps, values;
            for (const auto& s : history) {
                if (const HeadAttention* a = attentionOf(s).find(layer(), h)) {
                    steps.push_back(s.step);
                    values.push_back(isEntropy ? a->entropy : a->meanDistance);
                }
            }
            QCPGraph* g = plot->addGraph();
            g->setData(steps, values, /*alreadySorted=*/true);
            g->setName(QString("head %1").arg(h));
            g->setPen(QPen(layerColor(h + 1, heads, dark), 2));
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
        }
        QCPGraph* uniform = plot->addGraph();
        const double value = isEntropy ? uniformEntropy(m_seqLen) : uniformDistance(m_seqLen);
        const double first = history.empty() ? 0 : history.front().step;
        const double last = history.empty() ? 1 : std::max(history.back().step, 1);
        uniform->setData(QVector<double>{first, last}, QVector<double>{value, value});
        uniform->setName("uniform causal");
        uniform->setPen(QPen(layerColor(0, heads, dark), 1.5, Qt::DashLine));
        plot->xAxis->rescale();
        if (auto fixed = plot->xAxis->ticker().dynamicCast<QCPAxisTickerFixed>()) {
            const double span = std::max(plot->xAxis->range().size(), 1.0);
            const double raw = span / 3.0, unit = std::pow(10.0, std::floor(std::log10(raw)));
            const double nice = raw / unit <= 2 ? 2 * unit : raw / unit <= 5 ? 5 * unit : 10 * unit;
            fixed->setTickStep(std::max(1.0, nice));
        }
        plot->yAxis->rescale();  // zoomed on the lines: heads differ by little
        const QCPRange r = plot->yAxis->range();
        const double pad = std::max(0.1 * r.size(), 0.05);
        plot->yAxis->setRange(std::max(0.0, r.lower - pad), r.upper + pad);
        line->setPen(QPen(themeColor(ThemeColor::StepMarker, dark), 1, Qt::DashLine));
        line->point1->setCoords(marker, 0);
        line->point2->setCoords(marker, 1);
        line->setVisible(marker >= 0);
        showPlaceholder(plot, QString());
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

QString AttentionTab::summaryText() const {
    return m_summary->text();
}

}  // namespace nope::ui
