// The window and its panels, headless (QT_QPA_PLATFORM=offscreen): the form's checks, the
// heatmaps after Initialize (compared with the model's own matrices), live curves during a short
// run, scrubbing, exports, problems shown in the window, reopening a run folder, closing while
// training.
#include <gtest/gtest.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <cmath>

#include "gui/automation.h"
#include "gui/main_window.h"
#include "gui/meta_types.h"
#include "gui_fixture.h"
#include "settings/settings.h"
#include "training/trainer.h"
#include "widgets/attention_tab.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/heatmap_grid.h"
#include "widgets/probe_panel.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/qcp.h"
#include "widgets/run_controls.h"
#include "widgets/score_table.h"

namespace nope {
namespace {

using gui::Automation;
using gui::MainWindow;
using gui::TrainingController;
using gui_test::tinySpec;
using gui_test::waitFor;

// A run far longer than any test waits for, with no evaluation or snapshot after step 0.
RunSpec endlessSpec() {
    RunSpec spec = tinySpec();
    spec.train.steps = spec.train.decaySteps = 100000;
    spec.train.evalEvery = spec.train.snapshotEvery = 100000;
    return spec;
}

// Until the window has drawn what it was last given (its redraws are coalesced by a timer).
void settle(const MainWindow& window) {
    ASSERT_TRUE(waitFor([&] { return !window.redrawPending(); }));
}

void typeInto(QLineEdit* edit, const QString& text) {
    edit->selectAll();
    QTest::keyClicks(edit, text);
}

bool sameFloat(double shown, float expected) {
    return std::fabs(shown - expected) < 1e-5;
}

TEST(Form, RejectsBadValuesWithAMessageAndDisablesTrain) {
    MainWindow window;
    ui::ConfigForm* form = window.form();
    ASSERT_TRUE(form->isValid()) << form->errors().join("; ").toStdString();
    EXPECT_TRUE(window.controls()->trainButton()->isEnabled());

    typeInto(form->field("dim"), "100");  // the quick preset has 4 heads... use 6 below
    typeInto(form->field("heads"), "6");
    EXPECT_FALSE(form->isValid());
    EXPECT_TRUE(form->fieldError("dim").contains("not divisible"))
        << form->fieldError("dim").toStdString();
    EXPECT_FALSE(window.controls()->trainButton()->isEnabled());
    EXPECT_FALSE(window.controls()->initializeButton()->isEnabled());

    typeInto(form->field("dim"), "96");
    EXPECT_TRUE(form->isValid());
    EXPECT_TRUE(form->fieldError("dim").isEmpty());
    EXPECT_TRUE(window.controls()->trainButton()->isEnabled());

    typeInto(form->field("lr"), "fast");
    EXPECT_EQ(form->fieldError("lr"), "'fast' is not a number (allowed: (0, 1])");
    typeInto(form->field("lr"), "0.001");
    typeInto(form->field("init-std"), "0");
    EXPECT_TRUE(form->fieldError("init-std").contains("greater than 0"));
    typeInto(form->field("init-std"), "0.02");
    typeInto(form->field("steps"), "-5");
    EXPECT_TRUE(form->fieldError("steps").contains("outside the allowed"));
    typeInto(form->field("steps"), "100");
    EXPECT_TRUE(form->isValid()) << form->errors().join("; ").toStdString();
}

// The form is built from the table of settings: every setting has an editor under its own name
// and label, shows the spec's value, and a bad value shows the table's message under it, with
// references to other settings by their labels.
TEST(Form, EverySettingOfTheTableHasAnEditor) {
    ui::ConfigForm form;
    form.setSpec(tinySpec());
    int rows = 0;
    for (const Setting* s :
         settingsIn({SettingSection::Model, SettingSection::Init, SettingSection::Training,
                     SettingSection::Data, SettingSection::Analysis, SettingSection::Probe})) {
        const QString name = QString::fromStdString(s->name);
        QWidget* editor = form.editor(name);
        ASSERT_NE(editor, nullptr) << s->name;
        EXPECT_EQ(form.label(name), QString::fromStdString(s->label));
        EXPECT_FALSE(editor->toolTip().isEmpty()) << s->name;
        if (auto* line = form.field(name)) {
            EXPECT_EQ(line->text().toStdString(), s->get(tinySpec())) << s->name;
        }
        ++rows;
    }
    EXPECT_GT(rows, 50);
    typeInto(form.field("window"), "9999");
    EXPECT_EQ(form.fieldError("window"), "9999 is outside the allowed 2 to 4096");
    EXPECT_TRUE(form.editor("window")->isVisibleTo(&form));  // "more" opens on a problem
    typeInto(form.field("window"), "64");
    typeInto(form.field("keep-prompts"), "20");
    EXPECT_EQ(form.fieldError("keep-prompts"),
              "20 is more than the analysis-samples of 8 (allowed: up to it)");
    EXPECT_TRUE(form.errors().contains(
        "keep-prompts: 20 is more than the analysis-samples of 8 (allowed: up to it)"));
}

// A rule between two settings shows under the field typed (its "more" opened), naming the other
// by its label, and goes when the other setting changes.
TEST(Form, ACurriculumAsksForWholeExamples) {
    ui::ConfigForm form;
    RunSpec spec = tinySpec();
    spec.train.objective = Objective::Lm;
    form.setSpec(spec);
    typeInto(form.field("curriculum-steps"), "500");
    EXPECT_EQ(form.fieldError("curriculum-steps"),
              "500 with the lm objective, whose windows cut across examples (allowed: 0, or the "
              "answer, masked or next objective)");
    EXPECT_TRUE(form.editor("curriculum-steps")->isVisibleTo(&form));
    if (const QByteArray dir = qgetenv("NOPESCOPE_FORM_PNG"); !dir.isEmpty()) {
        form.resize(420, form.sizeHint().height());
        form.grab().save(QDir(dir).filePath("form_curriculum.png"));
    }
    auto* objective = qobject_cast<QComboBox*>(form.editor("objective"));
    ASSERT_NE(objective, nullptr);
    objective->setCurrentText("masked");
    EXPECT_TRUE(form.fieldError("curriculum-steps").isEmpty());
    EXPECT_EQ(form.spec().train.curriculumSteps, 500);
    EXPECT_EQ(form.spec().train.objective, Objective::Masked);
}

TEST(Form, TheDecayFollowsTheStepsUntilItIsSetApart) {
    ui::ConfigForm form;
    form.setSpec(tinySpec());
    typeInto(form.field("steps"), "40");
    EXPECT_EQ(form.spec().train.decaySteps, 40);
    typeInto(form.field("decay-steps"), "30");
    typeInto(form.field("steps"), "50");
    EXPECT_EQ(form.spec().train.steps, 50);
    EXPECT_EQ(form.spec().train.decaySteps, 30);
}

TEST(Form, PresetsFillTheFormAndSessionsRoundTrip) {
    ui::ConfigForm form;
    form.setSpec(tinySpec());
    EXPECT_EQ(form.field("layers")->text(), "2");
    const QByteArray session = form.sessionJson();
    ui::ConfigForm other;
    EXPECT_TRUE(other.loadSessionJson(session).isEmpty());
    EXPECT_EQ(other.field("dim")->text(), "32");
    EXPECT_EQ(toJson(other.spec()), toJson(form.spec()));
    EXPECT_FALSE(other.loadSessionJson("{\"task\": \"sorting\"}").isEmpty());
    EXPECT_EQ(other.field("dim")->text(), "32");  // unchanged after a failed load
}

TEST(Window, InitializeFillsEveryHeatmapWithTheModelsMatrices) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    window.show();
    QTest::mouseClick(window.controls()->initializeButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] {
        return !window.history().empty() && window.redrawCount() > 0 &&
               window.heatmaps()->heatmaps().size() == 3;
    }));
    settle(window);

    // The same model, built here independently from the same spec and seed.
    const RunSpec spec = tinySpec();
    Trainer reference(spec.task, spec.model, spec.train);
    const Analysis expected = reference.analyze();
    const ui::HeatmapGrid* grid = window.heatmaps();
    ASSERT_EQ(grid->heatmaps().size(), 3u);  // embedding, layer 1, layer 2 of the attn point
    const int T = expected.seqLen;
    const std::pair<CapturePoint, int> order[] = {
        {CapturePoint::Embedding, 0}, {CapturePoint::Attn, 1}, {CapturePoint::Attn, 2}};
    for (int m = 0; m < 3; ++m) {
        const LayerScores* row = expected.find(order[m].first, order[m].second);
        ASSERT_NE(row, nullptr);
        for (int i = 0; i < T; ++i) {
            for (int j = 0; j < T; ++j) {
                const double shown = grid->shownValue(m, i, j);
                if (j > i) {
                    EXPECT_TRUE(std::isnan(shown)) << "future cell " << i << "," << j;
                } else {
                    ASSERT_TRUE(sameFloat(shown, row->meanMatrix[static_cast<size_t>(i) * T + j]))
                        << "map " << m << " cell " << i << "," << j;
                }
            }
        }
        EXPECT_TRUE(
            grid->heatmaps()[m].title.contains(QString::number(row->adjacencyMean, 'f', 3)));
    }
    EXPECT_EQ(window.scores()->rowCount(), 1);  // init only
}

