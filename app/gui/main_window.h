// The NoPEScope window: the run form on the left, the heatmap grid in the middle, curves and the
// score table on the right, the controls, the progress and the step slider below. It keeps the
// history of snapshots and redraws on a short timer, never once per incoming snapshot.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>

#include <QTimer>
#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <vector>

#include "gui/subject.h"
#include "gui/training_controller.h"
#include "run/snapshot.h"
#include "run/snapshot_history.h"
#include "widgets/export.h"

class QActionGroup;
class QCheckBox;
class QMenu;
class QComboBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QSplitter;
class QSlider;
class QTabWidget;

namespace nope::ui {
class ConfigForm;
class CurvePanel;
class HeatmapGrid;
class AttentionTab;
class ProjectorTab;
class ExploreTab;
class CompareTab;
class MechanismTab;
class ProbeTab;
class SweepTab;
class RunControls;
class ScoreTable;
}  // namespace nope::ui

namespace nope {
class SnapshotFollower;
}

namespace nope::gui {

class AblationJob;
class MechanismModel;
class RunCostEstimate;
class ExportMenu;
class SweepRunner;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The panels and controls, for tests and automation.
    ui::ConfigForm* form() const { return m_form; }
    ui::HeatmapGrid* heatmaps() const { return m_heatmaps; }
    ui::AttentionTab* attention() const { return m_attention; }
    ui::ProjectorTab* projector() const { return m_projector; }
    ui::ExploreTab* explore() const { return m_explore; }
    // File > Save session: the form's session plus the Explore tab's prompts tried; and those
    // prompts read back from a session (the problem, naming the entry, or empty).
    QByteArray sessionJson() const;
    QString loadTriedPrompts(const nlohmann::json& session);
    ui::CurvePanel* curves() const { return m_curves; }
    ui::ScoreTable* scores() const { return m_scores; }
    ui::ProbeTab* probes() const { return m_probes; }
    ui::CompareTab* compare() const { return m_compare; }
    ui::SweepTab* sweep() const { return m_sweep; }
    ui::MechanismTab* mechanism() const { return m_mechanism; }
    SweepRunner* sweepRunner() const { return m_sweepRunner; }
    AblationJob* ablationJob() const { return m_ablationJob; }
    // Heatmaps, Attention, Projector, Explore, Probes, Compare, Sweep, Mechanism (each but the
    // first inside a scroll area: showView and currentView speak of the views themselves)
    QTabWidget* viewTabs() const { return m_views; }
    void showView(QWidget* view);
    QWidget* currentView() const;
    // Whether the curves are in a row under the views: the window is narrower than the form,
    // every tab of the views and a column of curves side by side (wideWidth()).
    bool narrow() const { return m_narrow; }
    int wideWidth() const;
    // The window's size, its splitters, the last task and preset and the theme, from the user's
    // settings (QSettings) and kept when the window closes; only the application calls it, so
    // that tests start from the defaults and leave the user's settings alone.
    void restoreSettings();
    TrainingController* controller() const { return m_controller; }
    ui::RunControls* controls() const { return m_controls; }
    QSlider* stepSlider() const { return m_slider; }
    const std::vector<Snapshot>& history() const { return m_history.all(); }
    QString problem() const;  // the message shown in the problem banner, empty when none
    int redrawCount() const { return m_redraws; }
    // Whether a redraw is scheduled and not yet done (tests wait for it instead of sleeping).
    bool redrawPending() const { return m_redrawTimer.isActive(); }
    QString runFolder() const { return m_runFolder; }
    // What the window shows (gui/subject.h), and the line above the views that names it.
    const Subject& subject() const { return m_subject; }
    QString subjectText() const;
    RunCostEstimate* costEstimate() const { return m_costEstimate; }
    // The step of the snapshot on screen; -1 when none is.
    int shownStep() const;
    // Closing during a step that outlasts 1.5 s ends the process at once (the default); tests
    // turn that off to see how long a close really takes.
    void setForcedExitAllowed(bool allowed) { m_forcedExitAllowed = allowed; }

    // Writes every figure, table and the config into `dir`; returns the problems, if any.
    QStringList exportAll(const QString& dir, double scale);
    // Opens a run folder and follows it: snapshots that its writer (a training process, rank 0
    // of a distributed run) adds later appear as they are written, until another model or run
    // replaces it (window_follow.cpp).
    void openRunFolder(const QString& dir);
    bool following() const { return m_follower != nullptr; }
    static constexpr int kFollowIntervalMs = 2000;
    // Loads any saved model (checkpoint, weights.pt, run folder, nanoGPT ckpt.pt) for analysis
    // and probes, on the task the file names (else the form's).
    void openModel(const QString& path);
    // Loads a checkpoint to continue its run (Continue then trains it into a new run folder);
    // the history shows its run folder's snapshots up to its step.
    void resumeFromCheckpoint(const QString& path);
    // Reads a session file into the form and the Explore tab's prompts, then initializes the
    // session's model; the problem (naming the file) or empty. Refused while a run goes on.
    QString loadSession(const QString& path);

public Q_SLOTS:
    // The first thing a new window does for a user: initializes the form's model (under a
    // second for the default preset) and then shows a hint of what to do next.
    void startUp();
    void runProbes();

