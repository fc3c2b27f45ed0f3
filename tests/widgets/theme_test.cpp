// The theme's colours (resources/theme.json through widgets/theme_colors.h), headless: every
// named colour is there in both palettes, and the file gives the colours the panels wrote down
// before it existed, so that moving them there changed nothing on screen.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QIcon>
#include <QStyle>
#include <QStyleFactory>

#include <algorithm>
#include <set>

#include "widgets/plot_style.h"
#include "widgets/qcp.h"
#include "widgets/theme.h"
#include "widgets/theme_colors.h"

namespace nope {
namespace {

using ui::ThemeColor;
using ui::themeColor;

TEST(ThemeColors, EveryNamedColourInBothPalettes) {
    for (bool dark : {false, true}) {
        for (const auto& entry : ui::kThemeColorNames) {
            EXPECT_TRUE(themeColor(entry.value, dark).isValid()) << entry.name;
        }
    }
}

TEST(ThemeColors, TheColoursThePanelsUsedBefore) {
    for (bool dark : {false, true}) {
        EXPECT_EQ(themeColor(ThemeColor::Error, dark).name(), "#d04040");
        EXPECT_EQ(themeColor(ThemeColor::BannerBackground, dark).name(), "#a03030");
        EXPECT_EQ(themeColor(ThemeColor::BannerText, dark), QColor(Qt::white));
        EXPECT_EQ(themeColor(ThemeColor::StepMarker, dark), QColor(200, 60, 60, 160));
    }
    EXPECT_EQ(themeColor(ThemeColor::TrainLoss, false), QColor(30, 90, 200));
    EXPECT_EQ(themeColor(ThemeColor::TrainLoss, true), QColor(100, 170, 255));
    EXPECT_EQ(themeColor(ThemeColor::TestLoss, false), QColor(220, 120, 20));
    EXPECT_EQ(themeColor(ThemeColor::TestLoss, true), QColor(255, 170, 80));
    EXPECT_EQ(themeColor(ThemeColor::TestAccuracy, false), QColor(30, 150, 60));
    EXPECT_EQ(themeColor(ThemeColor::TestAccuracy, true), QColor(120, 220, 120));
    EXPECT_EQ(themeColor(ThemeColor::Grid, false), QColor(220, 220, 220));
    EXPECT_EQ(themeColor(ThemeColor::Grid, true), QColor(80, 80, 80));

    const QColor light[] = {QColor(0, 114, 178), QColor(230, 159, 0), QColor(0, 158, 115),
                            QColor(213, 94, 0), QColor(204, 121, 167)};
    const QColor dark[] = {QColor(86, 180, 233), QColor(240, 180, 40), QColor(40, 200, 150),
                           QColor(240, 120, 60), QColor(225, 150, 195)};
    for (int i = 0; i < 7; ++i) {
        EXPECT_EQ(ui::probeFeatureColor(i, false), light[i % 5]) << i;
        EXPECT_EQ(ui::probeFeatureColor(i, true), dark[i % 5]) << i;
    }
}

// The run colours: theme.json's lists, each colour distinct within its palette, coming round
// again past the last.
TEST(ThemeColors, RunCurvesAreDistinctAndComeRound) {
    const int n = ui::runCurveColors();
    ASSERT_GE(n, 8);
    EXPECT_EQ(ui::runCurveColor(0, false), QColor(0x4e, 0x79, 0xa7));
    EXPECT_EQ(ui::runCurveColor(0, true), QColor(0x7a, 0xa6, 0xd6));
    for (bool dark : {false, true}) {
        std::set<QRgb> seen;
        for (int i = 0; i < n; ++i) {
            seen.insert(ui::runCurveColor(i, dark).rgb());
            EXPECT_EQ(ui::runCurveColor(i + n, dark), ui::runCurveColor(i, dark)) << i;
        }
        EXPECT_EQ(seen.size(), size_t(n)) << (dark ? "dark" : "light");
    }
}

TEST(ThemeColors, LayerCurvesAsTheFormulaGaveThem) {
    for (bool dark : {false, true}) {
        EXPECT_EQ(ui::layerColor(0, 6, dark), dark ? QColor(170, 170, 170) : QColor(110, 110, 110));
        for (int layers : {1, 2, 6}) {
            for (int layer = 1; layer <= layers; ++layer) {
                const double hue = 0.62 - 0.62 * double(layer - 1) / std::max(1, layers - 1);
                EXPECT_EQ(ui::layerColor(layer, layers, dark),
                          QColor::fromHsvF(hue, 0.8, dark ? 0.95 : 0.8))
                    << layer << " of " << layers;
            }
        }
    }
}

TEST(ThemeColors, HeatmapGradient) {
    const auto stops = ui::heatmapStops();
    ASSERT_EQ(stops.size(), 5u);
    EXPECT_EQ(stops.front().first, 0.0);
    EXPECT_EQ(stops.back().first, 1.0);
    EXPECT_EQ(stops.front().second, QColor(40, 20, 90));
    EXPECT_EQ(stops[2].second, QColor(35, 145, 140));
    EXPECT_EQ(stops.back().second, QColor(250, 230, 40));
    QCPColorGradient g = ui::heatmapGradient();
    EXPECT_EQ(g.color(1.0, QCPRange(0, 1)), QColor(250, 230, 40).rgb());
}

TEST(ThemeColors, DarkPaletteAsBefore) {
    ui::applyTheme("dark");
    const QPalette p = QApplication::palette();
    EXPECT_EQ(p.color(QPalette::Window), QColor(45, 45, 48));
    EXPECT_EQ(p.color(QPalette::Base), QColor(30, 30, 32));
    EXPECT_EQ(p.color(QPalette::AlternateBase), QColor(45, 45, 48));
    EXPECT_EQ(p.color(QPalette::Text), QColor(230, 230, 230));
    EXPECT_EQ(p.color(QPalette::Highlight), QColor(60, 120, 200));
    EXPECT_EQ(p.color(QPalette::HighlightedText), QColor(Qt::white));
    EXPECT_EQ(p.color(QPalette::PlaceholderText), QColor(120, 120, 120));
    EXPECT_EQ(p.color(QPalette::Disabled, QPalette::Text), QColor(120, 120, 120));
    EXPECT_EQ(p.color(QPalette::Active, QPalette::Text), QColor(230, 230, 230));
    EXPECT_TRUE(ui::isDark(p));

    ui::applyTheme("light");
    EXPECT_EQ(QApplication::palette(), QApplication::style()->standardPalette());

    // The dark palette as theme.cpp built it before theme.json, over the same base.
    QPalette before;
    const QColor window(45, 45, 48), base(30, 30, 32), text(230, 230, 230), muted(120, 120, 120);
    for (auto [role, colour] : {std::pair{QPalette::Window, window},
                                {QPalette::WindowText, text},
                                {QPalette::Base, base},
                                {QPalette::AlternateBase, window},
                                {QPalette::ToolTipBase, base},
                                {QPalette::ToolTipText, text},
                                {QPalette::Text, text},
                                {QPalette::Button, window},
                                {QPalette::ButtonText, text},
                                {QPalette::Highlight, QColor(60, 120, 200)},
                                {QPalette::HighlightedText, QColor(Qt::white)},
                                {QPalette::PlaceholderText, muted}}) {
        before.setColor(role, colour);
    }
    for (auto role : {QPalette::Text, QPalette::ButtonText, QPalette::WindowText}) {
        before.setColor(QPalette::Disabled, role, muted);
    }
    ui::applyTheme("dark");
    EXPECT_TRUE(QApplication::palette() == before);
    ui::applyTheme("system");
}

TEST(Resources, IconsAreCompiledIn) {
    ui::initResources();
    EXPECT_TRUE(QFile::exists(":/icons/nopescope.svg"));
    for (int size : {16, 24, 32, 48, 64, 128, 256}) {
        const QString png = QString(":/icons/hicolor/%1x%1/apps/nopescope.png").arg(size);
        EXPECT_EQ(QImage(png).size(), QSize(size, size)) << png.toStdString();
    }
}

}  // namespace
}  // namespace nope
