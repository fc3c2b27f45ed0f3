#include "widgets/sweep_plots.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "widgets/plot_style.h"
#include "widgets/qcp.h"

namespace nope::ui {

namespace {

int indexOf(const std::vector<std::string>& values, const std::string& v) {
    const auto it = std::find(values.begin(), values.end(), v);
    return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

QSharedPointer<QCPAxisTickerText> textTicker(const std::vector<std::string>& labels) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (size_t i = 0; i < labels.size(); ++i) {
        ticker->addTick(static_cast<double>(i), QString::fromStdString(labels[i]));
    }
    return ticker;
}

QString axisLabel(const study::SweepResults& results, size_t axis) {
    return axis < results.axes.size() ? QString::fromStdString(results.axes[axis]) : QString();
}

void resetPlot(QCustomPlot* plot) {
    showPlaceholder(plot, {});  // the axes back before the placeholder item goes with the rest
    plot->clearPlottables();
    plot->clearItems();
    plot->legend->setVisible(false);
}

// The heatmap's colour scale, made once beside the axes.
QCPColorScale* colorScale(QCustomPlot* plot) {
    if (plot->plotLayout()->hasElement(0, 1)) {
        if (auto* scale = qobject_cast<QCPColorScale*>(plot->plotLayout()->element(0, 1))) {
            return scale;
        }
    }
    auto* scale = new QCPColorScale(plot);
    plot->plotLayout()->addElement(0, 1, scale);
    scale->setLabel("adjacency score");
    scale->setGradient(heatmapGradient());
    return scale;
}

}  // namespace

std::vector<std::string> axisValues(const study::SweepResults& results, size_t axis) {
    return axis < results.axes.size() ? study::axisValues(results, results.axes[axis])
                                      : std::vector<std::string>{};
}

std::vector<const study::SummaryRow*> selectRows(const study::SweepResults& results,
                                                 const SweepSelection& selection,
                                                 const std::vector<size_t>& free) {
    std::vector<const study::SummaryRow*> rows;
    for (const auto& row : results.summary) {
        const bool embedding = row.point == "embedding";  // layer 0 goes with every point
        if (row.stage != selection.stage || (row.point != selection.point && !embedding)) {
            continue;
        }
        bool keep = true;
        for (size_t a = 0; a < results.axes.size() && keep; ++a) {
            if (std::find(free.begin(), free.end(), a) != free.end()) {
                continue;
            }
            const auto it = selection.fixed.find(a);
            const std::vector<std::string> values = axisValues(results, a);
            const std::string held =
                it != selection.fixed.end() ? it->second : (values.empty() ? "" : values.front());
            keep = a < row.values.size() && row.values[a] == held;
        }
        if (keep) {
            rows.push_back(&row);
        }
    }
    return rows;
}

QString drawScoreHeatmap(QCustomPlot* plot, const study::SweepResults& results, size_t x, size_t y,
                         const SweepSelection& selection) {
    resetPlot(plot);
    applyPlotTheme(plot, plot->palette());
    const std::vector<std::string> xs = axisValues(results, x);
    const std::vector<std::string> ys =
        x == y ? std::vector<std::string>{""} : axisValues(results, y);
    if (xs.empty() || ys.empty()) {
        showPlaceholder(plot, "No finished runs to draw yet.");
        plot->replot();
        return "no finished runs";
    }
    showPlaceholder(plot, {});
    auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
    map->data()->setSize(static_cast<int>(xs.size()), static_cast<int>(ys.size()));
    map->data()->setRange(QCPRange(0, static_cast<double>(xs.size()) - 1),
                          QCPRange(0, static_cast<double>(ys.size()) - 1));
    map->data()->fill(std::nan(""));
    map->setGradient(heatmapGradient());
    map->setInterpolate(false);
    int missing = static_cast<int>(xs.size() * ys.size());
    double lo = 1.0, hi = 0.0;
    std::vector<std::pair<QCPItemText*, double>> labels;
    for (const study::SummaryRow* row : selectRows(results, selection, {x, y})) {
        if (row->layer != selection.layer) {
            continue;
        }
        const int i = indexOf(xs, row->values[x]);
        const int j = x == y ? 0 : indexOf(ys, row->values[y]);
        if (i < 0 || j < 0) {
            continue;
        }
        --missing;
        const study::Interval& a = row->adjacency;
        map->data()->setCell(i, j, a.mean);
        lo = std::min(lo, a.mean);
        hi = std::max(hi, a.mean);
        auto* label = new QCPItemText(plot);
        label->position->setCoords(i, j);
        label->setText(
            QString("%1\n± %2").arg(a.mean, 0, 'f', 3).arg((a.high - a.low) / 2, 0, 'f', 3));
        label->setFont(QFont("sans", 9));
        labels.push_back({label, a.mean});
    }
    for (auto& [label, mean] : labels) {  // dark text on the bright (high) end of the gradient
        label->setColor(mean > (lo + hi) / 2 ? Qt::black : Qt::white);
    }
    map->setColorScale(colorScale(plot));
    map->setDataRange(QCPRange(std::min(lo, hi), std::max(hi, lo + 1e-3)));
    plot->xAxis->setTicker(textTicker(xs));
    plot->yAxis->setTicker(textTicker(ys));
    plot->xAxis->setLabel(axisLabel(results, x));
    plot->yAxis->setLabel(x == y ? QString() : axisLabel(results, y));
    plot->xAxis->setRange(-0.5, static_cast<double>(xs.size()) - 0.5);
    plot->yAxis->setRange(-0.5, static_cast<double>(ys.size()) - 0.5);
    plot->xAxis->grid()->setVisible(false);
    plot->yAxis->grid()->setVisible(false);
    applyPlotTheme(plot, plot->palette());
    plot->replot();
    return missing > 0 ? QString("%1 cells have no finished run").arg(missing) : QString();
}

QString drawScoreLines(QCustomPlot* plot, const study::SweepResults& results, size_t x,
                       const SweepSelection& selection) {
    resetPlot(plot);
    const std::vector<std::string> xs = axisValues(results, x);
    const std::vector<const study::SummaryRow*> rows = selectRows(results, selection, {x});
    if (xs.empty() || rows.empty()) {
        showPlaceholder(plot, "No finished runs to draw yet.");
        plot->replot();
        return "no finished runs";
    }
    showPlaceholder(plot, {});
    std::set<int> layers;
    for (const auto* row : rows) {
        layers.insert(row->layer);
    }
    const bool dark = isDark(plot->palette());
    const int most = layers.empty() ? 0 : *layers.rbegin();
    for (int layer : layers) {
        QVector<double> keys, values, errors;
        for (size_t i = 0; i < xs.size(); ++i) {
            for (const auto* row : rows) {
                if (row->layer == layer && row->values[x] == xs[i]) {
                    keys << static_cast<double>(i);
                    values << row->adjacency.mean;
                    errors << (row->adjacency.high - row->adjacency.low) / 2;
                }
            }
        }
        QCPGraph* graph = plot->addGraph();
        graph->setData(keys, values);
        graph->setName(
            layer == 0 ? "embedding"
                       : QString("%1 %2").arg(QString::fromStdString(selection.point)).arg(layer));
        const QColor color = layerColor(layer, most, dark);
        graph->setPen(QPen(color, 2, layer == 0 ? Qt::DashLine : Qt::SolidLine));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        auto* bars = new QCPErrorBars(plot->xAxis, plot->yAxis);
        bars->removeFromLegend();
        bars->setDataPlottable(graph);
        bars->setData(errors);
        bars->setPen(QPen(color, 1));
    }
    plot->xAxis->setTicker(textTicker(xs));
    plot->xAxis->setLabel(axisLabel(results, x));
    plot->yAxis->setLabel("adjacency score (mean, 95% interval over seeds)");
    plot->xAxis->setRange(-0.3, static_cast<double>(xs.size()) - 0.7);
    plot->yAxis->setRange(0.0, 1.02);
    plot->legend->setVisible(true);
    plot->legend->setFont(QFont("sans", 8));
    applyPlotTheme(plot, plot->palette());
    plot->replot();
    return {};
}

}  // namespace nope::ui
