// The texts that name what the window shows (gui/subject.h), without a window.
#include <gtest/gtest.h>

#include <QJsonDocument>
#include <QJsonObject>

#include "gui/subject.h"

namespace nope::gui {
namespace {

Subject runOf(const QString& path, int step, SubjectPhase phase) {
    Subject s;
    s.origin = SubjectOrigin::Trained;
    s.spec.task = TaskKind::Reversal;
    s.spec.model.nLayer = 2;
    s.spec.model.nEmbd = 64;
    s.path = path;
    s.step = step;
    s.phase = phase;
    return s;
}

TEST(Subject, TheLineNamesTheModelTheStepAndWhatItDoes) {
    EXPECT_TRUE(subjectLine({}, -1, false).startsWith("No model"));
    EXPECT_EQ(subjectTitle({}, -1), "NoPEScope");

    Subject run = runOf("/runs/window-reversal-quick-1", 150, SubjectPhase::Finished);
    EXPECT_EQ(subjectLine(run, 150, false),
              "reversal, 2 layers x 64 · run window-reversal-quick-1 · step 150 · finished");
    EXPECT_EQ(subjectTitle(run, 150), "NoPEScope: reversal, window-reversal-quick-1 (step 150)");
    EXPECT_TRUE(subjectLine(run, 50, false).contains("showing step 50 of the newest 150"));
    EXPECT_TRUE(
        subjectLine(run, 150, true)
            .endsWith(
                "(the form has changed since: Initialize or Train builds a new model from it)"));

    EXPECT_EQ(subjectCaption(run, 150),  // names, not paths: it fits above a figure
              "reversal, 2 layers x 64 · run window-reversal-quick-1 · step 150");
    run.phase = SubjectPhase::Paused;
    run.liveStep = 183;  // the weights, past the newest snapshot
    EXPECT_TRUE(subjectLine(run, 150, false).endsWith("step 150 · paused at step 183"));
    run.source = "/runs/old/checkpoint.pt";
    EXPECT_TRUE(subjectLine(run, 150, false).contains("continued from /runs/old/checkpoint.pt"));
}

TEST(Subject, AModelFileIsLabelledByItsOwnStepNeverInit) {
    Subject file;
    file.origin = SubjectOrigin::ModelFile;
    file.path = "/runs/x/checkpoint.pt";
    file.step = 200;
    EXPECT_EQ(stageLabel(file, 200), "model (step 200)");
    file.step = -1;
    EXPECT_EQ(stageLabel(file, 0), "model (step unknown)");
    EXPECT_TRUE(subjectLine(file, 0, false).contains("step unknown"));
    EXPECT_FALSE(subjectTitle(file, 0).contains("step"));
    Subject run = runOf("/runs/r", 20, SubjectPhase::Idle);
    EXPECT_EQ(stageLabel(run, 0), "init");
    EXPECT_EQ(stageLabel(run, 20), "step 20");
}

TEST(Subject, ExportJsonNamesTheSubjectAndTheStepShown) {
    Subject run = runOf("/runs/r", 20, SubjectPhase::Stopped);
    const QJsonObject j = QJsonDocument::fromJson(subjectJson(run, 15)).object();
    EXPECT_EQ(j["origin"].toString(), "trained");
    EXPECT_EQ(j["phase"].toString(), "stopped");
    EXPECT_EQ(j["task"].toString(), "reversal");
    EXPECT_EQ(j["path"].toString(), "/runs/r");
    EXPECT_EQ(j["newest_step"].toInt(), 20);
    EXPECT_EQ(j["shown_step"].toInt(), 15);
    EXPECT_EQ(QJsonDocument::fromJson(subjectJson({}, -1)).object()["origin"].toString(), "none");
}

}  // namespace
}  // namespace nope::gui
