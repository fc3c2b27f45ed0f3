// The window refuses what cannot work and says why: a model too large for the machine's memory
// (before anything is allocated) and hidden states that stop being finite numbers.
#include <gtest/gtest.h>

#include "gui/main_window.h"
#include "gui/training_controller.h"
#include "gui_fixture.h"
#include "util/memory.h"
#include "widgets/config_form.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;

TEST(BadInput, AModelTooLargeForTheMachineIsRefusedBeforeAllocation) {
    RunSpec spec = tinySpec();
    spec.model.nLayer = 48;
    spec.model.nEmbd = 4096;
    spec.model.nHead = 32;
    const auto available = availableMemory();
    ASSERT_TRUE(available.has_value());
    ASSERT_GT(trainingMemory(spec.model, spec.train.batchSize, trainingTokens(spec), false).total(),
              *available);
    MainWindow window;
    window.form()->setSpec(spec);
    // the form says it beside the dim field at once, and Initialize and Train refuse
    EXPECT_FALSE(window.form()->isValid());
    ASSERT_FALSE(window.form()->errors().isEmpty());
    EXPECT_NE(window.form()->errors().front().indexOf("the model needs about"), -1)
        << window.form()->errors().front().toStdString();
    window.initializeModel();
    EXPECT_NE(window.problem().indexOf("the model needs about"), -1)
        << window.problem().toStdString();
    EXPECT_NE(window.problem().indexOf("available"), -1);
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Empty);
    window.startTraining();
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Empty);
}

TEST(BadInput, NonFiniteHiddenStatesAreNamedInTheBanner) {
    RunSpec spec = tinySpec();
    spec.model.init.scheme = InitScheme::Normal;
    spec.model.init.std = 1e30;
    MainWindow window;
    window.form()->setSpec(spec);
    window.initializeModel();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty(); }));
    EXPECT_NE(window.problem().indexOf("the hidden states are"), -1)
        << window.problem().toStdString();
    EXPECT_NE(window.problem().indexOf(" layer 1 on"), -1) << window.problem().toStdString();
}

}  // namespace
}  // namespace nope::gui
