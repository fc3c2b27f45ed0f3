#include "score_table.h"

#include <QHeaderView>

namespace nope::ui {

ScoreTable::ScoreTable(QWidget* parent) : QTableWidget(parent) {
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::ContiguousSelection);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    setMinimumHeight(90);
}

void ScoreTable::setScores(const std::vector<ScoreRow>& rows, CapturePoint point) {
    int layers = 0;
    for (const auto& r : rows) {
        if (r.analysis) {
            layers = std::max(layers, r.analysis->layerCount());
        }
    }
    QStringList columns{"embedding"};
    for (int l = 1; l <= layers; ++l) {
        columns << QString("layer %1").arg(l);
    }
    m_data = TableData{};
    m_data.header << "stage"
                  << "point"
                  << "layer"
                  << "adjacency_mean"
                  << "adjacency_std";

    setColumnCount(columns.size());
    setHorizontalHeaderLabels(columns);
    int shown = 0;
    for (const auto& r : rows) {
        shown += r.analysis ? 1 : 0;
    }
    setRowCount(shown);
    QStringList labels;
    int row = 0;
    for (const auto& r : rows) {
        if (!r.analysis) {
            continue;
        }
        labels << r.label;
        for (int c = 0; c < columns.size(); ++c) {
            const CapturePoint p = c == 0 ? CapturePoint::Embedding : point;
            const LayerScores* s = r.analysis->find(p, c);
            auto* item = new QTableWidgetItem(s ? QString("%1 ± %2")
                                                      .arg(s->adjacencyMean, 0, 'f', 3)
                                                      .arg(s->adjacencyStd, 0, 'f', 3)
                                                : QString("–"));
            item->setTextAlignment(Qt::AlignCenter);
            setItem(row, c, item);
            if (s) {
                m_data.rows << QStringList{r.label, QString::fromStdString(toString(p)),
                                           QString::number(c),
                                           QString::number(s->adjacencyMean, 'f', 6),
                                           QString::number(s->adjacencyStd, 'f', 6)};
            }
        }
        ++row;
    }
    setVerticalHeaderLabels(labels);
    setToolTip(QString("adjacency probability score of the %1 point (mean ± std over prompts); "
                       "the first column is the embedding")
                   .arg(QString::fromStdString(toString(point))));
}

}  // namespace nope::ui
