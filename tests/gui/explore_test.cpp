// The Explore tab in the window with a real model: a typed prompt is analysed by the model's
// thread and drawn, idle and during a run; the prompts tried travel with the session.
#include <gtest/gtest.h>

#include <QLineEdit>
#include <QListWidget>
#include <QSignalSpy>
#include <QTest>

#include <nlohmann/json.hpp>

#include "gui/main_window.h"
#include "gui/training_controller.h"
#include "gui_fixture.h"
#include "widgets/config_form.h"
#include "widgets/explore_tab.h"
#include "widgets/heatmap_grid.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;

TEST(Explore, ATypedPromptIsAnalysedByTheModel) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    window.show();
    window.initializeModel();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty(); }));
    ui::ExploreTab* explore = window.explore();
    QSignalSpy shown(explore, &ui::ExploreTab::resultShown);
    explore->promptField()->setText("$12+34=");
    ASSERT_TRUE(waitFor([&] { return shown.count() >= 1; }));
    ASSERT_EQ(explore->heatmaps(0)->heatmaps().size(), 3u);  // the embedding, attn 1 and 2
    EXPECT_EQ(explore->heatmaps(0)->heatmaps()[0].size, 7);  // the prompt as typed, unpadded
    EXPECT_NE(explore->answerText().indexOf("expected 64 (reads 46)"), -1)
        << explore->answerText().toStdString();
    EXPECT_GE(explore->lastLatencyMs(), 0.0);

    // a character outside the vocabulary is named and nothing is asked
    explore->promptField()->setText("$12\t+34=");
    EXPECT_NE(explore->problem().indexOf("tab (U+0009)"), -1);

    // during a run the prompt is analysed between two steps
    QSignalSpy finished(window.controller(), &TrainingController::finished);
    window.startTraining();
    explore->promptField()->setText("$1+2=");
    ASSERT_TRUE(waitFor([&] { return shown.count() >= 2; }));
    EXPECT_EQ(explore->heatmaps(0)->heatmaps()[0].size, 5);
    ASSERT_TRUE(waitFor([&] { return finished.count() == 1; }));
}

TEST(Explore, TheSessionKeepsThePromptsTried) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    ui::ExploreTab* explore = window.explore();
    for (const char* prompt : {"$1+2=", "rev(12)="}) {
        explore->promptField()->setText(prompt);
        QTest::keyClick(explore->promptField(), Qt::Key_Return);
    }
    const auto session = nlohmann::json::parse(window.sessionJson().toStdString());
    EXPECT_EQ(session.at("prompts"), nlohmann::json({"rev(12)=", "$1+2="}));
    EXPECT_EQ(session.at("format"), "nopescope-session-1");

    MainWindow other;
    EXPECT_TRUE(other.loadTriedPrompts(session).isEmpty());
    EXPECT_EQ(other.explore()->triedPrompts(), (QStringList{"rev(12)=", "$1+2="}));
    EXPECT_EQ(other.loadTriedPrompts(nlohmann::json{{"prompts", {1, 2}}}),
              "prompts[0]: not a string (allowed: a prompt)");
    EXPECT_TRUE(other.loadTriedPrompts(nlohmann::json{{"task", "addition"}}).isEmpty());
}

}  // namespace
}  // namespace nope::gui
