// The heatmap grid: one self-cosine-similarity heatmap per layer (the embedding first) in one
// QCustomPlot, with one shared colour scale. The upper triangle (future tokens) is blank;
// hovering shows i, j and the value; double-clicking a heatmap asks for it enlarged. Draws value
// types only: it never sees a model or a tensor.
#pragma once

#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>
#include <utility>
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
    // One colour scale for grids compared side by side: `range` instead of the grid's own (not
    // when fixed); nullopt: its own again.
    void setSharedRange(std::optional<std::pair<double, double>> range);
    // The lowest and highest value shown (the triangle at and below the diagonal), over all maps;
    // nullopt when there is none.
    std::optional<std::pair<double, double>> valueRange() const;
    // The range the colour scale shows now.
    std::pair<double, double> colourRange() const;
    void setColumns(int columns);              // 0: chosen to fit the widget's shape
    void setScaleLabel(const QString& label);  // "cosine similarity" unless set
    // What the grid says while it has nothing to draw (the window names why for what it shows);
    // empty: the grid's own ("No model yet. Press Initialize ...").
    void setEmptyText(const QString& text);
    QString emptyText() const { return m_emptyText; }

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
    // Token labels every few cells when cells are too small for one label each.
    void thinTokenLabels();
    int autoColumns() const;
    void applyTheme();

    QCustomPlot* m_plot;
    QCPColorScale* m_scale = nullptr;
    std::vector<QCPAxisRect*> m_rects;
    std::vector<QCPColorMap*> m_colorMaps;
    std::vector<Heatmap> m_maps;
    bool m_fixedRange = false;
    std::optional<std::pair<double, double>> m_sharedRange;
    std::vector<int> m_labelStep;  // per map: a token label every this many cells
    QString m_scaleLabel = "cosine similarity";
    static constexpr const char* kNoModelYet =
        "No model yet. Press Initialize to see each layer's self-cosine similarity\nat "
        "initialization, or Train to watch it change as the model learns.";
    QString m_emptyText = kNoModelYet;
    int m_columns = 0;
    int m_layoutCount = -1;
    int m_layoutColumns = 0;
    int m_layoutSize = -1;
};

}  // namespace nope::ui