TEST(Window, ShortTrainingMovesTheCurvesAndTheSliderScrubs) {
    QTemporaryDir dir;
    MainWindow window;
    window.form()->setSpec(tinySpec());
    QSignalSpy finished(window.controller(), &TrainingController::finished);
    QTest::mouseClick(window.controls()->trainButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return finished.count() == 1; }));
    settle(window);
    const auto& history = window.history();
    ASSERT_EQ(history.size(), 5u);  // steps 0, 5, 10, 15, 20
    EXPECT_EQ(history.back().step, 20);
    QCustomPlot* adjacency = window.curves()->adjacencyPlot();
    ASSERT_EQ(adjacency->graphCount(), 3);  // embedding, layer 1, layer 2
    const QCPGraph* layer1 = adjacency->graph(1);
    ASSERT_EQ(layer1->dataCount(), 5);
    for (int k = 0; k < 5; ++k) {
        EXPECT_DOUBLE_EQ(layer1->data()->at(k)->key, history[static_cast<size_t>(k)].step);
        EXPECT_DOUBLE_EQ(
            layer1->data()->at(k)->value,
            history[static_cast<size_t>(k)].analysis.find(CapturePoint::Attn, 1)->adjacencyMean);
    }
    QCustomPlot* training = window.curves()->trainingPlot();
    EXPECT_EQ(training->graph(0)->dataCount(), 4);  // train loss from step 5 on
    EXPECT_EQ(training->graph(1)->dataCount(), 3);  // test loss at steps 0, 10, 20
    EXPECT_GE(window.scores()->rowCount(), 2);      // init and the current step
    // the Attention tab: every snapshot recorded the weights; a curve point per snapshot
    ui::AttentionTab* attention = window.attention();
    ASSERT_EQ(attention->heatmaps()->heatmaps().size(), 2u);  // layer 1's two heads
    EXPECT_EQ(attention->entropyPlot()->graph(0)->dataCount(), 5);
    EXPECT_DOUBLE_EQ(attention->entropyPlot()->graph(1)->data()->at(4)->value,
                     history.back().analysis.attention.find(1, 1)->entropy);

    // scrub back to step 0: the heatmaps show that snapshot's matrices
    window.stepSlider()->setValue(0);
    settle(window);
    const auto& first = history.front().analysis.find(CapturePoint::Attn, 1)->meanMatrix;
    EXPECT_TRUE(sameFloat(window.heatmaps()->shownValue(1, 3, 1),
                          first[3 * history.front().analysis.seqLen + 1]));
    const auto& firstWeights = history.front().analysis.attention.find(1, 0)->meanMatrix;
    EXPECT_EQ(attention->heatmaps()->heatmaps()[0].values, firstWeights);
    // the Projector: every snapshot projected its prompts; the shown one's R per layer
    ui::ProjectorTab* projector = window.projector();
    EXPECT_EQ(projector->panelCount(), 3);  // the embedding and attn's two layers
    ASSERT_EQ(projector->tableData().rows.size(), 3);
    const Projection* atInit =
        history.front().analysis.projection.find(CapturePoint::Attn, 1, ProjectionMethod::Pca);
    ASSERT_NE(atInit, nullptr);
    EXPECT_EQ(projector->tableData().rows[1].back(), QString::number(atInit->rPosition, 'f', 4));

    // the run folder it wrote opens again in a fresh window, with the same snapshots
    const QString folder = window.runFolder();
    ASSERT_FALSE(folder.isEmpty());
    MainWindow reopened;
    reopened.openRunFolder(folder);
    EXPECT_TRUE(reopened.problem().isEmpty()) << reopened.problem().toStdString();
    ASSERT_EQ(reopened.history().size(), 5u);
    EXPECT_EQ(reopened.form()->field("dim")->text(), "32");
    settle(reopened);
    EXPECT_EQ(reopened.curves()->adjacencyPlot()->graph(1)->dataCount(), 5);
    EXPECT_EQ(reopened.attention()->entropyPlot()->graph(0)->dataCount(), 5);  // from the files
    EXPECT_EQ(reopened.projector()->panelCount(), 3);
}

