#include "widgets/ablation_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "widgets/heatmap_grid.h"
#include "widgets/plot_style.h"
#include "widgets/qcp.h"

namespace nope::ui {

namespace {

QString cellText(double value) {
    return std::isfinite(value) ? QString::number(value, 'f', 4) : QString("NaN");
}

}  // namespace

AblationPanel::AblationPanel(QWidget* parent)
    : QWidget(parent),
      m_asAuthors(new QCheckBox("as the authors' code", this)),
      m_shrink(new QDoubleSpinBox(this)),
      m_samples(new QSpinBox(this)),
      m_point(new QComboBox(this)),
      m_run(new QPushButton("Run ablations", this)),
      m_model(new QLabel(this)),
      m_status(new QLabel(this)),
      m_view(new QTableWidget(this)),
      m_heatmaps(new HeatmapGrid(this)) {
    m_asAuthors->setToolTip(
        "Off: causality kept in every variant. On: the research code's own details, where "
        "sigmoid weighs every future token by sigmoid(0) and uniform averages all tokens, future "
        "ones included, and a zero row sum divides to NaN.");
    m_shrink->setRange(0.01, 1000.0);
    m_shrink->setValue(10.0);
    m_shrink->setDecimals(2);
    m_shrink->setToolTip("S of shrink_x: q = k = v = x / S");
    m_samples->setRange(1, 10000);
    m_samples->setValue(256);
    m_samples->setToolTip("test prompts of the form's task run under each ablation");
    for (CapturePoint p : allCapturePoints()) {
        if (p != CapturePoint::Embedding) {
            m_point->addItem(QString::fromStdString(toString(p)),
                             QString::fromStdString(toString(p)));
        }
    }
    setPoint(CapturePoint::Attn);
    m_point->setToolTip("the capture point of the layer columns (the paper's is attn)");
    m_run->setToolTip("run every ablation on the form's model at initialization");
    m_model->setWordWrap(true);
    m_status->setWordWrap(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->setVisible(false);
    m_heatmaps->setToolTip("the mean self-cosine matrices of the selected ablation, every layer");

    auto* controls = new QGridLayout;
    controls->addWidget(m_run, 0, 0);
    controls->addWidget(new QLabel("prompts"), 0, 1);
    controls->addWidget(m_samples, 0, 2);
    controls->addWidget(new QLabel("shrink_x S"), 0, 3);
    controls->addWidget(m_shrink, 0, 4);
    controls->addWidget(m_asAuthors, 0, 5);
    controls->addWidget(new QLabel("point"), 0, 6);
    controls->addWidget(m_point, 0, 7);
    controls->setColumnStretch(8, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_view);
    split->addWidget(m_heatmaps);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_model);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);

    connect(m_run, &QPushButton::clicked, this,
            [this] { Q_EMIT runRequested(config(), samples()); });
    connect(m_point, &QComboBox::currentIndexChanged, this, &AblationPanel::redraw);
    connect(m_view, &QTableWidget::itemSelectionChanged, this, &AblationPanel::drawHeatmaps);
    m_status->setText(
        "Each ablation switches one thing in every layer's attention (or replaces the inputs) of "
        "the model at init and scores every layer: press Run ablations.");
}

AblationConfig AblationPanel::config() const {
    AblationConfig c;
    c.shrinkX = m_shrink->value();
    c.asAuthors = m_asAuthors->isChecked();
    c.points = CaptureSet(allCapturePoints());
    return c;
}

int AblationPanel::samples() const {
    return m_samples->value();
}

void AblationPanel::setModelText(const QString& text) {
    m_model->setText(text);
}

CapturePoint AblationPanel::point() const {
    return parseCapturePoint(m_point->currentData().toString().toStdString())
        .value_or(CapturePoint::Attn);
}

void AblationPanel::setPoint(CapturePoint point) {
    const int index = m_point->findData(QString::fromStdString(toString(point)));
    if (index >= 0) {
        m_point->setCurrentIndex(index);
    }
}

Ablation AblationPanel::selected() const {
    const int row = m_view->currentRow();
    if (row >= 0 && row < static_cast<int>(m_table.results.size())) {
        return m_table.results[static_cast<size_t>(row)].ablation;
    }
    return Ablation::Softmax;
}

void AblationPanel::select(Ablation ablation) {
    for (size_t r = 0; r < m_table.results.size(); ++r) {
        if (m_table.results[r].ablation == ablation) {
            m_view->selectRow(static_cast<int>(r));
        }
    }
}

