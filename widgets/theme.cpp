#include "widgets/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

#include "widgets/theme_colors.h"

namespace nope::ui {

namespace {

QString g_systemStyle;
QPalette g_systemPalette;

// The roles theme.json gives, over the application's palette (dark) or Fusion's (light).
QPalette themePalette(bool dark) {
    QPalette p = dark ? QPalette() : QApplication::style()->standardPalette();
    applyThemePalette(p, dark);
    return p;
}

}  // namespace

void rememberSystemTheme() {
    g_systemStyle = QApplication::style()->name();
    g_systemPalette = QApplication::palette();
}

void applyTheme(const QString& theme) {
    if (theme == "system") {
        QApplication::setStyle(QStyleFactory::create(g_systemStyle));
        QApplication::setPalette(g_systemPalette);
    } else if (theme == "light" || theme == "dark") {
        QApplication::setStyle(QStyleFactory::create("Fusion"));
        QApplication::setPalette(themePalette(theme == "dark"));
    }
}

}  // namespace nope::ui