// The loss and accuracy curves draw every evaluation, also those between snapshots, live and
// from the run folder (its evaluations.csv) when it is opened again.
TEST(Window, TheCurvesDrawEveryEvaluationAlsoBetweenSnapshots) {
    RunSpec spec = tinySpec();
    spec.train.evalEvery = 5;
    spec.train.snapshotEvery = 10;
    MainWindow window;
    window.form()->setSpec(spec);
    QSignalSpy finished(window.controller(), &TrainingController::finished);
    QTest::mouseClick(window.controls()->trainButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return finished.count() == 1; }));
    settle(window);
    ASSERT_GE(window.history().size(), 3u);  // steps 0, 10, 20 and the new bests'
    const auto steps = [](const QCPGraph* g) {
        std::vector<double> keys;
        for (int k = 0; k < g->dataCount(); ++k) {
            keys.push_back(g->data()->at(k)->key);
        }
        return keys;
    };
    const std::vector<double> every = {0, 5, 10, 15, 20};
    QCustomPlot* training = window.curves()->trainingPlot();
    EXPECT_EQ(steps(training->graph(1)), every);  // test loss
    EXPECT_EQ(steps(training->graph(2)), every);  // test accuracy
    const double lastAccuracy = training->graph(2)->data()->at(4)->value;
    EXPECT_DOUBLE_EQ(lastAccuracy, window.history().back().eval.accuracy);
    // an evaluation that no snapshot carries, as the run reports it after each one
    Snapshot progress = window.history().back();
    progress.step = progress.eval.step = 22;
    progress.eval.accuracy = 42.0;
    Q_EMIT window.controller()->progress(progress);
    settle(window);
    EXPECT_EQ(window.history().back().step, 20);
    EXPECT_EQ(steps(training->graph(2)), (std::vector<double>{0, 5, 10, 15, 20, 22}));
    EXPECT_DOUBLE_EQ(training->graph(2)->data()->at(5)->value, 42.0);

    MainWindow reopened;
    reopened.openRunFolder(window.runFolder());
    EXPECT_TRUE(reopened.problem().isEmpty()) << reopened.problem().toStdString();
    settle(reopened);
    QCustomPlot* read = reopened.curves()->trainingPlot();
    EXPECT_EQ(steps(read->graph(1)), every);
    EXPECT_EQ(steps(read->graph(2)), every);
    EXPECT_NEAR(read->graph(2)->data()->at(4)->value, lastAccuracy, 0.01);  // 2 decimals
}

