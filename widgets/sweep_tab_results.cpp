// The Sweep tab's results: the choices of what to draw (stage, point, layer, the settings on the
// axes and the values the others are held at), the two figures and the table. Part of SweepTab,
// in a file of its own.
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QTableWidget>

#include <cmath>
#include <map>
#include <set>

#include "widgets/sweep_tab.h"

namespace nope::ui {

namespace {

QString cell(double v, int decimals = 4) {
    return std::isfinite(v) ? QString::number(v, 'f', decimals) : QString();
}

void refill(QComboBox* combo, const QStringList& items, const QString& keep) {
    combo->clear();
    combo->addItems(items);
    const int index = combo->findText(keep);
    combo->setCurrentIndex(index >= 0 ? index : 0);
}

}  // namespace

// The choices the results offer, the current ones kept when still there.
void SweepTab::fillChoices() {
    m_filling = true;
    std::set<std::string> stages, points;
    std::set<int> layers;
    for (const auto& row : m_results.summary) {
        stages.insert(row.stage);
        if (row.point != "embedding") {
            points.insert(row.point);
        }
        layers.insert(row.layer);
    }
    QStringList stageItems, pointItems, axes;
    for (const auto& s : stages) {
        stageItems << QString::fromStdString(s);
    }
    for (const auto& p : points) {
        pointItems << QString::fromStdString(p);
    }
    for (const auto& a : m_results.axes) {
        axes << QString::fromStdString(a);
    }
    refill(m_stage, stageItems,
           m_stage->currentText().isEmpty() ? "trained" : m_stage->currentText());
    refill(m_point, pointItems, m_point->currentText().isEmpty() ? "attn" : m_point->currentText());
    const int layer = m_layer->currentData().isValid() ? m_layer->currentData().toInt() : 1;
    m_layer->clear();
    for (int l : layers) {
        m_layer->addItem(l == 0 ? QString("embedding") : QString("layer %1").arg(l), l);
    }
    m_layer->setCurrentIndex(std::max(0, m_layer->findData(layer)));
    const int x = m_x->currentIndex(), y = m_y->currentIndex();
    m_x->clear();
    m_y->clear();
    m_x->addItems(axes);
    m_y->addItems(axes);
    m_x->setCurrentIndex(x >= 0 && x < axes.size() ? x : 0);
    m_y->setCurrentIndex(y >= 0 && y < axes.size() ? y : std::min(1, int(axes.size()) - 1));
    // The values the settings off the axes are held at: one box per setting, the values chosen
    // so far kept.
    std::map<QString, QString> heldBefore;
    for (int a = 0; a < static_cast<int>(m_held.size()) && a < m_heldAxes.size(); ++a) {
        heldBefore[m_heldAxes[a]] = m_held[static_cast<size_t>(a)]->currentText();
    }
    while (m_heldLayout->rowCount() > 0) {
        m_heldLayout->removeRow(0);
    }
    m_held.clear();
    m_heldAxes = axes;
    for (size_t a = 0; a < m_results.axes.size(); ++a) {
        auto* combo = new QComboBox(this);
        for (const auto& v : axisValues(m_results, a)) {
            combo->addItem(QString::fromStdString(v));
        }
        combo->setToolTip("the value this setting is held at when it is not on an axis");
        connect(combo, &QComboBox::currentIndexChanged, this, [this] {
            if (!m_filling) {
                redraw();
            }
        });
        const QString axis = axes[static_cast<int>(a)];
        if (const auto it = heldBefore.find(axis); it != heldBefore.end()) {
            combo->setCurrentIndex(std::max(0, combo->findText(it->second)));
        }
        m_heldLayout->addRow(QString("%1 held at").arg(axis), combo);
        m_held.push_back(combo);
    }
    m_filling = false;
}

SweepSelection SweepTab::selection() const {
    SweepSelection s;
    s.stage = m_stage->currentText().toStdString();
    s.point = m_point->currentText().toStdString();
    s.layer = m_layer->currentData().isValid() ? m_layer->currentData().toInt() : 1;
    for (size_t a = 0; a < m_held.size(); ++a) {
        s.fixed[a] = m_held[a]->currentText().toStdString();
    }
    return s;
}

void SweepTab::redraw() {
    const SweepSelection s = selection();
    const auto x = static_cast<size_t>(std::max(0, m_x->currentIndex()));
    const auto y = static_cast<size_t>(std::max(0, m_y->currentIndex()));
    for (size_t a = 0; a < m_held.size(); ++a) {  // a setting on an axis is not held
        m_held[a]->setEnabled(a != x && a != y);
    }
    m_figureProblem = drawScoreHeatmap(m_heatmap, m_results, x, y, s);
    const QString lines = drawScoreLines(m_lines, m_results, x, s);
    if (m_figureProblem.isEmpty()) {
        m_figureProblem = lines;
    }
    std::vector<size_t> free;
    for (size_t a = 0; a < m_results.axes.size(); ++a) {
        free.push_back(a);
    }
    fillTable(selectRows(m_results, s, free));
}

// Every summary row at the chosen stage and point: the settings, the layer, the score over seeds.
void SweepTab::fillTable(const std::vector<const study::SummaryRow*>& rows) {
    m_data = {};
    for (const auto& a : m_results.axes) {
        m_data.header << QString::fromStdString(a);
    }
    m_data.header << "stage"
                  << "point"
                  << "layer"
                  << "adjacency_mean"
                  << "adjacency_std_over_seeds"
                  << "ci95_low"
                  << "ci95_high"
                  << "seeds";
    for (const study::SummaryRow* row : rows) {
        QStringList cells;
        for (const auto& v : row->values) {
            cells << QString::fromStdString(v);
        }
        cells << QString::fromStdString(row->stage) << QString::fromStdString(row->point)
              << QString::number(row->layer) << cell(row->adjacency.mean) << cell(row->adjacency.sd)
              << cell(row->adjacency.low) << cell(row->adjacency.high)
              << QString::number(row->adjacency.n);
        m_data.rows << cells;
    }
    showTable(m_table, m_data);
}

}  // namespace nope::ui
