// The run's progress line: throughput, time left, and the step where a time limit ends the run.

#include <gtest/gtest.h>

#include <QLabel>
#include <QLocale>

#include "widgets/run_controls.h"

namespace nope::ui {
namespace {

QString progressText(const RunControls& controls) {
    QString text;
    for (const QLabel* label : controls.findChildren<QLabel*>()) {
        text += label->text();
    }
    return text;
}

TEST(RunControls, TimeLeftNamesTheStepWhereTheTimeLimitEndsTheRun) {
    RunControls controls;
    Snapshot s;
    s.step = 250;
    s.totalSteps = 7000;
    s.tokensPerSecond = 10422;
    s.etaSeconds = 1800;
    s.limitStep = 1600;  // the time limit comes first
    controls.showProgress(s);
    const QString limited = progressText(controls);
    EXPECT_TRUE(limited.contains("step 250/7000")) << limited.toStdString();
    EXPECT_TRUE(limited.contains(formatDuration(1800) + " left (time limit, near step " +
                                 QLocale().toString(1600) + ")"))
        << limited.toStdString();

    s.limitStep = 0;  // the steps end the run first
    controls.showProgress(s);
    const QString open = progressText(controls);
    EXPECT_TRUE(open.contains(formatDuration(1800) + " left")) << open.toStdString();
    EXPECT_FALSE(open.contains("time limit")) << open.toStdString();
}

}  // namespace
}  // namespace nope::ui