TEST(Window, ExportWritesValidFiguresAndTables) {
    QTemporaryDir dir;
    MainWindow window;
    window.form()->setSpec(tinySpec());
    window.show();
    window.initializeModel();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty(); }));
    settle(window);
    const QStringList problems = window.exportAll(dir.path(), 2.0);
    ASSERT_TRUE(problems.isEmpty()) << problems.join("\n").toStdString();
    const QDir d(dir.path());
    for (const QString& name :
         {QString("heatmaps"), QString("adjacency_curves"), QString("training_curves"),
          QString("attention_heatmaps"), QString("attention_entropy"), QString("projector"),
          QString("projector_position")}) {
        QImage png(d.filePath(name + ".png"));
        EXPECT_FALSE(png.isNull()) << name.toStdString();
        EXPECT_GE(png.width(), 400) << name.toStdString();  // twice the on-screen size
        QFile pdf(d.filePath(name + ".pdf"));
        ASSERT_TRUE(pdf.open(QIODevice::ReadOnly));
        const QByteArray pdfBytes = pdf.readAll();
        EXPECT_TRUE(pdfBytes.startsWith("%PDF-")) << name.toStdString();
        EXPECT_TRUE(pdfBytes.trimmed().endsWith("%%EOF")) << name.toStdString();
        QFile svg(d.filePath(name + ".svg"));
        ASSERT_TRUE(svg.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svg);
        bool sawSvg = false;
        while (!xml.atEnd()) {
            if (xml.readNext() == QXmlStreamReader::StartElement &&
                xml.name() == QLatin1String("svg")) {
                sawSvg = true;
            }
        }
        EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString();
        EXPECT_TRUE(sawSvg);
    }
    QFile csv(d.filePath("scores.csv"));
    ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split('\n');
    EXPECT_EQ(lines.front(), "stage,point,layer,adjacency_mean,adjacency_std,prompts");
    ASSERT_EQ(lines.size(), 4);  // init: embedding, layer 1, layer 2
    for (const QString& line : lines) {
        EXPECT_EQ(line.count(','), 5) << line.toStdString();
    }
    EXPECT_TRUE(lines[1].endsWith(",8")) << lines[1].toStdString();  // tinySpec's 8 prompts
    for (const char* name : {"scores.json", "config.json"}) {
        QFile f(d.filePath(name));
        ASSERT_TRUE(f.open(QIODevice::ReadOnly));
        QJsonParseError error;
        QJsonDocument::fromJson(f.readAll(), &error);
        EXPECT_EQ(error.error, QJsonParseError::NoError) << name;
    }
    QFile attentionCsv(d.filePath("attention.csv"));
    ASSERT_TRUE(attentionCsv.open(QIODevice::ReadOnly));
    EXPECT_TRUE(attentionCsv.readAll().startsWith("layer,head,entropy,mean distance\n1,0,"));
    QFile projectionCsv(d.filePath("projection.csv"));
    ASSERT_TRUE(projectionCsv.open(QIODevice::ReadOnly));
    EXPECT_TRUE(projectionCsv.readAll().startsWith(
        "point,layer,method,explained 1,explained 2,explained 3,R position\nembedding,0,pca,"));
    QFile md(d.filePath("scores.md"));
    ASSERT_TRUE(md.open(QIODevice::ReadOnly));
    EXPECT_TRUE(md.readAll().startsWith("| stage |"));
    // an export into a place that cannot be written reports the problem
    EXPECT_FALSE(window.exportAll("/proc/no-such-place/export", 1.0).isEmpty());
}

