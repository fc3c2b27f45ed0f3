#include "gui/automation.h"

#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QTabWidget>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/flags.h"
#include "cli/help_pages.h"
#include "gui/ablation_job.h"
#include "gui/main_window.h"
#include "gui/sweep_runner.h"
#include "training/presets.h"
#include "widgets/ablation_panel.h"
#include "widgets/attention_tab.h"
#include "widgets/compare_curves.h"
#include "widgets/compare_tab.h"
#include "widgets/config_form.h"
#include "widgets/explore_tab.h"
#include "widgets/mechanism_tab.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/qcp.h"
#include "widgets/run_browser.h"
#include "widgets/side_by_side.h"
#include "widgets/sweep_tab.h"
#include "widgets/theme.h"

namespace nope::gui {

namespace {

// nopescope(1): the window's options (`nopescope --help-format roff`, at build time).
std::string manPage(const std::string& options) {
    cli::ManPage page;
    page.name = "nopescope";
    page.summary = "watch position information emerge in transformers without positional encodings";
    page.synopsis = ".B nopescope\n[\\fIoptions\\fR]\n";
    page.description =
        cli::roffText(
            "The NoPEScope window trains small nanoGPT-style causal transformers without "
            "positional encodings on synthetic tasks (addition, reversal, indexing, ordering) in "
            "the background and shows, live, the per-layer self-cosine-similarity heatmaps of the "
            "hidden states, the adjacency probability score of every layer over training, and "
            "position probes, for the model it trains or any saved one (File, Open model). A form "
            "picks the task, the preset and the hyperparameters; Train, Stop and Reset drive the "
            "run; File, Export saves the figures and score tables of what the window shows.") +
        "\n";
    page.body =
        ".SH OPTIONS\nWithout options the window opens and initializes the form's model. "
        "The options drive it for scripted runs.\n" +
        options;
    page.body +=
        ".SH ENVIRONMENT\n.TP\n.B NOPESCOPE_RUNS\nthe folder new run folders are "
        "written under (default: runs in the current folder).\n";
    page.seeAlso =
        ".BR nopescope\\-cli (1);\nthe user guide in /usr/share/doc/nopescope/ or "
        "the repository's docs/ folder.\n";
    return cli::renderManPage(page, NOPESCOPE_VERSION);
}

}  // namespace

Automation::Automation(MainWindow& window) : m_window(window) {}

bool Automation::configure(const QStringList& arguments) {
    std::string screenshots;
    std::string task = m_task.toStdString();
    std::string theme;
    cli::FlagSet flags(
        "nopescope [--open DIR] [--screenshots DIR | --measure | --close-after S] [--task T] "
        "[--steps N] [--theme NAME]",
        "The NoPEScope window. Without options it opens and initializes the form's model; the\n"
        "options drive it for scripted runs (the docs' screenshots and measurements) with the\n"
        "quick preset.");
    flags.addString("screenshots", &screenshots,
                    "Initialize and save DIR/window-init.png, train, save window-trained.png and "
                    "window-probes.png, quit",
                    "DIR");
    flags.addSwitch("measure", &m_measure,
                    "train, then print the longest event-loop stall, the redraw rate and the "
                    "throughput in the window; quit");
    flags.addDouble("close-after", &m_closeAfter,
                    "start training, close the window after that many seconds and print the time "
                    "of the close request (epoch ms)",
                    0.001, 1e6);
    std::string compare;
    flags.addString("compare", &compare,
                    "open the Compare tab on the run folders under ROOT, every run ticked", "ROOT");
    std::string open;
    flags.addString("open", &open,
                    "open the run folder DIR and follow it as its run writes more snapshots",
                    "DIR");
    std::string report;
    flags.addString("report", &report,
                    "render the figures of the study `nopescope-cli reproduce` wrote in DIR, "
                    "without the window",
                    "DIR");
    flags.addSwitch("mechanism", &m_mechanism, "open the Mechanism tab");
    std::string sweep;
    flags.addString("sweep", &sweep, "open the Sweep tab on the sweep folder DIR", "DIR");
    flags.addChoice("task", &task, "the task of the scripted run", cli::taskNames());
    flags.addInt("steps", &m_steps, "steps of the scripted run", 1, 10000000);
    flags.addInt("snapshot-every", &m_snapshotEvery,
                 "snapshot interval of the scripted run (0 = steps / 12)", 0, 10000000);
    flags.addInt("batch", &m_batch, "batch size instead of the quick preset's (0 = the preset's)",
                 0, 65536);
    flags.addInt("layers", &m_layers, "depth instead of the quick preset's (0 = the preset's)", 0,
                 48);
    flags.addChoice("theme", &theme, "the window's theme (also without the options above)",
                    {"system", "light", "dark"});
    std::vector<std::string> args;
    for (int i = 1; i < arguments.size(); ++i) {
        args.push_back(arguments[i].toStdString());
    }
    if (const auto error = flags.parse(args)) {
        std::fprintf(stderr, "nopescope: %s\n", error->c_str());
        return false;
    }
    if (flags.helpRequested()) {
        std::printf("%s", (cli::helpFormat() == cli::HelpFormat::Roff ? manPage(flags.help())
                                                                      : flags.help())
                              .c_str());
        m_helpShown = true;
        return false;
    }
    m_screenshots = QString::fromStdString(screenshots);
    m_compare = QString::fromStdString(compare);
    m_open = QString::fromStdString(open);
    m_sweep = QString::fromStdString(sweep);
    m_report = QString::fromStdString(report);
    m_task = QString::fromStdString(task);
    m_theme = QString::fromStdString(theme);
    return true;
}

void Automation::start() {
    if (!m_theme.isEmpty()) {
        ui::applyTheme(m_theme);
    }
    if (!m_open.isEmpty()) {
        QTimer::singleShot(0, this, [this] { m_window.openRunFolder(m_open); });
        return;
    }
    if (!m_compare.isEmpty()) {
        QTimer::singleShot(300, this, &Automation::showComparison);
        return;
    }
    if (!m_sweep.isEmpty()) {
        QTimer::singleShot(300, this, &Automation::showSweep);
        return;
    }
    if (m_mechanism) {
        QTimer::singleShot(300, this, &Automation::showMechanism);
        return;
    }
    if (m_screenshots.isEmpty() && !m_measure && m_closeAfter <= 0) {
        return;
    }
    RunSpec spec{*parseTask(m_task.toStdString()), {}, {}, "quick"};
    const Preset preset = *makePreset("quick", spec.task);
    spec.model = preset.model;
    spec.train = preset.train;
    if (m_batch > 0) {
        spec.train.batchSize = m_batch;
    }
    if (m_layers > 0) {
        spec.model.nLayer = m_layers;
    }
    spec.train.steps = m_steps;
    spec.train.decaySteps = m_steps;
    spec.train.evalEvery = std::max(1, m_steps / 6);
    spec.train.snapshotEvery = m_snapshotEvery > 0 ? m_snapshotEvery : std::max(1, m_steps / 12);
    spec.train.stopAccuracy = 100.0;
    m_window.form()->setSpec(spec);
    m_window.resize(1600, 950);

    connect(m_window.controller(), &TrainingController::snapshot, this, [this] {
        QTimer::singleShot(300, this, &Automation::onSnapshot);  // after the window redrew
    });
    // Initialize is done (heatmaps, then the probes at init) once the model is ready.
    connect(m_window.controller(), &TrainingController::ready, this,
            [this] { QTimer::singleShot(300, this, &Automation::onReady); });
    connect(m_window.controller(), &TrainingController::finished, this,
            [this] { QTimer::singleShot(500, this, &Automation::finish); });
    if (m_closeAfter > 0) {
        QTimer::singleShot(300, &m_window, &MainWindow::startTraining);
        QTimer::singleShot(static_cast<int>(300 + 1000 * m_closeAfter), this, [this] {
            std::printf("close requested at %lld ms (epoch), at step %d\n",
                        static_cast<long long>(QDateTime::currentMSecsSinceEpoch()),
                        m_window.controller()->modelStep());
            std::fflush(stdout);
            m_window.close();
        });
    } else if (!m_screenshots.isEmpty()) {
        QDir().mkpath(m_screenshots);
        QTimer::singleShot(500, &m_window, &MainWindow::initializeModel);
    } else {
        QTimer::singleShot(500, this, &Automation::startMeasuring);
    }
}

// --measure: trains while a 5 ms timer records the longest stall of the event loop.
void Automation::startMeasuring() {
    m_clock.start();
    m_lastTick = 0;
    m_probe.setInterval(5);
    connect(&m_probe, &QTimer::timeout, this, [this] {
        const qint64 now = m_clock.elapsed();
        m_longestStall = std::max(m_longestStall, now - m_lastTick);
        m_lastTick = now;
    });
    m_probe.start();
    m_trainStart = m_clock.elapsed();
    m_redrawsAtStart = m_window.redrawCount();
    m_window.startTraining();
}

void Automation::screenshot(const QString& name) {
    const QString path = QDir(m_screenshots).filePath(name);
    m_window.grab().save(path);
    std::printf("wrote %s\n", qPrintable(path));
    std::fflush(stdout);
}

void Automation::onSnapshot() {
    const auto& history = m_window.history();
    if (!history.empty() && history.back().tokensPerSecond > 0) {
        m_tokensPerSecond.push_back(history.back().tokensPerSecond);
    }
}

void Automation::onReady() {
    if (!m_screenshots.isEmpty() && !m_initShot) {
        m_initShot = true;
        screenshot("window-init.png");
        m_window.startTraining();
    }
}

void Automation::showComparison() {
    m_window.resize(1600, 950);
    ui::CompareTab* compare = m_window.compare();
    compare->browser()->setRoot(m_compare);
    m_window.showView(compare);
    for (int row = 0; row < static_cast<int>(compare->browser()->runs().size()); ++row) {
        compare->browser()->setChecked(row, true);
    }
    if (m_screenshots.isEmpty()) {
        return;
    }
    QDir().mkpath(m_screenshots);
    QTimer::singleShot(600, this, [this, compare] {
        screenshot("window-compare.png");
        // the accuracy curves over each run's wall time, alone and large enough to read
        compare->curves()->setXAxis(ui::CompareCurves::XAxis::Minutes);
        const QString accuracy = QDir(m_screenshots).filePath("compared-accuracy-minutes.png");
        compare->curves()->accuracyPlot()->savePng(accuracy, 1000, 450);
        std::printf("wrote %s\n", qPrintable(accuracy));
        compare->curves()->setXAxis(ui::CompareCurves::XAxis::Step);
        compare->views()->setCurrentWidget(compare->sideBySide());
        QTimer::singleShot(600, this, [this] {
            screenshot("window-side-by-side.png");
            QApplication::quit();
        });
    });
}

void Automation::showSweep() {
    m_window.resize(1600, 950);
    m_window.showView(m_window.sweep());
    m_window.sweepRunner()->open(m_sweep);
    if (m_screenshots.isEmpty()) {
        return;
    }
    QDir().mkpath(m_screenshots);
    QTimer::singleShot(600, this, [this] {
        screenshot("window-sweep.png");
        m_window.sweep()->figures()->setCurrentIndex(1);
        QTimer::singleShot(600, this, [this] {
            screenshot("window-sweep-lines.png");
            QApplication::quit();
        });
    });
}

void Automation::showMechanism() {
    m_window.resize(1600, 950);
    m_window.showView(m_window.mechanism());
    if (m_screenshots.isEmpty()) {
        return;
    }
    QDir().mkpath(m_screenshots);
    QTimer::singleShot(1500, this, [this] {  // after the first simulation is drawn
        screenshot("window-mechanism.png");
        // then the ablations of the form's model at init, the table and one row's heatmaps
        ui::MechanismTab* tab = m_window.mechanism();
        tab->showAblations(true);
        connect(m_window.ablationJob(), &AblationJob::finished, this, [this, tab] {
            tab->ablations()->select(Ablation::VOut);
            QTimer::singleShot(800, this, [this] {
                screenshot("window-ablations.png");
                QApplication::quit();
            });
        });
        connect(m_window.ablationJob(), &AblationJob::failed, this, [](const QString& message) {
            std::fprintf(stderr, "ablations failed: %s\n", qPrintable(message));
            QApplication::exit(1);
        });
        tab->ablations()->runButton()->click();
    });
}

// The Explore tab with a pinned prompt of the task and the same prompt with one digit changed,
// then the Probes tab.
void Automation::explorePinnedAndEdited() {
    ui::ExploreTab* explore = m_window.explore();
    m_window.showView(explore);
    const QString pinned =
        m_window.form()->spec().task == TaskKind::Reversal ? "rev(12345)=" : "$123+456=";
    QString edited = pinned;
    edited[pinned.size() - 3] = '9';
    explore->promptField()->setText(pinned);
    explore->pinButton()->click();
    explore->promptField()->setText(edited);
    QTimer::singleShot(1500, this, [this] {
        screenshot("window-explore.png");
        m_window.showView(m_window.probes());
        QTimer::singleShot(600, this, [this] {
            screenshot("window-probes.png");
            QApplication::quit();
        });
    });
}

void Automation::finish() {
    if (!m_screenshots.isEmpty()) {
        screenshot("window-trained.png");
        m_window.showView(m_window.attention());
        QTimer::singleShot(600, this, [this] {
            screenshot("window-attention.png");
            m_window.showView(m_window.projector());
            QTimer::singleShot(600, this, [this] {
                screenshot("window-projector.png");
                explorePinnedAndEdited();
            });
        });
        return;
    }
    if (m_measure) {
        const double seconds = (m_clock.elapsed() - m_trainStart) / 1000.0;
        std::vector<double> tps = m_tokensPerSecond;
        std::sort(tps.begin(), tps.end());
        const double median = tps.empty() ? 0.0 : tps[tps.size() / 2];
        std::printf("longest event-loop stall during training: %lld ms\n",
                    static_cast<long long>(m_longestStall));
        std::printf("redraws: %d in %.1f s (%.1f per second), snapshots: %zu\n",
                    m_window.redrawCount() - m_redrawsAtStart, seconds,
                    (m_window.redrawCount() - m_redrawsAtStart) / seconds,
                    m_window.history().size());
        std::printf("training throughput in the window: %.0f tokens/s (median over snapshots)\n",
                    median);
        std::fflush(stdout);
        measureExplore();
        return;
    }
    QApplication::quit();
}

// --measure, after training: types a prompt of the task into the Explore tab one character at a
// time, each once the last one's heatmaps are drawn, and prints the keystroke-to-drawing times.
void Automation::measureExplore() {
    ui::ExploreTab* explore = m_window.explore();
    m_window.showView(explore);
    const QString text =
        m_window.form()->spec().task == TaskKind::Reversal ? "rev(9876543210123)=" : "$4512+7309=";
    auto typed = std::make_shared<int>(0);
    auto latencies = std::make_shared<std::vector<double>>();
    auto typeNext = [explore, text, typed] {
        explore->promptField()->setText(text.left(++*typed));
    };
    connect(explore, &ui::ExploreTab::resultShown, this, [=] {
        latencies->push_back(explore->lastLatencyMs());
        if (*typed < text.size()) {
            QTimer::singleShot(30, this, typeNext);
            return;
        }
        std::vector<double> sorted = *latencies;
        std::sort(sorted.begin(), sorted.end());
        std::printf(
            "explore: %zu keystrokes of '%s', keystroke to drawing median %.0f ms, "
            "slowest %.0f ms\n",
            sorted.size(), qPrintable(text), sorted[sorted.size() / 2], sorted.back());
        std::fflush(stdout);
        QApplication::quit();
    });
    typeNext();
}

}  // namespace nope::gui
