// The Attention tab: the weights that do the averaging. For the chosen layer, one heatmap per
// head (the mean over the analysis prompts, or one kept prompt with its characters on the axes)
// at the step the window shows; beside them each head's attention entropy and mean attended
// distance as numbers (with uniform causal attention's for reference), and as curves over
// training, one line per head, with the shown step marked. Draws the snapshots' value types
// (analysis/attention.h); the trainer records the weights in the same forward passes as the
// hidden states.
#pragma once

#include <QWidget>

#include <vector>

#include "run/snapshot.h"
#include "widgets/table_data.h"

class QComboBox;
class QCustomPlot;
class QCPItemStraightLine;
class QLabel;
class QTableWidget;

namespace nope::ui {

class HeatmapGrid;

class AttentionTab : public QWidget {
    Q_OBJECT

public:
    explicit AttentionTab(QWidget* parent = nullptr);

    // Redraws from the snapshots; `shown` is the index of the snapshot the window shows.
    void setHistory(const std::vector<Snapshot>& history, int shown);
    // The line above the figures: the step shown and what it is of, or why nothing is.
    QString summaryText() const;
    // What the tab says while there is no snapshot to show (the window says why).
    void setEmptyText(const QString& text) { m_emptyText = text; }

    int layer() const;  // 1..L
    void setLayer(int layer);
    int prompt() const;  // the kept prompt shown, -1 for the mean over prompts
    void setPrompt(int prompt);

    HeatmapGrid* heatmaps() const { return m_heatmaps; }
    QCustomPlot* entropyPlot() const { return m_entropy; }
    QCustomPlot* distancePlot() const { return m_distance; }
    QTableWidget* table() const { return m_table; }
    // The per-head numbers of the shown layer and step, for export.
    const TableData& tableData() const { return m_shownTable; }

Q_SIGNALS:
    // The layer or the prompt changed: the window redraws.
    void choiceChanged();

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateChoices(const Snapshot& s);
    void drawHeatmaps(const Snapshot& s);
    void fillTable(const Snapshot& s);
    void drawCurves(const std::vector<Snapshot>& history, int marker);
    void showNothing();

    QComboBox* m_layer;
    QComboBox* m_prompt;
    QLabel* m_summary;
    HeatmapGrid* m_heatmaps;
    QTableWidget* m_table;
    QCustomPlot* m_entropy;
    QCustomPlot* m_distance;
    QCPItemStraightLine* m_entropyMarker = nullptr;
    QCPItemStraightLine* m_distanceMarker = nullptr;
    int m_seqLen = 0;
    TableData m_shownTable;
    QString m_emptyText;
};

}  // namespace nope::ui
