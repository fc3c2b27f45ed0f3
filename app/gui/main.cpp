// nopescope: the desktop window. Options for scripted use (docs, measurements) are in
// automation.h; without options it opens the window.
#include <QApplication>
#include <QIcon>
#include <QImage>
#include <QPainter>
#include <QPixmap>
#include <QSvgRenderer>
#include <QTimer>

#include <string>

#include "gui/automation.h"
#include "gui/main_window.h"
#include "gui/meta_types.h"
#include "gui/report_render.h"
#include "util/runtime.h"
#include "widgets/theme_colors.h"

namespace {

// The icon of the window and its dialogs (resources/nopescope.qrc): the rendered PNGs at their
// sizes, and the SVG drawn at 512 px for larger ones. (An SVG QIcon would keep only one of the
// PNGs, so the SVG is drawn here.)
QIcon applicationIcon() {
    nope::ui::initResources();
    QIcon icon;
    for (int size : {16, 24, 32, 48, 64, 128, 256}) {
        icon.addFile(QString(":/icons/hicolor/%1x%1/apps/nopescope.png").arg(size),
                     QSize(size, size));
    }
    QSvgRenderer svg(QString(":/icons/nopescope.svg"));
    if (svg.isValid()) {
        QImage large(512, 512, QImage::Format_ARGB32_Premultiplied);
        large.fill(Qt::transparent);
        QPainter painter(&large);
        svg.render(&painter);
        painter.end();
        icon.addPixmap(QPixmap::fromImage(large));
    }
    return icon;
}

// Options that draw nothing on screen (--help, --report DIR) need no display: without one, Qt's
// offscreen platform serves them, where it would stop the program before they ran.
void withoutDisplayWhereNoneIsNeeded(int argc, char** argv) {
    const bool display = !qEnvironmentVariableIsEmpty("DISPLAY") ||
                         !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
                         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
    if (display) {
        return;
    }
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h" || arg.rfind("--help-format", 0) == 0 ||
            arg == "--report" || arg.rfind("--report=", 0) == 0) {
            qputenv("QT_QPA_PLATFORM", "offscreen");
            return;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    nope::configureRuntime(0);
    withoutDisplayWhereNoneIsNeeded(argc, argv);
    QApplication app(argc, argv);
    QApplication::setApplicationName("NoPEScope");
    QApplication::setOrganizationName("NoPEScope");
    // The installed nopescope.desktop: its name and icon in the desktop's task list.
    QGuiApplication::setDesktopFileName("nopescope");
    QApplication::setWindowIcon(applicationIcon());
    nope::gui::registerMetaTypes();
    nope::gui::MainWindow window;
    nope::gui::Automation automation(window);
    if (!automation.configure(QApplication::arguments())) {
        return automation.helpShown() ? 0 : 2;
    }
    if (!automation.reportFolder().isEmpty()) {
        return nope::gui::renderReport(automation.reportFolder()) ? 0 : 1;
    }
    if (!automation.drivesTheWindow()) {
        window.restoreSettings();  // a user's window as they left it; scripted runs start plain
    }
    window.show();
    automation.start();
    if (!automation.drivesTheWindow()) {
        // a useful window at once: the default preset's model at initialization, and a hint
        QTimer::singleShot(0, &window, &nope::gui::MainWindow::startUp);
    }
    return QApplication::exec();
}
