// The window's parts laid out (form and controls on the left, the views and the score table in
// the middle, the curves on the right, the step slider below) and wired together. Part of
// MainWindow, in a file of its own.
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include <iterator>

#include "gui/ablation_job.h"
#include "gui/main_window.h"
#include "gui/mechanism_model.h"
#include "gui/sweep_runner.h"
#include "run/run_folder.h"
#include "util/error_text.h"
#include "widgets/ablation_panel.h"
#include "widgets/attention_tab.h"
#include "widgets/compare_tab.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/explore_tab.h"
#include "widgets/heatmap_grid.h"
#include "widgets/mechanism_tab.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/run_browser.h"
#include "widgets/run_controls.h"
#include "widgets/score_table.h"

namespace nope::gui {

void MainWindow::buildLayout() {
    m_mainSplit = new QSplitter(Qt::Horizontal);
    m_mainSplit->addWidget(leftColumn());
    m_mainSplit->addWidget(centerColumn());
    m_mainSplit->addWidget(m_curves);
    m_mainSplit->setStretchFactor(0, 0);
    m_mainSplit->setStretchFactor(1, 3);
    m_mainSplit->setStretchFactor(2, 2);
    m_mainSplit->setSizes({330, 760, 480});
    m_mainSplit->setChildrenCollapsible(false);
    m_curves->setMinimumWidth(kCurvesWidth);

    m_slider->setRange(0, 0);
    m_slider->setToolTip("scrub through the snapshots; at the right end it follows new ones");
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(new QLabel("snapshot"));
    bottom->addWidget(m_slider, 1);
    bottom->addWidget(m_sliderText);

    auto* root = new QWidget;
    auto* rootLayout = new QVBoxLayout(root);
    rootLayout->addWidget(m_mainSplit, 1);
    rootLayout->addLayout(bottom);
    setCentralWidget(root);
}

QWidget* MainWindow::leftColumn() {
    auto* formScroll = new QScrollArea;
    formScroll->setWidget(m_form);
    formScroll->setWidgetResizable(true);
    formScroll->setMinimumWidth(270);
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(formScroll, 1);
    leftLayout->addWidget(m_controls);

    return left;
}

// The views (heatmaps, probes) under the problem banner, above the score table.
QWidget* MainWindow::centerColumn() {
    m_banner->setWordWrap(true);
    styleBanner();
    m_banner->hide();
    m_subjectLine->setObjectName("subjectLine");
    m_subjectLine->setWordWrap(true);
    m_subjectLine->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = m_subjectLine->font();
    bold.setBold(true);
    m_subjectLine->setFont(bold);
    m_view->setToolTip("the mean matrix over the analysed prompts, or one prompt's own matrix");
    auto* viewRow = new QHBoxLayout;
    viewRow->addWidget(new QLabel("show"));
    viewRow->addWidget(m_view, 1);
    viewRow->addWidget(m_fixedRange);
    auto* maps = new QWidget;
    auto* mapsLayout = new QVBoxLayout(maps);
    mapsLayout->setContentsMargins(0, 0, 0, 0);
    mapsLayout->addLayout(viewRow);
    mapsLayout->addWidget(m_heatmaps, 1);
    // Each view but the heatmaps scrolls inside its tab rather than raise the window's minimum
    // size past a small screen (a tab widget is as large as its largest page).
    m_views->addTab(maps, "Heatmaps");
    m_views->addTab(scrolled(m_attention), "Attention");
    m_views->addTab(scrolled(m_projector), "Projector");
    m_views->addTab(scrolled(m_explore), "Explore");
    m_views->addTab(scrolled(m_probes), "Probes");
    m_views->addTab(scrolled(m_compare), "Compare");
    m_views->addTab(scrolled(m_sweep), "Sweep");
    m_views->addTab(scrolled(m_mechanism), "Mechanism");
    // What each tab shows, on hover (the user guide, F1, has each at length).
    const char* const tips[] = {
        "each layer's self-cosine similarity of the hidden states, titled with its adjacency "
        "score",
        "each head's attention weights on one prompt",
        "the hidden states projected to two dimensions, coloured by position",
        "a prompt you type: the model's answer and its hidden states",
        "how well position can be read from each layer (R and NRMSE, beside controls)",
        "run folders on disk: their curves and scores, and two side by side",
        "a grid of settings times seeds: scores with their 95% intervals",
        "the averaging effect without a model, and the authors' ablations at init"};
    for (int i = 0; i < m_views->count() && i < static_cast<int>(std::size(tips)); ++i) {
        m_views->setTabToolTip(i, tips[i]);
    }
    auto* views = new QWidget;  // the problem banner above whichever view is shown
    auto* viewsLayout = new QVBoxLayout(views);
    viewsLayout->setContentsMargins(0, 0, 0, 0);
    viewsLayout->addWidget(m_subjectLine);
    viewsLayout->addWidget(m_banner);
    viewsLayout->addWidget(m_views, 1);
    m_centerSplit = new QSplitter(Qt::Vertical);
    m_centerSplit->addWidget(views);
    m_centerSplit->addWidget(m_scores);
    m_centerSplit->setStretchFactor(0, 5);
    m_centerSplit->setStretchFactor(1, 1);
    m_centerSplit->setChildrenCollapsible(false);
    return m_centerSplit;
}

void MainWindow::connectParts() {
    connectViews();
    connectControls();
    connectController();
    connectMechanism();
    connectExplore();
}

void MainWindow::connectViews() {
    connect(&m_redrawTimer, &QTimer::timeout, this, &MainWindow::redraw);
    connect(m_form, &ui::ConfigForm::validityChanged, this, &MainWindow::updateControls);
    connect(m_form, &ui::ConfigForm::changed, this, &MainWindow::onFormChanged);
    connect(m_form, &ui::ConfigForm::capturePointChanged, this, &MainWindow::scheduleRedraw);
    connect(m_view, &QComboBox::currentIndexChanged, this, &MainWindow::scheduleRedraw);
    connect(m_attention, &ui::AttentionTab::choiceChanged, this, &MainWindow::scheduleRedraw);
    connect(m_projector, &ui::ProjectorTab::choiceChanged, this, &MainWindow::scheduleRedraw);
    connect(m_fixedRange, &QCheckBox::toggled, m_heatmaps, &ui::HeatmapGrid::setFixedRange);
    connect(m_slider, &QSlider::valueChanged, this, [this](int value) {
        m_followLatest = value == m_slider->maximum();
        updateViewChoices();
        scheduleRedraw();
    });
    // The Compare tab lists the runs when it is first shown, and again each time (new runs).
    connect(m_views, &QTabWidget::currentChanged, this, [this] {
        QWidget* view = currentView();
        if (view == m_explore) {
            m_explore->refresh();  // the model may have moved on while the tab was hidden
        }
        if (view == m_mechanism && m_mechanism->heatmaps()->heatmaps().empty()) {
            Q_EMIT m_mechanism->simulateRequested(m_mechanism->config());  // its first look
        }
        if (view != m_compare) {
            return;
        }
        ui::RunBrowser* browser = m_compare->browser();
        browser->root().isEmpty() ? browser->setRoot(QString::fromStdString(runsRoot().string()))
                                  : browser->refresh();
    });
    connect(m_heatmaps, &ui::HeatmapGrid::enlargeRequested, this, [this](int index) {
        const auto& maps = m_heatmaps->heatmaps();
        if (index < 0 || index >= static_cast<int>(maps.size())) {
            return;
        }
        auto* big = new ui::HeatmapGrid(this);  // closes with the main window
        big->setWindowFlag(Qt::Window);
        big->setAttribute(Qt::WA_DeleteOnClose);
        // named for the model and step it is of: it stays as it is when the window moves on
        big->setWindowTitle(subjectTitle(m_subject, shownStep()) + ": " +
                            maps[static_cast<size_t>(index)].title);
        big->setHeatmaps({maps[static_cast<size_t>(index)]});
        big->setFixedRange(m_fixedRange->isChecked());
        big->setSharedRange(m_heatmaps->colourRange());  // the grid's scale: colours compare
        big->resize(720, 680);
        big->show();
    });
}

void MainWindow::connectControls() {
    connect(m_controls, &ui::RunControls::initializeClicked, this, &MainWindow::initializeModel);
    connect(m_controls, &ui::RunControls::trainClicked, this, &MainWindow::startTraining);
    connect(m_controls, &ui::RunControls::pauseClicked, this, [this] {
        m_controller->state() == TrainingController::State::Paused ? m_controller->resume()
                                                                   : m_controller->pause();
    });
    connect(m_controls, &ui::RunControls::stopClicked, this, &MainWindow::stopTraining);
    connect(m_controls, &ui::RunControls::resetClicked, this, &MainWindow::resetModel);
    connect(m_probes, &ui::ProbeTab::runClicked, this, &MainWindow::runProbes);
    connect(m_probes, &ui::ProbeTab::cancelClicked, m_controller,
            &TrainingController::cancelProbes);
    connect(m_sweepRunner, &SweepRunner::problem, this, &MainWindow::showProblem);
    connect(m_compare, &ui::CompareTab::problemFound, this, &MainWindow::showProblem);
    connect(m_sweepRunner, &SweepRunner::finished, this,
            [this](const QString& m) { statusBar()->showMessage(m); });
    connect(m_controller, &TrainingController::probes, this, &MainWindow::addProbes);
    connect(m_controller, &TrainingController::probeProgress, m_probes,
            &ui::ProbeTab::showProgress);
}

namespace {

// Why the Mechanism tab builds no model while a run goes on.
const QString kModelDuringRun =
    "a training run is going on: stop it first. A model at init is drawn from its seed on the "
    "random generator that the run's dropout draws from, and would change the run.";

const QString kAblationsOfAnotherModel =
    "The form has changed since these ablations ran, so their table went: press Run ablations "
    "for the model the form now describes.";

}  // namespace

bool MainWindow::runGoing() const {
    const auto state = m_controller->state();
    return state == TrainingController::State::Training ||
           state == TrainingController::State::Paused;
}

void MainWindow::connectMechanism() {
    // The Mechanism tab's simulations are small (at most 2,048 x 128 x 1,024 numbers, well under
    // a second; the form's model at init, when the settings take its weights or embeddings, is
    // built once per settings): they run here, on the window's thread, as the sliders move.
    connect(m_mechanism, &ui::MechanismTab::simulateRequested, this,
            [this](const AveragingConfig& config) {
                if (needsModel(config) && runGoing()) {
                    showProblem(kModelDuringRun);
                    return;
                }
                try {
                    m_mechanism->showResult(m_mechanismModel->simulate(m_form->spec(), config));
                } catch (const std::exception& e) {
                    showProblem(QString::fromStdString(nope::errorText(e)));
                }
            });
    // The ablations build a model and run it 16 times: in the background.
    ui::AblationPanel* panel = m_mechanism->ablations();
    // The header names the form's model; a table of another model (the form changed) goes.
    auto describeModel = [this, panel] {
        const QString model = AblationJob::describe(m_form->spec(), panel->samples());
        panel->setModelText(model);
        if (!panel->shownTable().results.empty() &&
            specKey(m_form->spec()) != m_ablationsFor.toStdString()) {
            panel->clearTable(kAblationsOfAnotherModel);
        }
    };
    connect(m_form, &ui::ConfigForm::changed, this, describeModel);
    describeModel();
    connect(panel, &ui::AblationPanel::runRequested, this,
            [this, panel, describeModel](const AblationConfig& config, int samples) {
                if (!m_form->isValid()) {
                    panel->showFailure("the form has problems: " + m_form->errors().join("; "));
                    return;
                }
                if (runGoing()) {
                    panel->showFailure(kModelDuringRun);
                    return;
                }
                describeModel();
                m_ablationsFor = QString::fromStdString(specKey(m_form->spec()));
                if (m_ablationJob->start(m_form->spec(), config, samples)) {
                    panel->showRunning(QString("Running %1 ablations on the model at init...")
                                           .arg(config.ablations.size()));
                }
            });
    connect(m_ablationJob, &AblationJob::finished, this, [this, panel](const AblationTable& t) {
        if (specKey(m_form->spec()) == m_ablationsFor.toStdString()) {
            panel->showTable(t);
        } else {
            panel->clearTable(kAblationsOfAnotherModel);  // the form changed while they ran
        }
    });
    connect(m_ablationJob, &AblationJob::failed, this, [this, panel](const QString& message) {
        panel->showFailure(message);
        showProblem("Ablations: " + message);
    });
}

void MainWindow::connectExplore() {
    connect(m_explore, &ui::ExploreTab::analysisRequested, this,
            [this](const std::vector<std::string>& prompts) {
                if (!m_controller->analyzePrompts(prompts)) {
                    m_explore->setFailure(
                        "The model is busy (being built or loaded): the "
                        "prompt is analysed once it is ready.",
                        /*retry=*/true);
                }
            });
    connect(m_controller, &TrainingController::promptAnalysis, m_explore,
            &ui::ExploreTab::setResult);
    connect(m_controller, &TrainingController::promptFailed, m_explore,
            [this](const QString& message) { m_explore->setFailure(message); });
    connect(m_controller, &TrainingController::ready, this, [this](const ModelReady& model) {
        m_explore->setContext(model.spec.model.blockSize);
        m_explore->retryIfWaiting();
        m_explore->refresh();
    });
    connect(m_controller, &TrainingController::snapshot, this, [this](const Snapshot& s) {
        if (s.step == 0) {  // a run's first snapshot: its model (Train builds one without ready)
            m_explore->setContext(m_form->spec().model.blockSize);
        }
        m_explore->retryIfWaiting();
        if (currentView() == m_explore) {
            m_explore->refresh();  // the shown prompt, with the newest weights
        }
    });
}

void MainWindow::connectController() {
    connect(m_controller, &TrainingController::snapshot, this, &MainWindow::addSnapshot);
    connect(m_controller, &TrainingController::progress, m_controls,
            &ui::RunControls::showProgress);
    connect(m_controller, &TrainingController::progress, this, &MainWindow::addEvaluation);
    connect(m_controller, &TrainingController::tick, this, &MainWindow::onTick);
    connect(m_controller, &TrainingController::stateChanged, this, &MainWindow::onStateChanged);
    connect(m_controller, &TrainingController::status, this,
            [this](const QString& m) { statusBar()->showMessage(m); });
    connect(m_controller, &TrainingController::failed, this, [this](const QString& message) {
        if (m_subject.phase == SubjectPhase::Building) {
            beginSubject({});  // nothing was built or read: no model, and the banner says why
        }
        showProblem(message);
    });
    // ready before any snapshot handler that reads the form's spec: the model's own settings
    connect(m_controller, &TrainingController::ready, this, &MainWindow::onModelReady);
    connect(m_controller, &TrainingController::finished, this, &MainWindow::onRunFinished);
}

}  // namespace nope::gui