TEST(Window, ProbesAtInitInTrainingOnDemandAndInTheRunFolder) {
    QTemporaryDir dir;
    MainWindow window;
    RunSpec spec = tinySpec();
    spec.train.probeEvery = 2;  // steps 0, 10, 20
    spec.train.probe.hidden = {8};
    spec.train.probe.activations = {ProbeActivation::Selu};
    spec.train.probe.epochs = 2;
    spec.train.probe.trainStrings = 32;
    spec.train.probe.testStrings = 16;
    window.form()->setSpec(spec);
    window.show();
    QSignalSpy finished(window.controller(), &TrainingController::finished);
    window.startTraining();
    ASSERT_TRUE(waitFor([&] { return finished.count() == 1; }));
    settle(window);
    std::vector<int> probed;
    for (const Snapshot& s : window.history()) {
        if (!s.probes.empty()) {
            probed.push_back(s.step);
        }
    }
    EXPECT_EQ(probed, (std::vector<int>{0, 10, 20}));
    EXPECT_EQ(window.scores()->rowCount(), 4);  // init and step 20, each with its probe row
    const ui::TableData probeTable = window.probes()->panel()->table();
    EXPECT_EQ(probeTable.rows.size(), 2 * 15);  // init and step 20: 3 sites x 5 features

    // Run probes on the trained model: the result lands on the last snapshot
    QSignalSpy probes(window.controller(), &TrainingController::probes);
    ASSERT_TRUE(window.probes()->runButton()->isEnabled());
    QTest::mouseClick(window.probes()->runButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return probes.count() == 1; }));
    settle(window);
    EXPECT_EQ(window.currentView(), window.probes());
    const ProbeReport& latest = window.history().back().probes;
    EXPECT_EQ(latest.trainStrings, fastProbeConfig().trainStrings);  // the tab's fast setting
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Ready);

    const QStringList problems = window.exportAll(dir.path(), 1.0);
    ASSERT_TRUE(problems.isEmpty()) << problems.join("\n").toStdString();
    for (const char* name : {"probe_bars.png", "probe_scatter.svg", "probes.csv", "probes.md"}) {
        EXPECT_TRUE(QFile::exists(QDir(dir.path()).filePath(name))) << name;
    }

    // the run folder keeps the probes of training
    MainWindow reopened;
    reopened.openRunFolder(window.runFolder());
    ASSERT_EQ(reopened.history().size(), 5u);
    EXPECT_EQ(reopened.history().front().probes.results.size(), 15u);
}

