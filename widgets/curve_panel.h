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

    // Redraws from the whole history (snapshots by step), every test evaluation (by step, also
    // those between snapshots) and the live training losses past the last snapshot; `marker` is
    // the step to mark.
    void setHistory(const std::vector<Snapshot>& history, const std::vector<EvalPoint>& evaluations,
                    const std::vector<LossPoint>& liveLosses, CapturePoint point, int marker);
    // The two plots one above the other (vertical, the default) or side by side (a window too
    // narrow for a column of its own puts the panel under the views).
    void setOrientation(Qt::Orientation orientation);
    // What the two plots say while they have nothing to draw (the window says why); an empty
    // text: the plot's own.
    void setEmptyTexts(const QString& adjacency, const QString& training);

    QCustomPlot* adjacencyPlot() const { return m_adjacency; }
    QCustomPlot* trainingPlot() const { return m_training; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void drawAdjacency(const std::vector<Snapshot>& history, CapturePoint point, int marker,
                       bool dark);
    void drawTraining(const std::vector<Snapshot>& history,
                      const std::vector<EvalPoint>& evaluations,
                      const std::vector<LossPoint>& liveLosses, int marker, bool dark);
    QCustomPlot* m_adjacency;
    QCustomPlot* m_training;
    QCPItemStraightLine* m_adjacencyMarker = nullptr;
    QCPItemStraightLine* m_trainingMarker = nullptr;
    static constexpr const char* kAdjacencyEmpty =
        "The adjacency score of every layer appears here:\npress Initialize for the model at "
        "initialization,\nor Train to follow it as the model learns.";
    static constexpr const char* kTrainingEmpty =
        "Loss and test accuracy appear here\nonce training starts (press Train).";
    QString m_adjacencyEmpty = kAdjacencyEmpty;
    QString m_trainingEmpty = kTrainingEmpty;
};

}  // namespace nope::ui
