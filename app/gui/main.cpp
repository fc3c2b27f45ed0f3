// nopescope: the desktop window. Options for scripted use (docs, measurements) are in
// automation.h; without options it opens the window.
#include <QApplication>

#include "automation.h"
#include "main_window.h"
#include "meta_types.h"
#include "util/runtime.h"

int main(int argc, char** argv) {
    nope::configureRuntime(0);
    QApplication app(argc, argv);
    QApplication::setApplicationName("NoPEScope");
    QApplication::setOrganizationName("NoPEScope");
    nope::gui::registerMetaTypes();
    nope::gui::MainWindow window;
    nope::gui::Automation automation(window);
    if (!automation.configure(QApplication::arguments())) {
        return 2;
    }
    window.show();
    automation.start();
    return QApplication::exec();
}
