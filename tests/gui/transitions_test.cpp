// Every transition of what the window shows, table-driven: from each subject (nothing, the model
// at init, a run training, paused, finished or stopped, an opened run folder, an opened model
// file, a checkpoint loaded to resume) through each action (Initialize, Train, a new task,
// Reset, Open run folder, Open model, Load session, Stop, Resume from checkpoint) to the subject
// the action leads to. After each, every view is checked against that subject, from sources of
// its own: the history against the run folder's files or a model analysed here, the heatmaps,
// attention, projector, curves, score table, progress line, Explore and the files Export all
// writes against the snapshot shown. A view that shows another step or another model fails it.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "gui/main_window.h"
#include "gui/training_controller.h"
#include "gui_fixture.h"
#include "run/run_folder.h"
#include "run/saved_model.h"
#include "training/run_recorder.h"
#include "training/trainer.h"
#include "widgets/attention_tab.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/explore_tab.h"
#include "widgets/export.h"
#include "widgets/heatmap_grid.h"
#include "widgets/probe_panel.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/qcp.h"
#include "widgets/run_controls.h"
#include "widgets/score_table.h"

namespace nope::gui {
namespace {

using gui_test::tinySpec;
using gui_test::waitFor;
using State = TrainingController::State;

enum class Start {
    Nothing,
    Initialized,
    Training,
    Paused,
    Finished,
    Stopped,
    Probing,  // a finished run, its probes running on demand (the worker busy)
    OpenedRun,
    ModelFile,
    Checkpoint
};
enum class Action {
    Initialize,
    Train,
    NewTask,
    Reset,
    OpenRun,
    OpenModel,
    OpenBadModel,
    LoadSession,
    Stop,
    Resume,
    ResumeBadCheckpoint
};

const char* nameOf(Start s) {
    const char* names[] = {"nothing", "initialized", "training",   "paused",     "finished",
                           "stopped", "probing",     "opened run", "model file", "checkpoint"};
    return names[static_cast<int>(s)];
}

const char* nameOf(Action a) {
    const char* names[] = {"Initialize",
                           "Train",
                           "new task",
                           "Reset",
                           "Open run folder",
                           "Open model",
                           "Open a damaged model",
                           "Load session",
                           "Stop",
                           "Resume from checkpoint",
                           "Resume from a damaged checkpoint"};
    return names[static_cast<int>(a)];
}

// A run that goes on for as long as a test looks at it, a snapshot at step 0 only.
RunSpec endlessSpec() {
    RunSpec spec = tinySpec();
    spec.train.steps = spec.train.decaySteps = 100000;
    spec.train.evalEvery = spec.train.snapshotEvery = 100000;
    return spec;
}

// What the files of the fixture are: a finished 20-step run of tinySpec (snapshots at 0, 5, 10,
// 15, 20; its checkpoint at 20) and a session of the same settings on the reversal task.
struct Fixture {
    QTemporaryDir dir;
    QString run;         // the run folder
    QString checkpoint;  // its checkpoint.pt (step 20)
    QString session;     // session.json: tinySpec on reversal
    QString damaged;     // damaged.pt: not a model
};

Fixture& fixture() {
    static Fixture* made = [] {
        auto* f = new Fixture;
        const RunSpec spec = tinySpec();
        f->run = f->dir.filePath("fixture-run");
        Trainer trainer(spec.task, spec.model, spec.train);
        nlohmann::json config = trainer.configJson();
        config["preset"] = spec.preset;
        RunRecorder recorder(trainer, f->run.toStdString(), config, /*continuing=*/false);
        recorder.finish(trainer.run(recorder.wrap({})));
        f->checkpoint = f->run + "/" + RunFiles::kCheckpoint;
        RunSpec reversal = tinySpec();
        reversal.task = TaskKind::Reversal;
        ui::ConfigForm form;
        form.setSpec(reversal);
        f->session = f->dir.filePath("session.json");
        QFile file(f->session);
        file.open(QIODevice::WriteOnly);
        file.write(form.sessionJson());
        f->damaged = f->dir.filePath("damaged.pt");
        QFile damaged(f->damaged);
        damaged.open(QIODevice::WriteOnly);
        damaged.write("PK\x03\x04 not a model at all");
        return f;
    }();
    return *made;
}

// The analysis of a model built here from `spec` (at init), or of the fixture's checkpoint.
const Analysis& analysisAtInit(const RunSpec& spec) {
    static std::map<std::string, Analysis> cache;
    const std::string key = specKey(spec);
    if (!cache.count(key)) {
        Trainer t(spec.task, spec.model, spec.train);
        cache[key] = t.analyze();
    }
    return cache[key];
}

const Analysis& analysisOfCheckpoint() {
    static const Analysis made = [] {
        SavedModel saved = loadSavedModel(fixture().checkpoint.toStdString());
        RunSpec spec = tinySpec();
        spec.model = saved.config;
        Trainer t(spec.task, spec.model, spec.train);
        t.copyWeightsFrom(*saved.model);
        return t.analyze();
    }();
    return made;
}

std::vector<Snapshot> folderSnapshots(const QString& dir) {
    std::vector<std::string> damaged;
    return SnapshotFollower(dir.toStdString()).poll(damaged);
}

std::vector<int> stepsOf(const std::vector<Snapshot>& snapshots) {
    std::vector<int> steps;
    for (const Snapshot& s : snapshots) {
        steps.push_back(s.step);
    }
    return steps;
}

// What the subject's history must hold, from a source of its own.
// The fixture's checkpoint as the window loads it: its run's snapshots before its step, then its
// own analysis at step 20.
std::vector<Snapshot> checkpointHistory() {
    std::vector<Snapshot> before;
    for (Snapshot& snap : folderSnapshots(fixture().run)) {
        if (snap.step < 20) {
            before.push_back(std::move(snap));
        }
    }
    Snapshot last;
    last.step = 20;
    last.analysis = analysisOfCheckpoint();
    before.push_back(last);
    return before;
}

std::vector<Snapshot> truthOf(const Subject& s, const RunSpec& initSpec) {
    switch (s.origin) {
        case SubjectOrigin::Trained: {
            if (s.source.isEmpty()) {
                return folderSnapshots(s.path);
            }
            std::vector<Snapshot> all = checkpointHistory();  // then what the new folder adds
            for (Snapshot& snap : folderSnapshots(s.path)) {
                all.push_back(std::move(snap));
            }
            return all;
        }
        case SubjectOrigin::OpenedRun:
            return folderSnapshots(s.path);
        case SubjectOrigin::Checkpoint:
            return checkpointHistory();
        case SubjectOrigin::Initialized: {
            Snapshot init;
            init.analysis = analysisAtInit(initSpec);
            return {init};
        }
        case SubjectOrigin::ModelFile: {
            Snapshot model;
            model.step = 20;
            model.analysis = analysisOfCheckpoint();
            return {model};
        }
        case SubjectOrigin::None:
            break;
    }
    return {};
}

QStringList scoreLabels(const ui::ScoreTable* table) {
    QStringList labels;
    for (int r = 0; r < table->rowCount(); ++r) {
        labels << table->verticalHeaderItem(r)->text();
    }
    return labels;
}

QString readText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

struct Expected {
    SubjectOrigin origin = SubjectOrigin::None;
    std::optional<SubjectPhase> phase;  // none: any (a run may have ended meanwhile)
    TaskKind task = TaskKind::Addition;
    int step = -1;         // the newest step; -1: any
    bool refused = false;  // the action was refused with a message
};

// Longer than 60 lines for a reason: one check per view, in the order a user reads the window.
void checkEveryView(MainWindow& w, const Expected& e, const RunSpec& initSpec) {
    const Subject& s = w.subject();
    ASSERT_EQ(s.origin, e.origin) << w.subjectText().toStdString();
    if (e.phase) {
        EXPECT_EQ(s.phase, *e.phase) << w.subjectText().toStdString();
    }
    if (e.step >= 0) {
        EXPECT_EQ(s.step, e.step) << w.subjectText().toStdString();
    }
    QTemporaryDir out;
    const QStringList problems = w.exportAll(out.path(), 0.5);
    EXPECT_TRUE(problems.isEmpty()) << problems.join("\n").toStdString();
    const QJsonObject manifest =
        QJsonDocument::fromJson(readText(out.filePath("export.json")).toUtf8()).object();
    const QJsonObject exported = manifest["subject"].toObject();
    for (const QString& name : ui::exportFileNames()) {  // only the files it lists are there
        EXPECT_EQ(QFile::exists(out.filePath(name)),
                  manifest["files"].toArray().contains(name) || name == "export.json")
            << name.toStdString();
    }
    const QStringList csv = readText(out.filePath("scores.csv")).trimmed().split('\n');
    if (s.empty()) {
        EXPECT_TRUE(w.history().empty());
        EXPECT_TRUE(w.heatmaps()->heatmaps().empty());
        EXPECT_EQ(w.scores()->rowCount(), 0);
        EXPECT_TRUE(w.controls()->progressText().isEmpty())
            << w.controls()->progressText().toStdString();
        EXPECT_TRUE(w.subjectText().startsWith("No model")) << w.subjectText().toStdString();
        EXPECT_TRUE(w.probes()->panel()->table().rows.isEmpty());
        EXPECT_EQ(exported["origin"].toString(), "none");
        EXPECT_EQ(csv.size(), 1);  // the header alone
        return;
    }
    EXPECT_EQ(s.spec.task, e.task);
    const QString task = QString::fromStdString(taskName(s.spec.task));
    EXPECT_TRUE(w.subjectText().startsWith(task + ",")) << w.subjectText().toStdString();
    EXPECT_TRUE(w.windowTitle().contains(task)) << w.windowTitle().toStdString();

    // the history is the subject's own: its run folder's files, or its model analysed here
    const std::vector<Snapshot> truth = truthOf(s, initSpec);
    ASSERT_EQ(stepsOf(w.history()), stepsOf(truth)) << w.subjectText().toStdString();
    for (size_t k = 0; k < truth.size(); ++k) {
        const LayerScores* want = truth[k].analysis.find(CapturePoint::Attn, 1);
        const LayerScores* got = w.history()[k].analysis.find(CapturePoint::Attn, 1);
        ASSERT_TRUE(want && got);
        EXPECT_NEAR(got->adjacencyMean, want->adjacencyMean, 1e-4) << "step " << truth[k].step;
    }
    // the probes shown are the subject's own: none unless its history holds some
    const bool probed = std::any_of(w.history().begin(), w.history().end(),
                                    [](const Snapshot& snap) { return !snap.probes.empty(); });
    EXPECT_EQ(!w.probes()->panel()->table().rows.isEmpty(), probed);
    if (truth.empty()) {
        EXPECT_TRUE(w.heatmaps()->heatmaps().empty());
        return;
    }
    // the slider follows the newest snapshot; every view shows it
    ASSERT_EQ(w.stepSlider()->value(), static_cast<int>(w.history().size()) - 1);
    const Snapshot& shown = w.history().back();
    EXPECT_EQ(w.shownStep(), shown.step);
    EXPECT_TRUE(w.subjectText().contains(QString("step %1").arg(shown.step)))
        << w.subjectText().toStdString();
    const auto& maps = w.heatmaps()->heatmaps();
    ASSERT_EQ(maps.size(), 3u);
    EXPECT_EQ(maps[1].values, shown.analysis.find(CapturePoint::Attn, 1)->meanMatrix);
    EXPECT_EQ(w.attention()->heatmaps()->heatmaps().front().values,
              shown.analysis.attention.find(1, 0)->meanMatrix);
    const QString stepPrefix = QString("step %1:").arg(shown.step);
    EXPECT_TRUE(w.attention()->summaryText().startsWith(stepPrefix))
        << w.attention()->summaryText().toStdString();
    EXPECT_TRUE(w.projector()->summaryText().startsWith(stepPrefix))
        << w.projector()->summaryText().toStdString();
    // the curves: a point per snapshot, none past the subject's step
    const QCPGraph* layer1 = w.curves()->adjacencyPlot()->graph(1);
    ASSERT_EQ(layer1->dataCount(), static_cast<int>(w.history().size()));
    for (int k = 0; k < layer1->dataCount(); ++k) {
        EXPECT_EQ(layer1->data()->at(k)->key, w.history()[static_cast<size_t>(k)].step);
    }
    const QCPGraph* trainLoss = w.curves()->trainingPlot()->graph(0);
    for (int k = 0; k < trainLoss->dataCount(); ++k) {  // live losses up to the model's step
        EXPECT_LE(trainLoss->data()->at(k)->key, std::max(s.step, s.liveStep));
    }
    // the score table: init (where the history starts there), then the shown step
    const QStringList labels = scoreLabels(w.scores());
    ASSERT_FALSE(labels.isEmpty());
    const QString shownLabel = stageLabel(s, shown.step);
    EXPECT_TRUE(labels.contains(shownLabel)) << labels.join(", ").toStdString();
    if (w.history().front().step == 0 && s.origin != SubjectOrigin::ModelFile) {
        EXPECT_EQ(labels.front(), "init");
    }
    EXPECT_FALSE(labels.contains("init") && s.origin == SubjectOrigin::ModelFile);
    // the progress line: a run's newest step, nothing for a model not trained here
    const QString progress = w.controls()->progressText();
    if (s.origin == SubjectOrigin::Trained || s.origin == SubjectOrigin::OpenedRun ||
        s.origin == SubjectOrigin::Checkpoint) {
        if (s.step > 0) {
            EXPECT_TRUE(progress.startsWith(QString("step %1/").arg(s.step)) ||
                        s.phase == SubjectPhase::Training)
                << progress.toStdString();
        }
    } else {
        EXPECT_TRUE(progress.isEmpty()) << progress.toStdString();
    }
    // the files written: the subject, its settings, the table shown
    EXPECT_EQ(exported["task"].toString(), task);
    EXPECT_EQ(exported["shown_step"].toInt(-1), shown.step);
    EXPECT_EQ(exported["path"].toString(), s.path);
    EXPECT_TRUE(
        readText(out.filePath("config.json")).contains(QString("\"task\": \"%1\"").arg(task)));
    ASSERT_GE(csv.size(), 2);
    const auto cell = [](const QString& text) {  // as the CSV writes it
        return text.contains(',') ? "\"" + text + "\"," : text + ",";
    };
    // the table's rows of scores (a probe summary row, where shown, is written as probes.csv)
    QStringList scored = labels;
    scored.removeIf([](const QString& label) { return label.contains("probe"); });
    ASSERT_FALSE(scored.isEmpty());
    EXPECT_TRUE(csv[1].startsWith(cell(scored.front()))) << csv[1].toStdString();
    EXPECT_TRUE(csv.last().startsWith(cell(scored.last())))
        << csv.last().toStdString() << " | " << labels.join(", ").toStdString();
    EXPECT_EQ(QFileInfo::exists(out.filePath("probes.csv")), probed);
}

// Explore asks the subject's model, and says so; without a model it says why.
void checkExplore(MainWindow& w) {
    const Subject& s = w.subject();
    w.showView(w.explore());
    const bool model = s.origin == SubjectOrigin::Initialized ||
                       s.origin == SubjectOrigin::Trained || s.origin == SubjectOrigin::ModelFile ||
                       s.origin == SubjectOrigin::Checkpoint;
    if (!model) {
        EXPECT_TRUE(waitFor([&] { return w.explore()->timingText().isEmpty(); }, 5000));
        EXPECT_TRUE(w.explore()->heatmaps(0)->heatmaps().empty());
        const QString why = w.explore()->answerText();
        EXPECT_TRUE(s.origin == SubjectOrigin::OpenedRun ? why.contains("run folder")
                                                         : why.contains("no model"))
            << why.toStdString();
        return;
    }
    // a paused run's weights are past its newest snapshot: the subject names their step (the
    // loop says where it paused before it runs the question)
    const auto expected = [&] {
        const int step = s.phase == SubjectPhase::Paused ? s.liveStep : s.step;
        return QString("model at step %1").arg(step);
    };
    if (s.phase == SubjectPhase::Training) {  // the weights move on: at or past the snapshot
        ASSERT_TRUE(
            waitFor([&] { return w.explore()->timingText().startsWith("model at step "); }, 20000))
            << w.explore()->answerText().toStdString();
        const int step = w.explore()->timingText().mid(14).section(';', 0, 0).toInt();
        EXPECT_GE(step, w.history().back().step);
        return;
    }
    const bool told =
        waitFor([&] { return w.explore()->timingText().startsWith(expected()); }, 20000);
    EXPECT_TRUE(told) << w.explore()->timingText().toStdString() << " / "
                      << expected().toStdString();
    if (s.phase == SubjectPhase::Paused) {
        EXPECT_TRUE(w.subjectText().contains(QString("paused at step %1").arg(s.liveStep)) ||
                    s.liveStep == w.shownStep())
            << w.subjectText().toStdString();
    }
}

// Waits until the window has nothing more on its way: no model being built, no redraw due, and
// a run that is meant to end has ended.
void settle(MainWindow& w, bool runEnds) {
    ASSERT_TRUE(waitFor([&] {
        const State st = w.controller()->state();
        const bool ended = !runEnds || (st != State::Training && st != State::Paused);
        return st != State::Busy && ended && w.subject().phase != SubjectPhase::Building &&
               !w.redrawPending();
    }));
}

// Pauses a run going on and waits until the loop says where it waits (its last signal before it
// blocks): nothing changes on screen after that, so that the views can be read.
void pauseAndSettle(MainWindow& w) {
    QSignalSpy ticks(w.controller(), &TrainingController::tick);
    w.controller()->pause();
    ASSERT_TRUE(waitFor([&] { return ticks.count() > 0; }));
    settle(w, false);
}

// Probes of the model shown, on demand, small: they land on its newest snapshot.
void runFastProbes(MainWindow& w) {
    QSignalSpy probes(w.controller(), &TrainingController::probes);
    ProbeConfig config = w.form()->spec().train.probe;
    config.epochs = 1;
    config.trainStrings = 16;
    config.testStrings = 8;
    w.controller()->runProbes(config);
    ASSERT_TRUE(waitFor([&] { return probes.count() == 1; }));
    settle(w, false);
    ASSERT_FALSE(w.history().back().probes.empty());
}

void startRun(MainWindow& w, const RunSpec& spec) {
    w.form()->setSpec(spec);
    w.startTraining();
    ASSERT_TRUE(waitFor([&] { return !w.history().empty(); }));
}

// Brings a fresh window to `start`.
void reach(MainWindow& w, Start start) {
    const Fixture& f = fixture();
    switch (start) {
        case Start::Nothing:
            w.resetModel();
            break;
        case Start::Initialized:
            w.initializeModel();
            settle(w, false);
            break;
        case Start::Training:
            startRun(w, endlessSpec());
            break;
        case Start::Paused:
            startRun(w, endlessSpec());
            w.controller()->pause();
            ASSERT_TRUE(waitFor([&] { return w.subject().phase == SubjectPhase::Paused; }));
            ASSERT_TRUE(waitFor([&] { return w.subject().liveStep >= 0; }));  // a tick came
            break;
        case Start::Finished:
            startRun(w, tinySpec());
            settle(w, true);
            runFastProbes(w);  // they belong to this run's step 20: they must go with it
            break;
        case Start::Stopped: {
            RunSpec spec = endlessSpec();
            spec.train.snapshotEvery = 7;  // a stop mostly falls between snapshots
            startRun(w, spec);
            ASSERT_TRUE(waitFor([&] { return w.history().size() >= 2; }));
            w.stopTraining();
            settle(w, true);
            break;
        }
        case Start::Probing: {
            startRun(w, tinySpec());
            settle(w, true);
            ProbeConfig config = w.form()->spec().train.probe;
            config.epochs = 100000;  // still running when the action comes
            w.controller()->runProbes(config);
            ASSERT_TRUE(waitFor([&] { return w.controller()->state() == State::Busy; }));
            break;
        }
        case Start::OpenedRun:
            w.openRunFolder(f.run);
            settle(w, false);
            break;
        case Start::ModelFile:
            w.openModel(f.checkpoint);
            settle(w, false);
            runFastProbes(w);
            break;
        case Start::Checkpoint:
            w.resumeFromCheckpoint(f.checkpoint);
            settle(w, false);
            break;
    }
}

bool runs(Start s) {
    return s == Start::Training || s == Start::Paused;
}

// The subject a start and an action lead to.
// Longer than 60 lines for a reason: the table of transitions, one case per action.
Expected expectedAfter(Start start, Action action, const Subject& before) {
    Expected same{before.origin, before.phase, before.spec.task, before.step, false};
    const TaskKind task = before.empty() ? TaskKind::Addition : before.spec.task;
    const Expected nothingAndWhy{SubjectOrigin::None, std::nullopt, TaskKind::Addition, -1, true};
    switch (action) {
        case Action::Reset:
            return {};
        case Action::Stop:
            if (runs(start)) {
                return {SubjectOrigin::Trained, SubjectPhase::Stopped, task, -1, false};
            }
            return same;  // nothing to stop (a probe set ends, the model stays)
        default:
            break;
    }
    if (runs(start)) {
        same.phase.reset();
        same.step = -1;
        // the form is locked and Train pressed does nothing during a run; the rest say why not
        same.refused = action != Action::NewTask && action != Action::Train;
        return same;
    }
    switch (action) {
        case Action::Initialize:
            return {SubjectOrigin::Initialized, SubjectPhase::Idle, task, 0, false};
        case Action::Train:
            if (start == Start::ModelFile) {
                same.refused = true;
                return same;
            }
            if (start == Start::Probing) {
                return same;  // the button is off while the model is busy
            }
            if (start == Start::Stopped) {  // Continue: on and on, paused by the test to look
                return {SubjectOrigin::Trained, SubjectPhase::Paused, task, -1, false};
            }
            return {SubjectOrigin::Trained, SubjectPhase::Finished, task, 20, false};
        case Action::NewTask:
            if (start == Start::Initialized) {
                return {SubjectOrigin::Initialized, SubjectPhase::Idle, TaskKind::Reversal, 0};
            }
            return same;  // a locked form, or a subject the form does not make
        case Action::OpenRun:
            return {SubjectOrigin::OpenedRun, SubjectPhase::Idle, TaskKind::Addition, 20};
        case Action::OpenModel:
            return {SubjectOrigin::ModelFile, SubjectPhase::Idle, TaskKind::Addition, 20};
        case Action::LoadSession:
            return {SubjectOrigin::Initialized, SubjectPhase::Idle, TaskKind::Reversal, 0};
        case Action::Resume:
            return {SubjectOrigin::Checkpoint, SubjectPhase::Idle, TaskKind::Addition, 20};
        case Action::OpenBadModel:
        case Action::ResumeBadCheckpoint:
            return nothingAndWhy;  // the old model was let go; the banner names the file
        default:
            return same;
    }
}

void act(MainWindow& w, Action action) {
    const Fixture& f = fixture();
    switch (action) {
        case Action::Initialize:
            w.initializeModel();
            break;
        case Action::Train:
            w.startTraining();
            break;
        case Action::NewTask: {
            QComboBox* task = w.form()->taskChoice();
            if (task->isEnabled() && w.form()->isEnabled()) {
                task->setCurrentText("reversal");
            }
            break;
        }
        case Action::Reset:
            w.resetModel();
            break;
        case Action::OpenRun:
            w.openRunFolder(f.run);
            break;
        case Action::OpenModel:
            w.openModel(f.checkpoint);
            break;
        case Action::LoadSession:
            w.loadSession(f.session);
            break;
        case Action::Stop:
            w.stopTraining();
            break;
        case Action::Resume:
            w.resumeFromCheckpoint(f.checkpoint);
            break;
        case Action::OpenBadModel:
            w.openModel(f.damaged);
            break;
        case Action::ResumeBadCheckpoint:
            w.resumeFromCheckpoint(f.damaged);
            break;
    }
}

void runTransitions(Start start) {
    for (int a = 0; a <= static_cast<int>(Action::ResumeBadCheckpoint); ++a) {
        const Action action = static_cast<Action>(a);
        SCOPED_TRACE(std::string(nameOf(start)) + " -> " + nameOf(action));
        MainWindow w;
        w.form()->setSpec(tinySpec());
        w.explore()->promptField()->setText("12+34=");
        reach(w, start);
        const RunSpec initSpec = w.form()->spec();
        const Subject before = w.subject();
        const Expected expected = expectedAfter(start, action, before);
        act(w, action);
        if (action == Action::NewTask && expected.task == TaskKind::Reversal) {
            ASSERT_TRUE(waitFor([&] { return w.subject().spec.task == TaskKind::Reversal; }));
        }
        if (start == Start::Probing && (action == Action::Train || action == Action::NewTask)) {
            w.stopTraining();  // the probes still running end, without a result
        }
        const bool continued = start == Start::Stopped && action == Action::Train;
        if (continued) {
            ASSERT_TRUE(waitFor([&] { return w.subject().phase == SubjectPhase::Training; }));
            pauseAndSettle(w);
        }
        const bool keepsRunning =
            continued || (runs(start) && action != Action::Stop && action != Action::Reset);
        settle(w, !keepsRunning);
        if (expected.refused) {
            EXPECT_FALSE(w.problem().isEmpty()) << "refused without a word";
        }
        RunSpec truthSpec = action == Action::LoadSession || action == Action::NewTask
                                ? w.form()->spec()
                                : initSpec;
        checkEveryView(w, expected, truthSpec);
        checkExplore(w);
        if (keepsRunning) {
            w.stopTraining();
            settle(w, true);
        }
    }
}

// One test per starting subject, each through every action (ctest runs them side by side).
class Transitions : public ::testing::TestWithParam<Start> {};

TEST_P(Transitions, EveryActionLeadsToTheSubjectEveryViewShows) {
    runTransitions(GetParam());
}

INSTANTIATE_TEST_SUITE_P(From, Transitions,
                         ::testing::Values(Start::Nothing, Start::Initialized, Start::Training,
                                           Start::Paused, Start::Finished, Start::Stopped,
                                           Start::Probing, Start::OpenedRun, Start::ModelFile,
                                           Start::Checkpoint),
                         [](const ::testing::TestParamInfo<Start>& info) {
                             std::string name = nameOf(info.param);
                             name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
                             return name;
                         });

}  // namespace
}  // namespace nope::gui
