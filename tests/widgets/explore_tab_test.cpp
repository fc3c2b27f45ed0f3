// The Explore tab, headless, on synthetic answers: the prompt field's checks, one request at a
// time while typing, the heatmaps and the answer, the pinned prompt and the difference, and the
// list of prompts tried.
#include <gtest/gtest.h>

#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "widgets/explore_tab.h"
#include "widgets/heatmap_grid.h"

namespace nope {
namespace {

using Prompts = std::vector<std::string>;

// One prompt's analysis: the embedding and attn at 2 layers, every cell `value`.
Analysis analysisOf(const std::string& prompt, float value, double adjacency) {
    Analysis a;
    a.samples = 1;
    a.seqLen = static_cast<int>(prompt.size());
    a.keptPrompts = {prompt};
    const size_t cells = prompt.size() * prompt.size();
    for (auto [point, layer] : {std::pair{CapturePoint::Embedding, 0},
                                {CapturePoint::Attn, 1},
                                {CapturePoint::Attn, 2},
                                {CapturePoint::Resid, 1}}) {
        LayerScores row;
        row.point = point;
        row.layer = layer;
        row.adjacencyMean = adjacency + 0.1 * layer;
        row.meanMatrix.assign(cells, value);
        row.promptMatrices = {row.meanMatrix};
        a.rows.push_back(row);
    }
    return a;
}

PromptAnalysis resultFor(const Prompts& prompts, const std::string& answer = "4321") {
    PromptAnalysis r;
    r.step = 40;
    r.task = TaskKind::Reversal;
    r.prompts = prompts;
    for (size_t i = 0; i < prompts.size(); ++i) {
        r.analyses.push_back(analysisOf(prompts[i], 0.5f + 0.1f * i, 0.5 + 0.05 * i));
        r.answers.push_back(judgeAnswer(TaskKind::Reversal, prompts[i], answer + "\n"));
    }
    r.seconds = 0.004;
    return r;
}

Prompts requested(const QSignalSpy& spy, int index) {
    return spy.at(index).at(0).value<Prompts>();
}

TEST(ExploreTab, NamesCharactersOutsideTheVocabularyAndAsksNothing) {
    ui::ExploreTab tab;
    tab.setModelAvailable(true);
    tab.setContext(16);
    QSignalSpy asked(&tab, &ui::ExploreTab::analysisRequested);
    tab.promptField()->setText("rev(\xC3\xA9)=");
    EXPECT_EQ(tab.problem(),
              QString::fromUtf8("the character '\xC3\xA9' (U+00E9) is not in the "
                                "vocabulary (allowed: printable ASCII and newline)"));
    EXPECT_EQ(asked.count(), 0);
    tab.promptField()->setText(QString(17, '1'));
    EXPECT_EQ(tab.problem(),
              "17 characters, longer than the model's context of 16 (allowed: 1 to 16)");
    EXPECT_EQ(asked.count(), 0);
}

TEST(ExploreTab, WithoutAModelItSaysWhatToDo) {
    ui::ExploreTab tab;
    QSignalSpy asked(&tab, &ui::ExploreTab::analysisRequested);
    tab.promptField()->setText("rev(12)=");
    EXPECT_EQ(asked.count(), 0);
    EXPECT_NE(tab.answerText().indexOf("press Initialize"), -1);
    tab.setModelAvailable(true);  // the model arrives: the typed prompt is asked at once
    ASSERT_EQ(asked.count(), 1);
    EXPECT_EQ(requested(asked, 0), Prompts{"rev(12)="});
}

// One request in flight: keystrokes meanwhile are asked for once, as the newest text.
TEST(ExploreTab, TypingAsksOnceAtATimeThenTheNewestText) {
    ui::ExploreTab tab;
    tab.setModelAvailable(true);
    QSignalSpy asked(&tab, &ui::ExploreTab::analysisRequested);
    QSignalSpy shown(&tab, &ui::ExploreTab::resultShown);
    tab.promptField()->setText("rev(1");
    tab.promptField()->setText("rev(12");
    tab.promptField()->setText("rev(123");
    ASSERT_EQ(asked.count(), 1);
    tab.setResult(resultFor({"rev(1"}));
    ASSERT_EQ(asked.count(), 2);
    EXPECT_EQ(requested(asked, 1), Prompts{"rev(123"});
    tab.setResult(resultFor({"rev(123"}));
    EXPECT_EQ(asked.count(), 2);
    EXPECT_EQ(shown.count(), 2);
    EXPECT_GE(tab.lastLatencyMs(), 0.0);
    EXPECT_NE(tab.timingText().indexOf("model at step 40"), -1);
}

// Cleared, or given a bad character, while an answer is on its way: the answer is not drawn
// under the wrong text and nothing more is asked; a model not ready yet is asked again later.
TEST(ExploreTab, NoStaleAnswerAndARetryWhenTheModelIsReady) {
    ui::ExploreTab tab;
    tab.setModelAvailable(true);
    QSignalSpy asked(&tab, &ui::ExploreTab::analysisRequested);
    tab.promptField()->setText("rev(1");
    tab.promptField()->setText("rev(12");
    tab.promptField()->clear();
    tab.setResult(resultFor({"rev(1"}));
    EXPECT_EQ(asked.count(), 1);
    EXPECT_TRUE(tab.heatmaps(0)->heatmaps().empty());

    tab.promptField()->setText("rev(9)=");
    ASSERT_EQ(asked.count(), 2);
    tab.setFailure("The model is busy", /*retry=*/true);
    EXPECT_EQ(asked.count(), 2);
    tab.retryIfWaiting();
    ASSERT_EQ(asked.count(), 3);
    EXPECT_EQ(requested(asked, 2), Prompts{"rev(9)="});
    tab.retryIfWaiting();  // once only
    EXPECT_EQ(asked.count(), 3);
}

TEST(ExploreTab, DrawsEveryLayerAndTheJudgedAnswer) {
    ui::ExploreTab tab;
    tab.setModelAvailable(true);
    tab.promptField()->setText("rev(1234)=");
    tab.setResult(resultFor({"rev(1234)="}));
    const auto& maps = tab.heatmaps(0)->heatmaps();
    ASSERT_EQ(maps.size(), 3u);  // the embedding, attn at layers 1 and 2
    EXPECT_EQ(maps[1].title, "attn layer 1  0.600");
    EXPECT_EQ(maps[0].tokens.size(), 10);
    EXPECT_EQ(tab.answerText(), "the model's greedy answer: 4321;  expected 4321: correct");
    tab.setPoint(CapturePoint::Resid);
    ASSERT_EQ(tab.heatmaps(0)->heatmaps().size(), 2u);
    EXPECT_EQ(tab.heatmaps(0)->heatmaps()[1].title, "resid layer 1  0.600");

    tab.promptField()->setText("hello");
    tab.setResult(resultFor({"hello"}, "xyz"));
    EXPECT_EQ(tab.answerText(),
              "the model's greedy answer: xyz;  not a prompt of the reversal "
              "task: no expected answer");
}

TEST(ExploreTab, PinnedPromptAndTheDifference) {
    ui::ExploreTab tab;
    tab.setModelAvailable(true);
    QSignalSpy asked(&tab, &ui::ExploreTab::analysisRequested);
    tab.promptField()->setText("rev(1234)=");
    tab.setResult(resultFor({"rev(1234)="}));
    tab.pinButton()->click();
    EXPECT_EQ(tab.pinnedPrompt(), "rev(1234)=");
    EXPECT_EQ(tab.pinButton()->text(), "Unpin");
    tab.setResult(resultFor(requested(asked, asked.count() - 1)));
    tab.promptField()->setText("rev(1294)=");
    EXPECT_EQ(requested(asked, asked.count() - 1), (Prompts{"rev(1294)=", "rev(1234)="}));
    tab.setResult(resultFor({"rev(1294)=", "rev(1234)="}));
    ASSERT_EQ(tab.heatmaps(1)->heatmaps().size(), 3u);
    const auto& difference = tab.heatmaps(2)->heatmaps();
    ASSERT_EQ(difference.size(), 3u);
    EXPECT_NEAR(difference[1].values[0], -0.1f, 1e-6);  // shown 0.5 - pinned 0.6
    EXPECT_EQ(difference[1].title, QString::fromUtf8("attn 1  \xCE\x94 -0.050"));

    // prompts of other lengths: no difference, and why
    tab.promptField()->setText("rev(12)=");
    tab.setResult(resultFor({"rev(12)=", "rev(1234)="}));
    EXPECT_TRUE(tab.heatmaps(2)->heatmaps().empty());
    EXPECT_EQ(tab.heatmaps(1)->heatmaps().size(), 3u);

    tab.promptField()->setText("rev(1234)=");  // the pinned prompt itself: asked once
    EXPECT_EQ(requested(asked, asked.count() - 1), Prompts{"rev(1234)="});
    tab.setResult(resultFor({"rev(1234)="}));
    EXPECT_EQ(tab.heatmaps(1)->heatmaps().size(), 3u);
    EXPECT_EQ(tab.heatmaps(2)->heatmaps()[1].values[0], 0.0f);
    tab.pinButton()->click();  // the pinned prompt again: unpin
    EXPECT_TRUE(tab.pinnedPrompt().isEmpty());
    EXPECT_TRUE(tab.heatmaps(1)->heatmaps().empty());
}

TEST(ExploreTab, PromptsTriedAreKeptAndRestored) {
    ui::ExploreTab tab;
    tab.setModelAvailable(true);
    tab.promptField()->setText("rev(1)=");
    QTest::keyClick(tab.promptField(), Qt::Key_Return);
    tab.promptField()->setText("rev(2)=");
    QTest::keyClick(tab.promptField(), Qt::Key_Return);
    tab.promptField()->setText("rev(1)=");
    QTest::keyClick(tab.promptField(), Qt::Key_Return);
    EXPECT_EQ(tab.triedPrompts(), (QStringList{"rev(1)=", "rev(2)="}));  // most recent first
    tab.triedList()->setCurrentRow(1);
    Q_EMIT tab.triedList()->itemClicked(tab.triedList()->item(1));
    EXPECT_EQ(tab.promptField()->text(), "rev(2)=");

    const QString problem = tab.setTriedPrompts({"a", QString::fromUtf8("caf\xC3\xA9"), "", "b"});
    EXPECT_EQ(problem, QString::fromUtf8("prompts[1]: the character '\xC3\xA9' (U+00E9) is not "
                                         "in the vocabulary (allowed: printable ASCII and "
                                         "newline)"));
    EXPECT_EQ(tab.triedPrompts(), (QStringList{"a", "b"}));
}

}  // namespace
}  // namespace nope
