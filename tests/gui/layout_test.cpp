// The window on the screens people have: at the smallest supported size (1024 x 700, stated in
// docs/window.md) no view raises the window's minimum size past the screen, whatever tab is shown
// and whatever it holds (a pinned prompt in Explore, runs side by side in Compare); and a new
// window opens within the screen.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QGuiApplication>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include "gui/main_window.h"
#include "gui_fixture.h"
#include "widgets/compare_tab.h"
#include "widgets/config_form.h"
#include "widgets/explore_tab.h"
#include "widgets/heatmap_grid.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;

constexpr QSize kSmallest(1024, 700);

// The window's minimum with tab `index` shown, after the layout has settled.
QSize minimumWith(MainWindow& window, int index) {
    window.viewTabs()->setCurrentIndex(index);
    QTest::qWait(20);
    return window.minimumSizeHint().expandedTo(window.minimumSize());
}

TEST(Layout, EveryTabFitsTheSmallestSupportedScreen) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    window.resize(kSmallest);
    window.show();
    window.initializeModel();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty() && !window.redrawPending(); }));
    // Explore with a prompt pinned and another shown: three rows of heatmaps
    window.showView(window.explore());
    window.explore()->promptField()->setText("12+34=");
    window.explore()->pinButton()->click();
    window.explore()->promptField()->setText("12+35=");
    ASSERT_TRUE(waitFor([&] { return !window.explore()->heatmaps(2)->heatmaps().empty(); }));
    QTabWidget* compareViews = window.compare()->views();
    for (int t = 0; t < window.viewTabs()->count(); ++t) {
        const QString name = window.viewTabs()->tabText(t);
        const int innerViews = name == "Compare" ? compareViews->count() : 1;
        for (int v = 0; v < innerViews; ++v) {
            if (name == "Compare") {
                compareViews->setCurrentIndex(v);  // the curves, then Side by side
            }
            const QSize minimum = minimumWith(window, t);
            EXPECT_LE(minimum.width(), kSmallest.width()) << name.toStdString() << " " << v;
            EXPECT_LE(minimum.height(), kSmallest.height()) << name.toStdString() << " " << v;
        }
    }
    // and it is drawn at that size: the status line and the slider are on screen
    window.resize(kSmallest);
    QTest::qWait(50);
    EXPECT_EQ(window.size(), kSmallest);
}

// A new window opens within the screen, and so does one whose kept size came from a larger
// screen.
TEST(Layout, AWindowOpensWithinTheScreen) {
    const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
    MainWindow fresh;
    EXPECT_LE(fresh.width(), screen.width());
    EXPECT_LE(fresh.height(), screen.height());

    QTemporaryDir dir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.path());
    QCoreApplication::setOrganizationName("NoPEScopeTest");
    QCoreApplication::setApplicationName("layout");
    {
        MainWindow large;
        large.restoreSettings();
        large.setMinimumSize(screen.size() * 2);  // as it was on a screen twice this size
        large.resize(screen.size() * 2);
        large.close();
    }
    MainWindow window;
    window.restoreSettings();
    EXPECT_LE(window.width(), screen.width());
    EXPECT_LE(window.height(), screen.height());
    QCoreApplication::setOrganizationName(QString());
    QCoreApplication::setApplicationName(QString());
}

// `nopescope --help` is read where there is no screen at all (a terminal on a server).
TEST(Layout, HelpNeedsNoDisplay) {
    QProcess window;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) {
        env.remove(name);
    }
    window.setProcessEnvironment(env);
    window.start(NOPESCOPE_WINDOW, {"--help"});
    ASSERT_TRUE(window.waitForFinished(60000));
    EXPECT_EQ(window.exitStatus(), QProcess::NormalExit);
    EXPECT_EQ(window.exitCode(), 0) << window.readAllStandardError().toStdString();
    EXPECT_TRUE(window.readAllStandardOutput().contains("--screenshots"));
}

}  // namespace
}  // namespace nope::gui
