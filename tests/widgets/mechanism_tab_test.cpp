// The Mechanism tab, headless: moving a slider asks for one simulation (coalesced), a result is
// drawn beside the closed form for uniform causal averaging and alone otherwise.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QSlider>
#include <QTest>

#include "widgets/heatmap_grid.h"
#include "widgets/mechanism_tab.h"

namespace nope {
namespace {

AveragingResult syntheticResult(int T) {
    AveragingResult r;
    r.length = T;
    r.adjacencyMean = 0.97;
    r.adjacencyStd = 0.01;
    r.meanMatrix = uniformAveragingCosine(T);
    return r;
}

TEST(MechanismTab, SlidersAskOnceAndTheResultIsDrawn) {
    ui::MechanismTab tab;
    QSignalSpy asked(&tab, &ui::MechanismTab::simulateRequested);
    AveragingConfig c;
    c.length = 20;
    c.dim = 128;
    c.samples = 64;
    tab.setConfig(c);  // several controls change: one request after the pause
    ASSERT_TRUE(asked.wait(2000));
    EXPECT_EQ(asked.size(), 1);
    EXPECT_FALSE(tab.requestPending());  // nothing more will come
    const auto requested = asked.front().front().value<AveragingConfig>();
    EXPECT_EQ(requested.length, 20);
    EXPECT_EQ(requested.dim, 128);
    EXPECT_EQ(requested.samples, 64);
    EXPECT_TRUE(requested.causal);

    tab.showResult(syntheticResult(20));
    ASSERT_EQ(tab.heatmaps()->heatmaps().size(), 2u);  // simulated beside sqrt(k/m)
    EXPECT_TRUE(tab.scoreText().contains("within 0.0000")) << tab.scoreText().toStdString();
    EXPECT_NEAR(tab.heatmaps()->heatmaps()[1].values[1 * 20 + 0], std::sqrt(0.5), 1e-6);

    c.causal = false;
    tab.setConfig(c);
    tab.showResult(syntheticResult(20));
    EXPECT_EQ(tab.heatmaps()->heatmaps().size(), 1u);  // no closed form for the control
    EXPECT_TRUE(tab.scoreText().contains("identical rows"));

    c.weights = AveragingWeights::Model;  // the model's prompts set the length: no slider
    c.inputs = AveragingInputs::Tokens;
    tab.setConfig(c);
    EXPECT_EQ(tab.config().weights, AveragingWeights::Model);
    EXPECT_EQ(tab.config().inputs, AveragingInputs::Tokens);
    EXPECT_FALSE(tab.findChildren<QSlider*>()[0]->isEnabled());
}

}  // namespace
}  // namespace nope
