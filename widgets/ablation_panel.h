// The Mechanism tab's ablations at init: the authors' inference-time switches of the attention
// (and inputs in place of the embeddings), each run on the form's model at initialization and
// its task's test prompts. A table of the adjacency score (rows the ablations, columns the
// embedding and layers 1..L of the chosen capture point, cells shaded by the score) and, for the
// selected ablation, the mean self-cosine heatmaps of every layer. The panel asks (runRequested)
// and draws the answer (showTable); the window runs them in the background
// (mechanism/ablation.h).
#pragma once

#include <QWidget>

#include "mechanism/ablation.h"
#include "widgets/table_data.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace nope::ui {

class HeatmapGrid;

class AblationPanel : public QWidget {
    Q_OBJECT

public:
    explicit AblationPanel(QWidget* parent = nullptr);

    // The settings of the next run: every ablation, every capture point.
    AblationConfig config() const;
    int samples() const;
    // What the run will use, e.g. "the form's model at init: 6 layers x 384 ... addition".
    void setModelText(const QString& text);

    void showTable(const nope::AblationTable& table);
    void showRunning(const QString& message);  // an empty message: not running
    void showFailure(const QString& message);
    // The table shown was computed for another model (the form changed): it goes, and `why` says
    // what to do.
    void clearTable(const QString& why);

    const AblationTable& shownTable() const { return m_table; }
    CapturePoint point() const;
    void setPoint(CapturePoint point);
    Ablation selected() const;
    void select(Ablation ablation);

    QPushButton* runButton() const { return m_run; }
    QTableWidget* table() const { return m_view; }
    HeatmapGrid* heatmaps() const { return m_heatmaps; }
    // The shown table (ablation, embedding, layer 1..L of the chosen point), for export.
    TableData tableData() const;

Q_SIGNALS:
    void runRequested(const nope::AblationConfig& config, int samples);

private:
    void redraw();
    void drawHeatmaps();

    QCheckBox* m_asAuthors;
    QDoubleSpinBox* m_shrink;
    QSpinBox* m_samples;
    QComboBox* m_point;
    QPushButton* m_run;
    QLabel* m_model;
    QLabel* m_status;
    QTableWidget* m_view;
    HeatmapGrid* m_heatmaps;
    AblationTable m_table;
};

}  // namespace nope::ui

Q_DECLARE_METATYPE(nope::AblationConfig)
Q_DECLARE_METATYPE(nope::AblationTable)
