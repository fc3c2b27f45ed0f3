#include "automation.h"

#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QPixmap>
#include <QPushButton>
#include <QTabWidget>

#include <algorithm>
#include <cstdio>

#include "config_form.h"
#include "main_window.h"
#include "probe_tab.h"
#include "theme.h"
#include "training/presets.h"

namespace nope::gui {

Automation::Automation(MainWindow& window) : m_window(window) {}

bool Automation::configure(const QStringList& arguments) {
    for (int i = 1; i < arguments.size(); ++i) {
        const QString& a = arguments[i];
        auto value = [&]() -> QString {
            return i + 1 < arguments.size() ? arguments[++i] : QString();
        };
        if (a == "--screenshots") {
            m_screenshots = value();
        } else if (a == "--measure") {
            m_measure = true;
        } else if (a == "--steps" || a == "--snapshot-every" || a == "--batch" || a == "--layers") {
            bool ok = false;
            const int n = value().toInt(&ok);
            if (!ok || n < 1) {
                std::fprintf(stderr, "nopescope: %s: needs a positive integer\n", qPrintable(a));
                return false;
            }
            (a == "--steps"            ? m_steps
             : a == "--snapshot-every" ? m_snapshotEvery
             : a == "--batch"          ? m_batch
                                       : m_layers) = n;
        } else if (a == "--theme") {
            m_theme = value();
            if (m_theme != "system" && m_theme != "light" && m_theme != "dark") {
                std::fprintf(stderr,
                             "nopescope: --theme: '%s' is not allowed (allowed: system, "
                             "light, dark)\n",
                             qPrintable(m_theme));
                return false;
            }
        } else if (a == "--close-after") {
            bool ok = false;
            m_closeAfter = value().toDouble(&ok);
            if (!ok || m_closeAfter <= 0) {
                std::fprintf(stderr,
                             "nopescope: --close-after: needs a positive number of seconds\n");
                return false;
            }
        } else if (a == "--task") {
            m_task = value();
            if (!parseTask(m_task.toStdString())) {
                std::fprintf(stderr, "nopescope: --task: '%s' is not allowed (allowed: %s)\n",
                             qPrintable(m_task), taskNamesJoined().c_str());
                return false;
            }
        } else {
            std::fprintf(
                stderr,
                "nopescope: unknown option %s (allowed: --screenshots DIR, --measure, "
                "--steps N, --task T, --snapshot-every N, --batch N, --layers N, --theme NAME, "
                "--close-after S)\n",
                qPrintable(a));
            return false;
        }
    }
    return true;
}

void Automation::start() {
    if (!m_theme.isEmpty()) {
        ui::applyTheme(m_theme);
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
        QTimer::singleShot(500, this, [this] {
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
        });
    }
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

void Automation::finish() {
    if (!m_screenshots.isEmpty()) {
        screenshot("window-trained.png");
        m_window.viewTabs()->setCurrentWidget(m_window.probes());
        QTimer::singleShot(600, this, [this] {
            screenshot("window-probes.png");
            QApplication::quit();
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
    }
    QApplication::quit();
}

}  // namespace nope::gui
