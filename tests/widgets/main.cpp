// The main of the panels' tests: a QApplication (offscreen unless QT_QPA_PLATFORM says
// otherwise) with the platform's theme remembered, as the window's start does.
#include <gtest/gtest.h>

#include <QApplication>

#include "widgets/theme.h"

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    nope::ui::rememberSystemTheme();
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
