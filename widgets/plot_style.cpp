#include "widgets/plot_style.h"

#include <algorithm>
#include <typeinfo>

#include "widgets/qcp.h"
#include "widgets/theme_colors.h"

namespace nope::ui {

QCPColorGradient heatmapGradient() {
    QCPColorGradient g;
    g.clearColorStops();
    for (const auto& [at, color] : heatmapStops()) {
        g.setColorStopAt(at, color);
    }
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setNanHandling(QCPColorGradient::nhTransparent);
    return g;
}

bool isDark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128;
}

QColor layerColor(int layer, int layers, bool dark) {
    if (layer == 0) {
        return themeColor(ThemeColor::EmbeddingCurve, dark);
    }
    const LayerHues hues = layerHues(dark);  // blue -> red
    const double hue =
        hues.first + (hues.last - hues.first) * double(layer - 1) / std::max(1, layers - 1);
    return QColor::fromHsvF(hue, hues.saturation, hues.value);
}

void applyPlotTheme(QCustomPlot* plot, const QPalette& palette) {
    const bool dark = isDark(palette);
    const QColor background = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    const QColor grid = themeColor(ThemeColor::Grid, dark);
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

namespace {

constexpr const char* kPlaceholderName = "nopescope-placeholder";

QCPItemText* placeholderItem(const QCustomPlot* plot) {
    return plot->findChild<QCPItemText*>(kPlaceholderName, Qt::FindDirectChildrenOnly);
}

}  // namespace

void showPlaceholder(QCustomPlot* plot, const QString& text) {
    QCPItemText* item = placeholderItem(plot);
    if (!item && text.isEmpty()) {
        return;
    }
    if (!item) {
        item = new QCPItemText(plot);
        item->setObjectName(kPlaceholderName);
        // An item made while the plot has an axis rect clips to it and is drawn only while it
        // is visible; clearing the clip rect while clipping detaches it (QCustomPlot 2.1).
        item->setClipToAxisRect(true);
        item->setClipAxisRect(nullptr);
        item->setClipToAxisRect(false);
        item->position->setType(QCPItemPosition::ptViewportRatio);
        item->position->setCoords(0.5, 0.45);
        item->setPositionAlignment(Qt::AlignCenter);
        item->setTextAlignment(Qt::AlignCenter);
    }
    QFont font = plot->font();
    font.setPointSizeF(font.pointSizeF() * 1.1);
    item->setFont(font);
    QColor color = plot->palette().color(QPalette::WindowText);
    color.setAlpha(170);
    item->setColor(color);
    item->setText(text);
    item->setVisible(!text.isEmpty());
    for (QCPAxisRect* rect : plot->axisRects()) {
        rect->setVisible(text.isEmpty());  // with its axes, graphs and legend
    }
}

QString placeholderText(const QCustomPlot* plot) {
    const QCPItemText* item = placeholderItem(plot);
    return item && item->visible() ? item->text() : QString();
}

void keepTicksApart(QCustomPlot* plot) {
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
        bool changed = false;
        for (QCPAxisRect* rect : plot->axisRects()) {
            for (QCPAxis* axis : rect->axes()) {
                QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
                // the plain number ticker only (QCPAxisTickerFixed and the others place theirs)
                if (!axis->visible() || !ticker || typeid(*ticker) != typeid(QCPAxisTicker)) {
                    continue;
                }
                const bool across = axis->orientation() == Qt::Horizontal;
                const int pixels = across ? rect->width() : rect->height();
                const int room = pixels / (across ? kTickSpacingAcross : kTickSpacingDown);
                const int count = std::clamp(room, 2, 6);
                if (ticker->tickCount() != count) {
                    ticker->setTickCount(count);
                    changed = true;
                }
            }
        }
        if (changed) {
            plot->replot(QCustomPlot::rpQueuedReplot);  // the ticks are placed before the layout
        }
    });
}

}  // namespace nope::ui