    void initializeModel();
    void startTraining();
    void stopTraining();
    void resetModel();

protected:
    void closeEvent(QCloseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void buildLayout();  // window_layout.cpp
    static QScrollArea* scrolled(QWidget* view);
    // window_settings.cpp: the first size (within the screen), the arrangement by width, and the
    // settings kept between sessions.
    QSize defaultSize() const;
    QSize available() const;  // the screen's room for the window, its frame left out
    void arrange(bool narrow);
    void saveSettings();
    int tabsWidth() const;
    void fitTabs();
    // The splitter's sizes as the user left them in this arrangement; false when none are kept.
    bool restoredSplitter(const char* which, bool narrow);
    static constexpr int kCurvesWidth = 280;  // the curves' column, at its narrowest
    QWidget* leftColumn();
    QWidget* centerColumn();
    void connectViews();
    void connectControls();
    void connectController();
    void connectMechanism();
    void connectExplore();
    bool runGoing() const;  // a training run is going on (training or paused)
    // True, with a message naming `action`, while a run goes on (actions that replace the model).
    bool refusedDuringRun(const QString& action);
    void buildMenus();  // window_menus.cpp
    void addOpenActions(QMenu* file);
    void addSessionActions(QMenu* file);
    void addCheckpointActions(QMenu* file);
    void addRunActions(QMenu* run);
    void showHelp();
    ui::ExportSet exportSet();
    // Before a new model: false (with the problems shown) when the form is invalid, else clears
    // the banner, the run folder and the history.
    bool startFresh();
    void connectParts();
    void addSnapshot(const Snapshot& snapshot);
    void addEvaluation(const Snapshot& progress);  // a test evaluation between snapshots
    // The opened run folder's evaluations (evaluations.csv) into the curves; true when new.
    bool readFollowedEvaluations();
    void followRun();  // one look for new snapshot files of the opened run folder
    void stopFollowing();
    void showDamagedSnapshots(const std::vector<std::string>& damaged);
    void resetHistory(std::vector<Snapshot> history);
    void scheduleRedraw();
    void redraw();
    void updateControls();
    void updateViewChoices();
    void showProblem(const QString& message);
    void styleBanner();
    void report(const QString& error, const QString& done);
    const Snapshot* current() const;
    void addProbes(const ProbeReport& report, int step);
    // window_subject.cpp: another model or run is shown (every view starts over), and the
    // changes of the one shown (its step, its phase, the form beside it).
    void beginSubject(Subject subject);
    void showSubject();
    bool formDiffers() const;
    void onModelReady(const ModelReady& model);
    void onRunFinished(const QString& message, bool ok, bool stopped);
    void onStateChanged(TrainingController::State state);
    void onFormChanged();
    // The form's estimate of the run's wall time (gui/run_cost_estimate.h), shown from an hour.
    void estimateCost();
    void onCostEstimated(const QString& key, double seconds, const QString& text);
    void onTick(const Snapshot& progress);
    void updateExploreModel();
    void applyEmptyTexts();
    // The run folder of a checkpoint, read for the history before its step; empty when none.
    std::vector<Snapshot> snapshotsBefore(const QString& checkpoint, int step);
    // The probes to compare: at init, and the latest at or before the shown snapshot.

    ui::ConfigForm* m_form;
    ui::HeatmapGrid* m_heatmaps;
    ui::AttentionTab* m_attention;
    ui::ProjectorTab* m_projector;
    ui::ExploreTab* m_explore;
    ui::CurvePanel* m_curves;
    ui::ScoreTable* m_scores;
    ui::ProbeTab* m_probes;
    ui::CompareTab* m_compare;
    ui::SweepTab* m_sweep;
    ui::MechanismTab* m_mechanism;
    SweepRunner* m_sweepRunner;
    AblationJob* m_ablationJob;
    std::unique_ptr<MechanismModel> m_mechanismModel;
    QTabWidget* m_views;
    QSplitter* m_mainSplit = nullptr;    // form | views | curves (the curves under the views
    QSplitter* m_centerSplit = nullptr;  // views / score table   when the window is narrow)
    bool m_narrow = false;
    bool m_persist = false;  // restoreSettings() was called: closing saves them
    QActionGroup* m_themes = nullptr;
    ui::RunControls* m_controls;
    TrainingController* m_controller;
    ExportMenu* m_exportMenu = nullptr;
    QLabel* m_subjectLine;  // names m_subject above the views
    QLabel* m_banner;
    QSlider* m_slider;
    QLabel* m_sliderText;
    QComboBox* m_view;
    QCheckBox* m_fixedRange;
    QTimer m_redrawTimer;
    QElapsedTimer m_sinceRedraw;  // since the last redraw
    static constexpr qint64 kRedrawIntervalMs = 100;
    SnapshotHistory m_history;
    // Probes run on demand at a step that has no snapshot (e.g. while paused); -1 when none.
    bool m_followLatest = true;
    bool m_firstRun = false;  // the start-up Initialize: its status line is the hint
    int m_redraws = 0;
    QString m_runFolder;
    QString m_followed;  // the run folder followed, when m_follower is set
    std::unique_ptr<SnapshotFollower> m_follower;
    QTimer m_followTimer;
    bool m_forcedExitAllowed = true;
    Subject m_subject;
    QString m_ablationsFor;  // the form's model the ablations in flight or shown ran on
    QString m_sweepTask;     // the form's task the Sweep tab was last given
    QTimer m_reinitTimer;    // a changed task re-initializes the model at init after a pause
    RunCostEstimate* m_costEstimate;
};

}  // namespace nope::gui