TEST(Window, OpenModelAnalysesAndProbesANanoGptCheckpoint) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    QSignalSpy ready(window.controller(), &TrainingController::ready);
    window.openModel(QString(NOPESCOPE_TEST_DATA) + "/nanogpt_ckpt.pt");
    ASSERT_TRUE(waitFor([&] { return ready.count() == 1; }));
    settle(window);
    ASSERT_EQ(window.history().size(), 1u);
    EXPECT_EQ(window.history().front().analysis.layerCount(), 2);
    EXPECT_EQ(window.form()->field("dim")->text(), "24");  // the file's model, on the form
    QSignalSpy probes(window.controller(), &TrainingController::probes);
    window.runProbes();
    ASSERT_TRUE(waitFor([&] { return probes.count() == 1; }));
    EXPECT_FALSE(window.history().front().probes.empty());

    QTemporaryDir dir;
    const QString bad = dir.filePath("foreign.pt");
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("PK\x03\x04 not really a zip");
    f.close();
    QSignalSpy failed(window.controller(), &TrainingController::failed);
    window.openModel(bad);
    ASSERT_TRUE(waitFor([&] { return failed.count() == 1; }));
    EXPECT_TRUE(window.problem().contains(bad)) << window.problem().toStdString();
    EXPECT_TRUE(window.controls()->initializeButton()->isEnabled());
}

TEST(Window, ProblemsAreShownAndTheWindowStaysUsable) {
    QTemporaryDir dir;
    const QString bad = dir.filePath("bad.pt");
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("not a checkpoint");
    f.close();
    MainWindow window;
    QSignalSpy failed(window.controller(), &TrainingController::failed);
    window.controller()->loadCheckpoint(bad);
    ASSERT_TRUE(waitFor([&] { return failed.count() == 1; }));
    EXPECT_TRUE(window.problem().contains(bad)) << window.problem().toStdString();
    EXPECT_TRUE(window.controls()->initializeButton()->isEnabled());
    window.openRunFolder(dir.filePath("nothing-here"));
    EXPECT_TRUE(window.problem().contains("Cannot open the run folder"));
}

TEST(Window, StopRightAfterTrainIsNotLost) {
    MainWindow window;
    window.form()->setSpec(tinySpec(100000));
    QSignalSpy finished(window.controller(), &TrainingController::finished);
    window.startTraining();
    window.controller()->stop();  // while the worker is still building the model
    ASSERT_TRUE(waitFor([&] { return finished.count() == 1; }, 30000));
    EXPECT_LT(window.controller()->modelStep(), 100);
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Ready);
}

TEST(Window, StartsWithTheModelInitializedAndAHint) {
    MainWindow window;
    window.form()->setSpec(tinySpec());
    QSignalSpy ready(window.controller(), &TrainingController::ready);
    window.startUp();
    ASSERT_TRUE(waitFor([&] { return ready.count() == 1; }));
    settle(window);
    EXPECT_EQ(window.history().size(), 1u);
    EXPECT_EQ(window.heatmaps()->heatmaps().size(), 3u);
    EXPECT_TRUE(window.statusBar()->currentMessage().contains("Press Train"))
        << window.statusBar()->currentMessage().toStdString();
}

