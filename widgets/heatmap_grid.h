// The heatmap grid: one self-cosine-similarity heatmap per layer (the embedding first) in one
// QCustomPlot, with one shared colour scale. The upper triangle (future tokens) is blank;
// hovering shows i, j and the value; double-clicking a heatmap asks for it enlarged. Draws value
// types only: it never sees a model or a tensor.
#pragma once

#include <QStringList>
#include <QWidget>

#include <string>
#include <vector>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPAxisRect;

namespace nope::ui {

struct Heatmap {
    QString title;              // e.g. "layer 1  0.986 ± 0.006"
    int size = 0;               // T
    std::vector<float> values;  // T x T, row i (query) major
    QStringList tokens;         // characters on the axes when showing one prompt; empty: indices
};

// The characters of a prompt as axis labels (newline, space and others as vocab::display shows
// them).
QStringList promptTokens(const std::string& prompt);

class HeatmapGrid : public QWidget {
    Q_OBJECT

public:
    explicit HeatmapGrid(QWidget* parent = nullptr);

    void setHeatmaps(std::vector<Heatmap> maps);
    const std::vector<Heatmap>& heatmaps() const { return m_maps; }
    // The colour range: [-1, 1] when fixed, else [lowest shown value, highest] over all maps.
    void setFixedRange(bool fixed);
    void setColumns(int columns);              // 0: chosen to fit the widget's shape
    void setScaleLabel(const QString& label);  // "cosine similarity" unless set

    QCustomPlot* plot() const { return m_plot; }
    // What a cell shows (NaN above the diagonal), read back from the plot: for tests.
    double shownValue(int map, int i, int j) const;
    // "i = 3 (a), j = 1 (b): 0.812" for a point on the plot, or empty
    QString describeAt(const QPoint& position) const;

Q_SIGNALS:
    void enlargeRequested(int index);

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuildLayout();
    void fillData();
    void squareCells();
    int autoColumns() const;
    void applyTheme();

    QCustomPlot* m_plot;
    QCPColorScale* m_scale = nullptr;
    std::vector<QCPAxisRect*> m_rects;
    std::vector<QCPColorMap*> m_colorMaps;
    std::vector<Heatmap> m_maps;
    bool m_fixedRange = false;
    QString m_scaleLabel = "cosine similarity";
    int m_columns = 0;
    int m_layoutCount = -1;
    int m_layoutColumns = 0;
    int m_layoutSize = -1;
};

}  // namespace nope::ui
