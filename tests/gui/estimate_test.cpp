// The form's estimate of a run's wall time (gui/run_cost_estimate.h): a run that would take more
// than an hour on this machine says so under the task before Train; a short one says nothing; an
// estimate never outlives the form it was made for.
#include <gtest/gtest.h>

#include <QRegularExpression>
#include <QTest>

#include "gui/main_window.h"
#include "gui/run_cost_estimate.h"
#include "gui_fixture.h"
#include "training/run_cost.h"
#include "widgets/config_form.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;

// The tiny model for millions of steps: hours at any speed, and quick to time.
RunSpec longSpec() {
    RunSpec spec = tinySpec(5'000'000);
    spec.train.batchSize = 64;
    spec.train.evalEvery = 100'000;
    spec.train.snapshotEvery = 100'000;
    return spec;
}

TEST(Estimate, ALongRunShowsItsWallTimeBeforeTrain) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    ASSERT_LT(runProductFlops(tinySpec()), kSlowestFlops * 3600.0);
    QTest::qWait(RunCostEstimate::kSettleMs + 300);
    EXPECT_TRUE(window.form()->estimate().isEmpty()) << window.form()->estimate().toStdString();
    EXPECT_FALSE(window.costEstimate()->busy());  // a short run is not timed at all

    ASSERT_GE(runProductFlops(longSpec()), kSlowestFlops * 3600.0);
    window.form()->setSpec(longSpec());
    ASSERT_TRUE(window.form()->isValid());
    EXPECT_NE(window.form()->estimate().indexOf("Estimating"), -1);
    ASSERT_TRUE(waitFor([&] { return window.form()->estimate().startsWith("This run"); }, 60000))
        << window.form()->estimate().toStdString();
    const QString text = window.form()->estimate();
    EXPECT_NE(text.indexOf("on this machine"), -1) << text.toStdString();
    EXPECT_NE(text.indexOf("5,000,000 steps at"), -1) << text.toStdString();
    EXPECT_TRUE(text.contains(QRegularExpression("about \\d+h\\d\\dm on"))) << text.toStdString();

    // another form: the estimate goes at once, and a late answer for the old one is not shown
    window.form()->setSpec(tinySpec());
    EXPECT_TRUE(window.form()->estimate().isEmpty());
    QTest::qWait(RunCostEstimate::kSettleMs + 300);
    EXPECT_TRUE(window.form()->estimate().isEmpty());
}

TEST(Estimate, AnAnswerForAnotherFormIsDropped) {
    MainWindow window;
    window.form()->setSpec(longSpec());
    ASSERT_TRUE(waitFor([&] { return window.costEstimate()->busy(); }, 10000));
    RunSpec other = longSpec();
    other.train.steps = other.train.decaySteps = 6'000'000;
    window.form()->setSpec(other);  // while the first is timed
    ASSERT_TRUE(waitFor([&] { return window.form()->estimate().startsWith("This run"); }, 60000))
        << window.form()->estimate().toStdString();
    EXPECT_NE(window.form()->estimate().indexOf("6,000,000 steps"), -1)
        << window.form()->estimate().toStdString();
}

}  // namespace
}  // namespace nope::gui
