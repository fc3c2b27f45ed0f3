// nopescope: the desktop window. Options for scripted use (docs, measurements) are in
// automation.h; without options it opens the window.
#include <QApplication>
#include <QIcon>
#include <QImage>
#include <QPainter>
#include <QPixmap>
#include <QSvgRenderer>
#include <QTimer>

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

}  // namespace

int main(int argc, char** argv) {
    nope::configureRuntime(0);
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
    window.show();
    automation.start();
    if (!automation.drivesTheWindow()) {
        // a useful window at once: the default preset's model at initialization, and a hint
        QTimer::singleShot(0, &window, &nope::gui::MainWindow::startUp);
    }
    return QApplication::exec();
}
