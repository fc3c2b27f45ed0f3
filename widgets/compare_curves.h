// Runs compared over training: the adjacency score of a chosen layer (or every layer) overlaid
// across runs, their test accuracy overlaid, and the score table with a row per run and stage
// (init, and trained: the best checkpoint, or the latest snapshot while a run has no final
// scores). Draws what run/run_catalog.h read; never sees a model.
#pragma once

#include <QWidget>

#include <vector>

#include "run/run_catalog.h"
#include "widgets/table_data.h"

class QComboBox;
class QCustomPlot;
class QTableWidget;

namespace nope::ui {

struct ComparedRun {
    RunSummary summary;
    RunCurves curves;
};

class CompareCurves : public QWidget {
    Q_OBJECT

public:
    explicit CompareCurves(QWidget* parent = nullptr);

    void setRuns(std::vector<ComparedRun> runs);
    // -1: every layer; 0: the embedding; 1..L: that layer of the chosen point.
    void setLayer(int layer);
    // What the curves are drawn over: the step, or each run's wall time in minutes (elapsed_s,
    // a resumed run's sessions joined up), to compare runs of different speeds.
    enum class XAxis { Step, Minutes };
    void setXAxis(XAxis axis);
    XAxis xAxis() const;

    QCustomPlot* adjacencyPlot() const { return m_adjacency; }
    QCustomPlot* accuracyPlot() const { return m_accuracy; }
    TableData tableData() const { return m_data; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void fillChoices();
    void redraw();
    void drawAdjacency(CapturePoint point, int layer, bool dark);
    void drawAccuracy(bool dark);
    void fillTable(CapturePoint point);

    QComboBox* m_point;
    QComboBox* m_layer;
    QComboBox* m_axis;
    QCustomPlot* m_adjacency;
    QCustomPlot* m_accuracy;
    QTableWidget* m_table;
    std::vector<ComparedRun> m_runs;
    int m_chosenLayer = 1;  // the user's choice, kept while the runs change
    TableData m_data;
};

}  // namespace nope::ui
