#include "widgets/score_table.h"

#include <QHeaderView>

#include <algorithm>

namespace nope::ui {

ScoreTable::ScoreTable(QWidget* parent) : QTableWidget(parent) {
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::ContiguousSelection);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    setMinimumHeight(90);
}

namespace {

// "0.94 / 0.08 / 0.70": R of the cosine, vector and variance probes, the paper's comparison.
QString probeCell(const ProbeReport& report, CapturePoint point, int layer, QString* tip) {
    QStringList shown, lines;
    for (ProbeFeature f : allProbeFeatures()) {
        const ProbeResult* r = report.find(point, layer, f);
        if (!r) {
            continue;
        }
        lines << QString("%1: R %2, NRMSE %3 (control R %4)")
                     .arg(QString::fromStdString(toString(f)))
                     .arg(r->pearsonR, 0, 'f', 3)
                     .arg(r->nrmse, 0, 'f', 3)
                     .arg(r->controlR, 0, 'f', 3);
    }
    for (ProbeFeature f : {ProbeFeature::Cosine, ProbeFeature::Vector, ProbeFeature::Variance}) {
        const ProbeResult* r = report.find(point, layer, f);
        shown << (r ? QString::number(r->pearsonR, 'f', 2) : QString("–"));
    }
    *tip = lines.join("\n");
    return lines.isEmpty() ? QString("–") : shown.join(" / ");
}

}  // namespace

// Longer than 60 lines for a reason: the header and every row (scores, then probes) are laid
// out in one pass over the same columns.
void ScoreTable::setScores(const std::vector<ScoreRow>& rows, CapturePoint point) {
    int layers = 0;
    bool anyProbes = false;
    for (const auto& r : rows) {
        if (r.analysis) {
            layers = std::max(layers, r.analysis->layerCount());
            anyProbes = anyProbes || (r.probes && !r.probes->empty());
        }
    }
    const bool anyRow = std::any_of(rows.begin(), rows.end(),
                                    [](const ScoreRow& r) { return r.analysis != nullptr; });
    QStringList columns;
    if (anyRow) {
        columns << "embedding";
    }
    for (int l = 1; l <= layers; ++l) {
        columns << QString("layer %1").arg(l);
    }
    const int layerColumns = static_cast<int>(columns.size());
    if (anyRow) {
        columns << "prompts";
    }  // what each row's scores are over (the Compare tab's table says too)
    m_data = TableData{};
    m_data.header << "stage"
                  << "point"
                  << "layer"
                  << "adjacency_mean"
                  << "adjacency_std"
                  << "prompts";
    if (anyProbes) {
        for (ProbeFeature f : allProbeFeatures()) {
            m_data.header << QString("probe_r_%1").arg(QString::fromStdString(toString(f)));
        }
    }

    setColumnCount(columns.size());
    setHorizontalHeaderLabels(columns);
    int shown = 0;
    for (const auto& r : rows) {
        shown += r.analysis ? (r.probes && !r.probes->empty() ? 2 : 1) : 0;
    }
    setRowCount(shown);
    QStringList labels;
    int row = 0;
    for (const auto& r : rows) {
        if (!r.analysis) {
            continue;
        }
        const bool probed = r.probes && !r.probes->empty();
        labels << r.label;
        if (probed) {
            labels << r.label + " · probe R cos / vec / var";
        }
        auto* prompts = new QTableWidgetItem(QString::number(r.analysis->samples));
        prompts->setTextAlignment(Qt::AlignCenter);
        prompts->setToolTip("the analysed prompts this row's scores are the mean over");
        setItem(row, layerColumns, prompts);
        for (int c = 0; c < layerColumns; ++c) {
            const CapturePoint p = c == 0 ? CapturePoint::Embedding : point;
            const LayerScores* s = r.analysis->find(p, c);
            auto* item = new QTableWidgetItem(s ? QString("%1 ± %2")
                                                      .arg(s->adjacencyMean, 0, 'f', 3)
                                                      .arg(s->adjacencyStd, 0, 'f', 3)
                                                : QString("–"));
            item->setTextAlignment(Qt::AlignCenter);
            setItem(row, c, item);
            if (probed) {
                QString tip;
                auto* probeItem = new QTableWidgetItem(probeCell(*r.probes, p, c, &tip));
                probeItem->setTextAlignment(Qt::AlignCenter);
                probeItem->setToolTip(tip);
                setItem(row + 1, c, probeItem);
            }
            if (s) {
                QStringList cells{r.label,
                                  QString::fromStdString(toString(p)),
                                  QString::number(c),
                                  QString::number(s->adjacencyMean, 'f', 6),
                                  QString::number(s->adjacencyStd, 'f', 6),
                                  QString::number(r.analysis->samples)};
                for (ProbeFeature f : allProbeFeatures()) {
                    if (!anyProbes) {
                        break;
                    }
                    const ProbeResult* pr = probed ? r.probes->find(p, c, f) : nullptr;
                    cells << (pr ? QString::number(pr->pearsonR, 'f', 6) : QString());
                }
                m_data.rows << cells;
            }
        }
        row += probed ? 2 : 1;
    }
    setVerticalHeaderLabels(labels);
    setToolTip(QString("adjacency probability score of the %1 point (mean ± std over prompts); "
                       "the first column is the embedding")
                   .arg(QString::fromStdString(toString(point))));
}

}  // namespace nope::ui