void AblationPanel::showRunning(const QString& message) {
    m_run->setEnabled(message.isEmpty());
    if (!message.isEmpty()) {
        m_status->setText(message);
    }
}

void AblationPanel::showFailure(const QString& message) {
    m_run->setEnabled(true);
    m_status->setText("The ablations stopped: " + message);
}

void AblationPanel::clearTable(const QString& why) {
    m_table = AblationTable{};
    m_status->setText(why);
    redraw();
}

void AblationPanel::showTable(const AblationTable& table) {
    const Ablation keep = selected();
    m_table = table;
    m_run->setEnabled(true);
    m_status->setText(
        QString("%1 ablations on %2 prompts of %3 tokens in %4 s (%5). Rows: the ablation; "
                "columns: the adjacency score (mean over prompts) of the embedding and each layer. "
                "Select a row for its heatmaps.")
            .arg(table.results.size())
            .arg(table.samples)
            .arg(table.seqLen)
            .arg(table.seconds, 0, 'f', 1)
            .arg(table.config.asAuthors ? "the authors' variants" : "causal variants") +
        (table.find(Ablation::Eqx) ? QString()
                                   : QString(" eqx is left out: it needs a model at least as "
                                             "wide as the prompts are long.")));
    redraw();
    select(keep);
}

TableData AblationPanel::tableData() const {
    TableData t;
    if (m_table.results.empty()) {
        return t;
    }
    const CapturePoint p = point();
    const int layers = m_table.results.front().analysis.layerCount();
    t.header = {"ablation", "embedding"};
    for (int l = 1; l <= layers; ++l) {
        t.header << QString("%1 layer %2").arg(QString::fromStdString(toString(p))).arg(l);
    }
    for (const auto& r : m_table.results) {
        QStringList row{QString::fromStdString(toString(r.ablation))};
        const LayerScores* e = r.analysis.find(CapturePoint::Embedding, 0);
        row << (e ? cellText(e->adjacencyMean) : QString());
        for (int l = 1; l <= layers; ++l) {
            const LayerScores* s = r.analysis.find(p, l);
            row << (s ? cellText(s->adjacencyMean) : QString());
        }
        t.rows.push_back(row);
    }
    return t;
}

// The table with each score cell shaded by the heatmap gradient, and the ablation's description
// as the row's tooltip.
void AblationPanel::redraw() {
    const int row = m_view->currentRow();
    const TableData t = tableData();
    m_view->blockSignals(true);
    ui::showTable(m_view, t);
    QCPColorGradient gradient = heatmapGradient();
    for (int r = 0; r < m_view->rowCount(); ++r) {
        const auto& result = m_table.results[static_cast<size_t>(r)];
        const QString tip =
            QString::fromStdString(describeAblation(result.ablation, m_table.config.asAuthors)) +
            (result.nonFinite ? "\nSome hidden states were NaN (a zero row sum)." : "");
        for (int c = 0; c < m_view->columnCount(); ++c) {
            QTableWidgetItem* item = m_view->item(r, c);
            item->setToolTip(tip);
            bool ok = false;
            const double value = item->text().toDouble(&ok);
            if (c > 0 && ok) {
                QColor color = gradient.color(value, QCPRange(0.0, 1.0));
                color.setAlpha(120);
                item->setBackground(color);
            }
        }
    }
    m_view->blockSignals(false);
    // room for every column, so that the splitter gives the table what it needs
    int width = 2 * m_view->frameWidth() + 4;
    for (int c = 0; c < m_view->columnCount(); ++c) {
        width += m_view->columnWidth(c);
    }
    m_view->setMinimumWidth(std::min(width, 900));
    if (row >= 0 && row < m_view->rowCount()) {
        m_view->selectRow(row);
    }
    drawHeatmaps();
}

void AblationPanel::drawHeatmaps() {
    const AblationResult* r = m_table.find(selected());
    if (!r) {
        m_heatmaps->setHeatmaps({});
        return;
    }
    std::vector<Heatmap> maps;
    for (const LayerScores& row : r->analysis.rows) {
        if (row.point != CapturePoint::Embedding && row.point != point()) {
            continue;
        }
        Heatmap h;
        h.title =
            QString("%1 %2  %3")
                .arg(QString::fromStdString(toString(r->ablation)))
                .arg(row.layer == 0 ? QString("embedding") : QString("layer %1").arg(row.layer))
                .arg(cellText(row.adjacencyMean));
        h.size = r->analysis.seqLen;
        h.values = row.meanMatrix;
        maps.push_back(std::move(h));
    }
    m_heatmaps->setHeatmaps(std::move(maps));
}

}  // namespace nope::ui