TEST(Window, SavingACheckpointDuringARunActsAtTheNextStep) {
    MainWindow window;
    window.form()->setSpec(endlessSpec());
    window.startTraining();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty(); }));
    ASSERT_EQ(window.controller()->state(), TrainingController::State::Training);
    QTemporaryDir dir;
    const QString path = dir.filePath("during.pt");
    window.controller()->saveCheckpoint(path);
    ASSERT_TRUE(waitFor([&] { return QFile::exists(path); }));
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Training);  // still on
    window.controller()->stop();
    ASSERT_TRUE(waitFor(
        [&] { return window.controller()->state() != TrainingController::State::Training; }));
    EXPECT_NO_THROW(Trainer::resume(path.toStdString()));
}

// A reset closes the run's channel: the old run stops and whatever it still sends (its last
// snapshot, its finished message) is dropped; the thread's end frees the controller.
TEST(Window, ResetDuringARunDropsWhatTheOldRunStillSends) {
    MainWindow window;
    window.form()->setSpec(endlessSpec());
    window.startTraining();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty(); }));
    QSignalSpy snapshots(window.controller(), &TrainingController::snapshot);
    QSignalSpy finished(window.controller(), &TrainingController::finished);
    window.controller()->reset();
    ASSERT_TRUE(
        waitFor([&] { return window.controller()->state() == TrainingController::State::Empty; }));
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
    EXPECT_EQ(snapshots.count(), 0);
    EXPECT_EQ(finished.count(), 0);
    // the next model gets a channel of its own
    QSignalSpy ready(window.controller(), &TrainingController::ready);
    window.form()->setSpec(tinySpec());
    window.initializeModel();
    ASSERT_TRUE(waitFor([&] { return ready.count() == 1; }));
    EXPECT_GE(snapshots.count(), 1);
}

TEST(Window, AutomationOptionsUseTheFlagParser) {
    MainWindow window;
    Automation bad(window);
    EXPECT_FALSE(bad.configure({"nopescope", "--steps", "x"}));
    EXPECT_FALSE(bad.configure({"nopescope", "--theme", "pink"}));
    EXPECT_FALSE(bad.helpShown());
    Automation help(window);
    EXPECT_FALSE(help.configure({"nopescope", "--help"}));
    EXPECT_TRUE(help.helpShown());
    Automation plain(window);
    ASSERT_TRUE(plain.configure({"nopescope", "--theme=dark"}));
    EXPECT_FALSE(plain.drivesTheWindow());
    Automation scripted(window);
    ASSERT_TRUE(
        scripted.configure({"nopescope", "--measure", "--task", "reversal", "--steps", "30"}));
    EXPECT_TRUE(scripted.drivesTheWindow());
}

TEST(Window, ClosingWhileTrainingStopsTheRunQuickly) {
    MainWindow window;
    window.form()->setSpec(endlessSpec());
    window.show();
    window.startTraining();
    ASSERT_TRUE(waitFor([&] { return !window.history().empty(); }));  // the run is under way
    EXPECT_EQ(window.controller()->state(), TrainingController::State::Training);
    EXPECT_TRUE(window.runFolder().startsWith(qEnvironmentVariable("NOPESCOPE_RUNS")))
        << window.runFolder().toStdString();
    window.setForcedExitAllowed(false);  // the real close, not the emergency exit
    window.close();  // returns once the worker stopped: after the step in flight, not the run
    EXPECT_NE(window.controller()->state(), TrainingController::State::Training);
    EXPECT_FALSE(window.isVisible());

    // the worker is gone with its thread: a command after the close does nothing
    const TrainingController::State closed = window.controller()->state();
    window.initializeModel();
    window.startTraining();
    window.controller()->runProbes(ProbeConfig{});
    EXPECT_FALSE(window.controller()->analyzePrompts({"12+34="}));
    EXPECT_EQ(window.controller()->state(), closed);
}

}  // namespace
}  // namespace nope

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    // Runs started by the window go to a temporary folder, never into ./runs; it goes at the end.
    // (Tests never remove a run folder themselves: an empty path would be the working folder.)
    QTemporaryDir runs;
    qputenv("NOPESCOPE_RUNS", runs.path().toUtf8());
    nope::gui::registerMetaTypes();
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
