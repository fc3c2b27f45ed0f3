// The Projector tab: the shape positions take in each layer's hidden space. For the chosen
// capture point, one scatter panel per layer (the embedding first), or one layer large: every
// token of the kept prompts at its coordinates on two of the three axes of a PCA fit (or of
// classical scaling of 1 - cosine), coloured by its position, its prompt, position and character
// shown on hover; each axis labelled with its share of the variance. Beside it the focused
// layer's first axis against position, with the Pearson R between them, and a table of every
// shown layer's explained variance and R. Follows the window's snapshot slider (live during
// training, scrubbable, from an opened run folder). Draws the snapshots' value types
// (analysis/projection.h); the trainer fits them in core.
#pragma once

#include <QWidget>

#include <vector>

#include "run/snapshot.h"
#include "widgets/table_data.h"

class QComboBox;
class QCustomPlot;
class QCPAxisRect;
class QLabel;
class QTableWidget;

namespace nope::ui {

class ProjectorTab : public QWidget {
    Q_OBJECT

public:
    explicit ProjectorTab(QWidget* parent = nullptr);

    // Redraws from the snapshot `shown` of the history (-1 or out of range: nothing to show).
    void setHistory(const std::vector<Snapshot>& history, int shown);
    // The line above the figures: the step shown and what it is of, or why nothing is.
    QString summaryText() const;
    // What the tab says while there is no snapshot to show (the window says why).
    void setEmptyText(const QString& text) { m_emptyText = text; }

    CapturePoint point() const;  // the per-block point shown beside the embedding
    void setPoint(CapturePoint point);
    ProjectionMethod method() const;
    void setMethod(ProjectionMethod method);
    // The two axes shown: 0 = axes 1 and 2, 1 = axes 1 and 3, 2 = axes 2 and 3.
    int axesChoice() const;
    void setAxesChoice(int choice);
    int layer() const;  // -1: every layer; 0: the embedding alone; l: layer l alone
    void setLayer(int layer);
    // The layer whose first axis is drawn against position: the one shown alone, or the panel
    // last clicked (layer 1 until then).
    int focusLayer() const { return m_focus; }
    void setFocusLayer(int layer);

    int panelCount() const { return static_cast<int>(m_rects.size()); }
    QCustomPlot* scatterPlot() const { return m_scatter; }
    QCustomPlot* positionPlot() const { return m_position; }
    QTableWidget* table() const { return m_table; }
    const TableData& tableData() const { return m_shownTable; }
    // What hovering at `position` on the scatter plot shows ("attn layer 1, prompt 2 rev(123)=,
    // position 5 '3': (0.41, -0.12)"), or empty when no point is near.
    QString describeAt(const QPoint& position) const;
    // The scatter panel under `position`, as its layer, or -1.
    int layerAt(const QPoint& position) const;
    // Where token (prompt, position) of panel `panel` is drawn, in the scatter plot's pixels (for
    // tests).
    QPointF pixelOf(int panel, int prompt, int position) const;

Q_SIGNALS:
    void choiceChanged();

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateLayerChoice(int layers);
    void drawScatter();
    void drawPosition();
    void fillTable();
    void showNothing(const QString& why);
    std::pair<int, int> shownAxes() const;

    QComboBox* m_point;
    QComboBox* m_method;
    QComboBox* m_axes;
    QComboBox* m_layer;
    QLabel* m_summary;
    QCustomPlot* m_scatter;
    QCustomPlot* m_position;
    QTableWidget* m_table;
    TableData m_shownTable;

    // What is drawn: the shown snapshot's projections of the chosen point and method, in panel
    // order, with the tokens of the projected prompts.
    std::vector<Projection> m_items;
    std::vector<int> m_tokens;
    std::vector<QCPAxisRect*> m_rects;
    int m_step = -1;
    int m_focus = 1;
    QString m_emptyText;
};

}  // namespace nope::ui
