// The position probes of the model at init and now, side by side as the paper compares them: for
// one capture point, grouped bars per layer (the embedding first), one colour per feature, each
// beside its shuffled-target control (hatched), in Pearson R or NRMSE; and a scatter of the
// predicted against the true target of one probe (chosen in the boxes or by clicking its bar).
#pragma once

#include <QWidget>

#include <optional>
#include <vector>

#include "model/capture_point.h"
#include "probe/probe_result.h"
#include "widgets/table_data.h"

class QComboBox;
class QCustomPlot;
class QCPAbstractPlottable;
class QCPAxisRect;
class QCPBarsGroup;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;
class QMouseEvent;

namespace nope::ui {

class ProbePanel : public QWidget {
    Q_OBJECT

public:
    explicit ProbePanel(QWidget* parent = nullptr);

    // Copies both reports; either may be null or empty. `currentLabel` titles the current one
    // ("step 1,250"); empty reads "current".
    void setReports(const ProbeReport* init, const ProbeReport* current,
                    const QString& currentLabel);
    // The capture point whose layers are shown (the embedding always comes first). When neither
    // report holds it, the first other point they hold is shown instead.
    void setPoint(CapturePoint point);

    QCustomPlot* barsPlot() const { return m_bars; }
    QCustomPlot* scatterPlot() const { return m_scatter; }
    // Every result of both reports, all points: stage, point, layer, feature, target, pearson_r,
    // nrmse, control_r, control_nrmse (empty without a control).
    TableData table() const;

protected:
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Stage {
        QString label;
        std::optional<ProbeReport> report;  // nothing when absent or empty
    };
    void redrawBars();
    void redrawScatter();
    void refillChoices();
    // For the plot's width: layer names or numbers on the x axes, the legend in one row or two.
    void fitToWidth();
    // The point shown: m_point if a report holds it, else the first other one held.
    CapturePoint shownPoint() const;
    // The rows of the bars: the embedding (layer 0) if held, then layers 1..L of the point.
    std::vector<int> shownLayers() const;
    std::vector<ProbeFeature> shownFeatures() const;
    bool usesR() const;
    void onBarClicked(QCPAbstractPlottable* plottable, int dataIndex, QMouseEvent* event);
    void showBarTip(QMouseEvent* event);

    Stage m_init;
    Stage m_current;
    CapturePoint m_point = CapturePoint::Attn;

    QComboBox* m_metric;
    QComboBox* m_feature;
    QComboBox* m_layer;
    QCustomPlot* m_bars;
    QCustomPlot* m_scatter;
    QCPAxisRect* m_rects[2] = {nullptr, nullptr};
    QCPBarsGroup* m_groups[2] = {nullptr, nullptr};  // bars of a stage, a layer's side by side
    QCPTextElement* m_titles[2] = {nullptr, nullptr};
    QCPItemText* m_emptyTexts[2] = {nullptr, nullptr};
    QCPTextElement* m_scatterTitle = nullptr;
    QCPItemText* m_scatterEmpty = nullptr;
    QCPItemStraightLine* m_diagonal = nullptr;
};

}  // namespace nope::ui
