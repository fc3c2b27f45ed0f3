#include "widgets/side_by_side.h"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

#include <cmath>

#include "util/error_text.h"
#include "widgets/heatmap_grid.h"

namespace nope::ui {

namespace {

constexpr size_t kCachedSnapshots = 8;  // snapshots can hold megabytes of matrices

QString titleOf(const LayerScores& row, const QString& side) {
    const QString where =
        row.layer == 0
            ? QString("embedding")
            : QString("%1 %2").arg(QString::fromStdString(toString(row.point))).arg(row.layer);
    return QString("%1: %2  %3").arg(side, where).arg(row.adjacencyMean, 0, 'f', 3);
}

std::vector<const LayerScores*> rowsAt(const Analysis& analysis, CapturePoint point) {
    std::vector<const LayerScores*> rows;
    for (const auto& row : analysis.rows) {
        if ((row.point == CapturePoint::Embedding || row.point == point) &&
            !row.meanMatrix.empty()) {
            rows.push_back(&row);
        }
    }
    return rows;
}

}  // namespace

SideBySide::SideBySide(QWidget* parent)
    : QWidget(parent), m_point(new QComboBox(this)), m_message(new QLabel(this)) {
    auto* controls = new QGridLayout;
    const char* names[2] = {"A", "B"};
    for (int side = 0; side < 2; ++side) {
        m_run[side] = new QComboBox(this);
        m_step[side] = new QComboBox(this);
        m_run[side]->setToolTip("the run of this row");
        m_step[side]->setToolTip("the snapshot of this row: step 0 is the model at init");
        m_step[side]->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        m_run[side]->setMinimumContentsLength(24);
        controls->addWidget(new QLabel(names[side]), side, 0);
        controls->addWidget(m_run[side], side, 1);
        controls->addWidget(m_step[side], side, 2);
        connect(m_run[side], &QComboBox::currentIndexChanged, this, [this, side] {
            fillSteps(side);
            redraw();
        });
        connect(m_step[side], &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    }
    for (CapturePoint p : {CapturePoint::Attn, CapturePoint::AttnIn, CapturePoint::Resid}) {
        m_point->addItem(QString::fromStdString(toString(p)));
    }
    controls->addWidget(new QLabel("point"), 0, 3);
    controls->addWidget(m_point, 0, 4);
    controls->setColumnStretch(5, 1);
    connect(m_point, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    m_message->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(controls);
    layout->addWidget(m_message);
    for (int g = 0; g < 3; ++g) {
        m_grids[g] = new HeatmapGrid(this);
        layout->addWidget(m_grids[g], 1);
    }
    m_grids[2]->setScaleLabel("difference A - B");
    redraw();
}

void SideBySide::setRuns(std::vector<RunSummary> runs) {
    m_runs = std::move(runs);
    for (int side = 0; side < 2; ++side) {
        m_run[side]->blockSignals(true);
        m_run[side]->clear();
        for (const auto& run : m_runs) {
            m_run[side]->addItem(QString::fromStdString(run.name));
        }
        m_run[side]->setCurrentIndex(m_runs.empty() ? -1 : 0);
        m_run[side]->blockSignals(false);
        fillSteps(side);
    }
    if (m_step[1]->count() > 0) {  // B: the last snapshot, as Figure 1 puts trained beside init
        m_step[1]->blockSignals(true);
        m_step[1]->setCurrentIndex(m_step[1]->count() - 1);
        m_step[1]->blockSignals(false);
    }
    redraw();
}

void SideBySide::choose(int side, int run, int step) {
    m_run[side]->setCurrentIndex(run);
    const int index = m_step[side]->findData(step);
    if (index >= 0) {
        m_step[side]->setCurrentIndex(index);
    }
}

void SideBySide::fillSteps(int side) {
    m_step[side]->blockSignals(true);
    m_step[side]->clear();
    const int run = m_run[side]->currentIndex();
    if (run >= 0 && run < static_cast<int>(m_runs.size())) {
        for (int step : snapshotSteps(m_runs[static_cast<size_t>(run)].dir)) {
            m_step[side]->addItem(
                step == 0 ? QString("init (step 0)") : QString("step %1").arg(step), step);
        }
    }
    m_step[side]->blockSignals(false);
}

std::shared_ptr<const Snapshot> SideBySide::snapshot(int side) {
    const int run = m_run[side]->currentIndex();
    if (run < 0 || run >= static_cast<int>(m_runs.size()) || m_step[side]->currentIndex() < 0) {
        return nullptr;
    }
    const std::string dir = m_runs[static_cast<size_t>(run)].dir.string();
    const int step = m_step[side]->currentData().toInt();
    const auto key = std::make_pair(dir, step);
    auto it = m_cache.find(key);
    if (it == m_cache.end()) {
        if (m_cache.size() >= kCachedSnapshots) {
            m_cache.clear();
        }
        it = m_cache.emplace(key, std::make_shared<const Snapshot>(readSnapshot(dir, step))).first;
    }
    return it->second;
}

void SideBySide::redraw() {
    const CapturePoint point =
        parseCapturePoint(m_point->currentText().toStdString()).value_or(CapturePoint::Attn);
    std::vector<Heatmap> maps[3];
    QStringList problems;
    std::shared_ptr<const Snapshot> shots[2];
    for (int side = 0; side < 2; ++side) {
        try {
            shots[side] = snapshot(side);
        } catch (const std::exception& e) {
            problems << QString::fromStdString(nope::errorText(e));
        }
        if (!shots[side]) {
            continue;
        }
        const QString name =
            QString("%1 %2").arg(side == 0 ? "A" : "B", m_step[side]->currentText());
        for (const LayerScores* row : rowsAt(shots[side]->analysis, point)) {
            maps[side].push_back(
                {titleOf(*row, name), shots[side]->analysis.seqLen, row->meanMatrix, {}});
        }
    }
    if (shots[0] && shots[1]) {
        const Analysis& a = shots[0]->analysis;
        const Analysis& b = shots[1]->analysis;
        if (a.seqLen != b.seqLen) {
            problems << QString(
                            "No difference: A's prompts have %1 tokens and B's %2 (compare "
                            "runs of one task).")
                            .arg(a.seqLen)
                            .arg(b.seqLen);
        } else {
            for (const LayerScores* row : rowsAt(a, point)) {
                const LayerScores* other = b.find(row->point, row->layer);
                if (!other || other->meanMatrix.size() != row->meanMatrix.size()) {
                    continue;
                }
                Heatmap h{QString("A - B: %1")
                              .arg(row->layer == 0 ? QString("embedding")
                                                   : QString("layer %1").arg(row->layer)),
                          a.seqLen,
                          row->meanMatrix,
                          {}};
                for (size_t i = 0; i < h.values.size(); ++i) {
                    h.values[i] -= other->meanMatrix[i];
                }
                h.title +=
                    QString("  %1").arg(row->adjacencyMean - other->adjacencyMean, 0, 'f', 3);
                maps[2].push_back(std::move(h));
            }
        }
    } else if (m_runs.empty()) {
        problems << "Tick runs in the list above (or train one) to put two snapshots side by side.";
    }
    for (int g = 0; g < 3; ++g) {
        m_grids[g]->setColumns(std::max<int>(1, static_cast<int>(maps[g].size())));
        m_grids[g]->setHeatmaps(std::move(maps[g]));
    }
    // A and B on one colour scale, so that a colour means one value in both (A - B keeps its own)
    auto range = m_grids[0]->valueRange();
    if (const auto b = m_grids[1]->valueRange(); range && b) {
        range =
            std::make_pair(std::min(range->first, b->first), std::max(range->second, b->second));
    } else if (!range) {
        range = b;
    }
    m_grids[0]->setSharedRange(range);
    m_grids[1]->setSharedRange(range);
    m_message->setText(problems.join("\n"));
    m_message->setVisible(!problems.isEmpty());
}

QString SideBySide::message() const {
    return m_message->text();
}

}  // namespace nope::ui
