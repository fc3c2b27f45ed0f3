// The window's menus: File (saved models, run folders, sessions, checkpoints, export), Run, View
// (theme) and Help (the user guide, the keys, About). Part of MainWindow, in a file of its own.
#include <QActionGroup>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>

#include "gui/export_menu.h"
#include "gui/main_window.h"
#include "gui/user_guide.h"

#include <nlohmann/json.hpp>
#include "run/run_folder.h"
#include "util/error_text.h"
#include "util/files.h"
#include "widgets/ablation_panel.h"
#include "widgets/attention_tab.h"
#include "widgets/compare_curves.h"
#include "widgets/compare_tab.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/explore_tab.h"
#include "widgets/heatmap_grid.h"
#include "widgets/mechanism_tab.h"
#include "widgets/probe_panel.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/qcp.h"
#include "widgets/run_browser.h"
#include "widgets/run_controls.h"
#include "widgets/score_table.h"
#include "widgets/side_by_side.h"
#include "widgets/sweep_tab.h"
#include "widgets/theme.h"

namespace nope::gui {

namespace {

QString runsFolder() {
    return QString::fromStdString(runsRoot().string());
}

constexpr const char* kHelpText =
    "<p><b>What the window shows.</b> The line above the views names the model or run shown "
    "(its task and shape, where it came from) and its step; every view and every export is of "
    "that model at that step, or says why it is empty.</p>"
    "<p><b>Heatmaps</b>: each layer's self-cosine similarity of the hidden states, averaged over "
    "the analysed prompts, titled with the adjacency probability score. <b>Attention</b>: each "
    "head's weights. <b>Projector</b>: the hidden states projected, coloured by position. "
    "<b>Explore</b>: any prompt you type, with the model's answer. <b>Probes</b>: how well "
    "position can be read off each layer. <b>Compare</b>, <b>Sweep</b>: runs on disk. "
    "<b>Mechanism</b>: the averaging effect simulated, and ablations at init.</p>"
    "<p><b>Keys</b>: F5 Train or Continue, F6 Pause or Resume, Shift+F5 Stop, Ctrl+I "
    "Initialize, F7 Run probes, Ctrl+O Open run folder, Ctrl+Shift+O Open model, Ctrl+L Load "
    "session, Ctrl+S Save session, Ctrl+E Export all, F1 the user guide, Ctrl+Q Quit.</p>";

}  // namespace

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu("&File");
    addOpenActions(file);
    file->addSeparator();
    addSessionActions(file);
    file->addSeparator();
    addCheckpointActions(file);
    file->addSeparator();
    m_exportMenu = new ExportMenu(
        this, [this] { return exportSet(); },
        [this](const QString& error, const QString& done) { report(error, done); });
    m_exportMenu->addTo(file);
    file->addSeparator();
    file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
    addRunActions(menuBar()->addMenu("&Run"));

    QMenu* theme = menuBar()->addMenu("&View")->addMenu("&Theme");
    auto* group = new QActionGroup(this);
    m_themes = group;
    for (const QString& name : {QString("system"), QString("light"), QString("dark")}) {
        QAction* action = theme->addAction(name, this, [this, name] {
            ui::applyTheme(name);
            scheduleRedraw();
        });
        action->setCheckable(true);
        action->setChecked(name == "system");
        group->addAction(action);
    }
    QMenu* help = menuBar()->addMenu("&Help");
    help->addAction("&User guide", QKeySequence::HelpContents, this,
                    [this] { showUserGuide(this, "docs/window.md"); });
    help->addAction("&What the window shows, and its keys", this, &MainWindow::showHelp);
    help->addSeparator();
    help->addAction("&About NoPEScope", this,
                    [this] { QMessageBox::about(this, "About NoPEScope", aboutText()); });
}

// The run's buttons as menu items with shortcuts: each acts as its button does and only when the
// button can be pressed.
void MainWindow::addRunActions(QMenu* run) {
    const struct {
        const char* label;
        QKeySequence keys;
        QPushButton* button;
    } actions[] = {
        {"&Initialize", QKeySequence("Ctrl+I"), m_controls->initializeButton()},
        {"&Train / Continue", QKeySequence(Qt::Key_F5), m_controls->trainButton()},
        {"&Pause / Resume", QKeySequence(Qt::Key_F6), m_controls->pauseButton()},
        {"&Stop", QKeySequence(Qt::SHIFT | Qt::Key_F5), m_controls->stopButton()},
        {"&Reset (discard the model)", QKeySequence(), m_controls->resetButton()},
    };
    for (const auto& a : actions) {
        QPushButton* button = a.button;
        QAction* action = run->addAction(a.label, a.keys, this, [button] {
            if (button->isEnabled()) {
                button->click();
            }
        });
        action->setToolTip(button->toolTip());
    }
    run->addSeparator();
    run->addAction("Run &probes", QKeySequence(Qt::Key_F7), this, [this] {
        if (m_probes->runButton()->isEnabled()) {
            runProbes();
        }
    });
}

void MainWindow::addOpenActions(QMenu* file) {
    file->addAction("&Open run folder...", QKeySequence::Open, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, "Open a run folder (browse its snapshots; follow it while it is written)",
            runsFolder());
        if (!dir.isEmpty()) {
            openRunFolder(dir);
        }
    });
    file->addAction("Open &model...", QKeySequence("Ctrl+Shift+O"), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, "Open a saved model for analysis and probes",
                                         runsFolder(), "Models (*.pt *.pth *.bin);;All files (*)");
        if (!path.isEmpty()) {
            openModel(path);
        }
    });
}

