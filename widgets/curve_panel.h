// Curves over training steps: the adjacency score of every layer (one line per layer, with a
// legend) for one capture point, and the train loss, test loss and test accuracy. A vertical
// line marks the step shown in the heatmaps.
#pragma once

#include <QWidget>

#include <vector>

#include "model/capture_point.h"
#include "run/snapshot.h"
#include "run/snapshot_history.h"

class QCustomPlot;
class QCPItemStraightLine;

namespace nope::ui {

class CurvePanel : public QWidget {
    Q_OBJECT

public:
    explicit CurvePanel(QWidget* parent = nullptr);

    // Redraws from the whole history (snapshots by step) and every test evaluation (by step,
    // also those between snapshots); `marker` is the step to mark.
    void setHistory(const std::vector<Snapshot>& history, const std::vector<EvalPoint>& evaluations,
                    CapturePoint point, int marker);

    QCustomPlot* adjacencyPlot() const { return m_adjacency; }
    QCustomPlot* trainingPlot() const { return m_training; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void drawAdjacency(const std::vector<Snapshot>& history, CapturePoint point, int marker,
                       bool dark);
    void drawTraining(const std::vector<Snapshot>& history,
                      const std::vector<EvalPoint>& evaluations, int marker, bool dark);
    QCustomPlot* m_adjacency;
    QCustomPlot* m_training;
    QCPItemStraightLine* m_adjacencyMarker = nullptr;
    QCPItemStraightLine* m_trainingMarker = nullptr;
};

}  // namespace nope::ui
