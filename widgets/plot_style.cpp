#include "plot_style.h"

#include "qcp.h"

namespace nope::ui {

QCPColorGradient heatmapGradient() {
    QCPColorGradient g;
    g.clearColorStops();
    g.setColorStopAt(0.00, QColor(40, 20, 90));
    g.setColorStopAt(0.25, QColor(50, 80, 150));
    g.setColorStopAt(0.50, QColor(35, 145, 140));
    g.setColorStopAt(0.75, QColor(110, 200, 90));
    g.setColorStopAt(1.00, QColor(250, 230, 40));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setNanHandling(QCPColorGradient::nhTransparent);
    return g;
}

bool isDark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128;
}

QColor layerColor(int layer, int layers, bool dark) {
    if (layer == 0) {
        return dark ? QColor(170, 170, 170) : QColor(110, 110, 110);
    }
    const double hue = 0.62 - 0.62 * double(layer - 1) / std::max(1, layers - 1);  // blue -> red
    return QColor::fromHsvF(hue, 0.8, dark ? 0.95 : 0.8);
}

void applyPlotTheme(QCustomPlot* plot, const QPalette& palette) {
    const bool dark = isDark(palette);
    const QColor background = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    const QColor grid = dark ? QColor(80, 80, 80) : QColor(220, 220, 220);
    plot->setBackground(background);
    for (QCPAxisRect* rect : plot->axisRects()) {
        rect->setBackground(background);
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(QPen(text, 1));
            axis->setTickPen(QPen(text, 1));
            axis->setSubTickPen(QPen(text, 1));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        }
    }
    const QList<QCPLayoutElement*> elements = plot->plotLayout()->elements(true);
    for (QCPLayoutElement* element : elements) {
        if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
            QCPAxis* axis = scale->axis();
            axis->setBasePen(QPen(text, 1));
            axis->setTickPen(QPen(text, 1));
            axis->setSubTickPen(QPen(text, 1));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
        }
        if (auto* title = qobject_cast<QCPTextElement*>(element)) {
            title->setTextColor(text);
        }
        if (auto* legend = qobject_cast<QCPLegend*>(element)) {
            legend->setBrush(background);
            legend->setTextColor(text);
            legend->setBorderPen(QPen(grid));
        }
    }
}

}  // namespace nope::ui