QByteArray MainWindow::sessionJson() const {
    nlohmann::json j = nlohmann::json::parse(m_form->sessionJson().toStdString());
    j["prompts"] = nlohmann::json::array();
    for (const QString& prompt : m_explore->triedPrompts()) {
        j["prompts"].push_back(prompt.toStdString());
    }
    return QByteArray::fromStdString(j.dump(2) + "\n");
}

QString MainWindow::loadTriedPrompts(const nlohmann::json& session) {
    if (!session.contains("prompts")) {
        return {};  // a session saved before the Explore tab
    }
    const auto& list = session.at("prompts");
    if (!list.is_array()) {
        return "prompts: not a list (allowed: a list of prompts)";
    }
    QStringList prompts;
    for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string()) {
            return QString("prompts[%1]: not a string (allowed: a prompt)").arg(i);
        }
        prompts << QString::fromStdString(list[i].get<std::string>());
    }
    return m_explore->setTriedPrompts(prompts);
}

void MainWindow::addSessionActions(QMenu* file) {
    file->addAction("&Load session...", QKeySequence("Ctrl+L"), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, "Load session", {}, "Session (*.json)");
        if (!path.isEmpty()) {
            loadSession(path);
        }
    });
    file->addAction("&Save session...", QKeySequence::Save, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, "Save session", "session.json", "Session (*.json)");
        if (!path.isEmpty()) {
            report(ui::saveText(path, sessionJson()), "wrote " + path);
        }
    });
}

void MainWindow::addCheckpointActions(QMenu* file) {
    file->addAction("&Resume from checkpoint...", this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, "Resume a run from its checkpoint (Continue trains on)", runsFolder(),
            "Checkpoint (*.pt)");
        if (!path.isEmpty()) {
            resumeFromCheckpoint(path);
        }
    });
    // During a run the checkpoint is written after the current step (at once while paused).
    file->addAction("Save c&heckpoint...", this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, "Save checkpoint", RunFiles::kCheckpoint, "Checkpoint (*.pt)");
        if (!path.isEmpty()) {
            m_controller->saveCheckpoint(path);
        }
    });
}

// What File → Export writes: every panel of the window at the current step.
ui::ExportSet MainWindow::exportSet() {
    redraw();  // export what the current step shows
    ui::ExportSet set;
    set.heatmaps = m_heatmaps->plot();
    set.adjacencyCurves = m_curves->adjacencyPlot();
    set.trainingCurves = m_curves->trainingPlot();
    set.probeBars = m_probes->panel()->barsPlot();
    set.probeScatter = m_probes->panel()->scatterPlot();
    set.scores = m_scores->tableData();
    set.probes = m_probes->panel()->table();
    if (!m_mechanism->heatmaps()->heatmaps().empty()) {
        set.mechanism = m_mechanism->heatmaps()->plot();
    }
    if (!m_attention->heatmaps()->heatmaps().empty()) {
        set.attentionHeatmaps = m_attention->heatmaps()->plot();
        set.attentionEntropy = m_attention->entropyPlot();
        set.attentionDistance = m_attention->distancePlot();
        set.attention = m_attention->tableData();
    }
    if (m_projector->panelCount() > 0) {
        set.projector = m_projector->scatterPlot();
        set.projectorPosition = m_projector->positionPlot();
        set.projection = m_projector->tableData();
    }
    if (!m_mechanism->ablations()->shownTable().results.empty()) {
        set.ablationTable = m_mechanism->ablations()->tableData();
    }
    if (!m_mechanism->ablations()->heatmaps()->heatmaps().empty()) {
        set.ablations = m_mechanism->ablations()->heatmaps()->plot();
    }
    if (!m_sweep->results().runs.empty()) {
        set.sweepHeatmap = m_sweep->heatmapPlot();
        set.sweepLines = m_sweep->linesPlot();
        set.sweepSummary = m_sweep->tableData();
    }
    if (!m_compare->browser()->checkedRuns().empty()) {
        set.comparedAdjacency = m_compare->curves()->adjacencyPlot();
        set.comparedAccuracy = m_compare->curves()->accuracyPlot();
        set.comparedScores = m_compare->curves()->tableData();
        set.sideA = m_compare->sideBySide()->grid(0)->plot();
        set.sideB = m_compare->sideBySide()->grid(1)->plot();
        set.sideDifference = m_compare->sideBySide()->grid(2)->plot();
    }
    // the settings of the model shown (the form's only when nothing is shown)
    const RunSpec spec = m_subject.empty() ? m_form->spec() : m_subject.spec;
    set.config = QByteArray::fromStdString(toJson(spec).dump(2) + "\n");
    set.subject = subjectJson(m_subject, shownStep());
    set.caption = subjectCaption(m_subject, shownStep());
    return set;
}

void MainWindow::showHelp() {
    QMessageBox box(this);
    box.setWindowTitle("What the window shows, and its keys");
    box.setTextFormat(Qt::RichText);
    box.setText(kHelpText);
    box.exec();
}

}  // namespace nope::gui
