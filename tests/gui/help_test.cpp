// The Help menu: F1 opens the user guide (the repository's docs/, rendered) and its links lead
// on; About names the versions and the CPU's bf16 path; the man page comes from the same help.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QMenuBar>
#include <QProcess>
#include <QPushButton>
#include <QTest>
#include <QTextBrowser>

#include "gui/main_window.h"
#include "gui/user_guide.h"

namespace nope::gui {
namespace {

QAction* helpAction(MainWindow& window, const QString& text) {
    for (QAction* menu : window.menuBar()->actions()) {
        if (menu->text() != "&Help" || !menu->menu()) {
            continue;
        }
        for (QAction* action : menu->menu()->actions()) {
            if (action->text() == text) {
                return action;
            }
        }
    }
    return nullptr;
}

QDialog* openGuide() {
    for (QWidget* w : QApplication::topLevelWidgets()) {
        if (w->objectName() == "userGuide" && w->isVisible()) {
            return qobject_cast<QDialog*>(w);
        }
    }
    return nullptr;
}

TEST(Help, F1OpensTheUserGuideAtTheWindowsPage) {
    MainWindow window;
    window.show();
    QAction* guide = helpAction(window, "&User guide");
    ASSERT_NE(guide, nullptr);
    EXPECT_EQ(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));
    ASSERT_FALSE(userGuideFolder().isEmpty()) << "the repository's docs/ was not found";
    guide->trigger();
    QDialog* dialog = openGuide();
    ASSERT_NE(dialog, nullptr);
    auto* browser = dialog->findChild<QTextBrowser*>("userGuideBrowser");
    ASSERT_NE(browser, nullptr);
    EXPECT_TRUE(browser->source().path().endsWith("docs/window.md"))
        << browser->source().path().toStdString();
    EXPECT_TRUE(browser->toPlainText().contains("The window: what it shows"));
    // a link to another page is followed, and Contents is the README
    browser->setSource(QUrl("presets.md"));
    EXPECT_TRUE(browser->toPlainText().contains("What `--preset quick`") ||
                browser->toPlainText().contains("What --preset quick"))
        << browser->toPlainText().left(200).toStdString();
    for (QPushButton* b : dialog->findChildren<QPushButton*>()) {
        if (b->text() == "Contents") {
            b->click();
        }
    }
    EXPECT_TRUE(browser->toPlainText().contains("A first session"));
    dialog->close();
}

TEST(Help, AboutNamesTheVersionsTheCpuAndThePaper) {
    const QString about = aboutText();
    EXPECT_TRUE(about.contains("NoPEScope 0.")) << about.toStdString();
    EXPECT_TRUE(about.contains("LibTorch 1."));
    EXPECT_TRUE(about.contains(QString("Qt ") + qVersion()));
    EXPECT_TRUE(about.contains("bf16 matrix products: "));
    EXPECT_TRUE(about.contains("Position Information Emerges in Causal Transformers"));
    MainWindow window;
    EXPECT_NE(helpAction(window, "&About NoPEScope"), nullptr);
}

// nopescope(1) is the window's --help as roff (built with the program, installed by the package).
TEST(Help, ManPageIsTheWindowsHelp) {
    QProcess window;
    window.start(NOPESCOPE_WINDOW, {"--help-format", "roff"});
    ASSERT_TRUE(window.waitForFinished(60000));
    EXPECT_EQ(window.exitCode(), 0) << window.readAllStandardError().toStdString();
    const QString page = QString::fromUtf8(window.readAllStandardOutput());
    EXPECT_TRUE(page.startsWith(".TH NOPESCOPE 1 ")) << page.left(80).toStdString();
    for (const char* part : {".SH NAME", ".SH OPTIONS", "\\-\\-screenshots", ".SH SEE ALSO"}) {
        EXPECT_TRUE(page.contains(part)) << part;
    }
}

}  // namespace
}  // namespace nope::gui
