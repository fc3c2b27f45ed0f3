#include "gui/sweep_runner.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

#include <unistd.h>

#include <csignal>

#include "run/run_folder.h"
#include "study/manifest.h"
#include "study/results.h"
#include "util/error_text.h"

namespace nope::gui {

namespace {

// nopescope-cli beside the window (the build folder, /usr/bin), else the first on PATH.
QString cliPath() {
    const QString beside = QDir(QCoreApplication::applicationDirPath()).filePath("nopescope-cli");
    if (QFileInfo::exists(beside)) {
        return beside;
    }
    const QString found = QStandardPaths::findExecutable("nopescope-cli");
    return found.isEmpty() ? beside : found;
}

}  // namespace

SweepRunner::SweepRunner(ui::SweepTab* tab, QObject* parent) : QObject(parent), m_tab(tab) {
    m_poll.setInterval(1000);
    connect(&m_poll, &QTimer::timeout, this, [this] { poll(++m_polls % 5 == 0); });
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    // The sweep leads a process group of its own with its runs, so that a window that must go
    // can end them all; a Ctrl-C at the window's terminal does not reach them.
    m_process.setChildProcessModifier([] { ::setpgid(0, 0); });
    connect(&m_process, &QProcess::readyRead, this, [this] {
        const QStringList lines = QString::fromUtf8(m_process.readAll())
                                      .split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts);
        if (!lines.isEmpty()) {
            m_lastLine = lines.back().trimmed();
        }
    });
    connect(&m_process, &QProcess::finished, this,
            [this](int exitCode, QProcess::ExitStatus) { onFinished(exitCode); });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            m_poll.stop();
            m_tab->setRunning(false);
            Q_EMIT problem("Cannot start " + cliPath() + ": " + m_process.errorString());
        }
    });
    connect(tab, &ui::SweepTab::runRequested, this, &SweepRunner::start);
    connect(tab, &ui::SweepTab::stopRequested, this, &SweepRunner::stop);
    connect(tab, &ui::SweepTab::openRequested, this, &SweepRunner::open);
}

SweepRunner::~SweepRunner() {
    shutDown();
}

void SweepRunner::shutDown(int graceMs) {
    if (!running()) {
        return;
    }
    disconnect(this, nullptr, nullptr, nullptr);  // nothing reaches a window that is closing
    m_process.disconnect(this);
    m_poll.stop();
    const auto pid = static_cast<pid_t>(m_process.processId());
    ::kill(pid, SIGINT);
    if (!m_process.waitForFinished(graceMs)) {
        ::kill(-pid, SIGKILL);  // the sweep leads its own process group: its runs go too
        m_process.waitForFinished(5000);
    }
}

ui::SweepRequest SweepRunner::requestOf(const study::Manifest& manifest, const QString& folder) {
    ui::SweepRequest request;
    QStringList axes;
    for (const auto& axis : manifest.grid.axes) {
        QStringList values;
        for (const auto& v : axis.values) {
            values << QString::fromStdString(v);
        }
        axes << QString::fromStdString(axis.name) + "=" + values.join(',');
    }
    request.grid = axes.join(' ');
    request.seeds = static_cast<int>(manifest.seeds.size());
    request.preset = QString::fromStdString(manifest.preset.value_or(""));
    request.probes = manifest.probes;
    for (const auto& flag : manifest.fixed) {
        request.fixed << QString::fromStdString(flag);
    }
    request.jobs = manifest.jobs;
    request.out = folder;
    return request;
}

QStringList SweepRunner::arguments(const ui::SweepRequest& r, const QString& folder) {
    if (study::holdsSweep(folder.toStdString())) {
        QStringList args = {"sweep", "--resume", folder};
        if (r.jobs > 0) {
            args << "--jobs" << QString::number(r.jobs);
        }
        return args;
    }
    QStringList args = {"sweep", "--grid", r.grid, "--seeds", QString::number(r.seeds)};
    if (!r.preset.isEmpty()) {
        args << "--trained" << r.preset;
    }
    if (r.probes) {
        args << "--probes";
    }
    if (r.jobs > 0) {
        args << "--jobs" << QString::number(r.jobs);
    }
    args << r.fixed << "--out" << folder;
    return args;
}

void SweepRunner::start(const ui::SweepRequest& request) {
    if (running()) {
        return;
    }
    QString folder = request.out;
    if (folder.isEmpty()) {
        const QString name = "sweep-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
        folder = QDir(QString::fromStdString(runsRoot().string())).absoluteFilePath(name);
    }
    if (const QString other = differentSweep(request, folder); !other.isEmpty()) {
        Q_EMIT problem(other);
        return;
    }
    m_folder = folder;
    m_lastLine.clear();
    m_tab->setRunning(true);
    m_tab->setProgress(0, 0, 0, "checking every run's flags...");
    m_process.start(cliPath(), arguments(request, m_folder));
    m_polls = 0;
    m_poll.start();
}

// Why `folder` cannot take this request: it holds another sweep (Run resumes a folder only with
// the sweep that made it). Empty when the folder is new or holds this very sweep.
QString SweepRunner::differentSweep(const ui::SweepRequest& request, const QString& folder) {
    if (!study::holdsSweep(folder.toStdString())) {
        return {};
    }
    try {
        const ui::SweepRequest held = requestOf(study::readManifest(folder.toStdString()), folder);
        if (held.grid == request.grid && held.seeds == request.seeds &&
            held.preset == request.preset && held.probes == request.probes &&
            held.fixed == request.fixed) {
            return {};
        }
        return "folder: " + folder + " holds another sweep (grid \"" + held.grid + "\", " +
               QString::number(held.seeds) + " seeds): Run resumes it only as it was (Open sweep " +
               "puts it in the form); for a new sweep empty the folder field or name a new one";
    } catch (const std::exception& e) {
        return QString::fromStdString(nope::errorText(e));
    }
}

void SweepRunner::stop() {
    if (running()) {
        ::kill(static_cast<pid_t>(m_process.processId()), SIGINT);
        m_lastLine = "stopping the running runs...";
    }
}

void SweepRunner::open(const QString& folder) {
    m_folder = folder;
    try {  // the form shows what the sweep ran, so that Run sweep resumes or repeats it
        m_tab->setRequest(requestOf(study::readManifest(folder.toStdString()), folder));
    } catch (const std::exception&) {
        // poll() below names the problem
    }
    poll(true);
}

// Progress from sweep.json; with `withResults`, also the results of the runs done so far.
void SweepRunner::poll(bool withResults) {
    const std::filesystem::path dir = m_folder.toStdString();
    if (!study::holdsSweep(dir)) {
        if (!running()) {
            Q_EMIT problem(m_folder + " holds no sweep (no sweep.json)");
        }
        return;
    }
    try {
        const study::Manifest manifest = study::readManifest(dir);
        int done = 0, failed = 0;
        for (const auto& run : manifest.runs) {
            done += run.status == study::RunStatus::Done ? 1 : 0;
            failed += run.status == study::RunStatus::Failed ? 1 : 0;
        }
        m_tab->setProgress(done, failed, static_cast<int>(manifest.runs.size()),
                           running() ? m_lastLine
                                     : QString("%1: %2 of %3 runs done")
                                           .arg(m_folder)
                                           .arg(done)
                                           .arg(manifest.runs.size()));
        if (withResults) {
            std::vector<std::string> problems;
            m_tab->setResults(study::collectResults(dir, manifest, problems), m_folder);
        }
    } catch (const std::exception& e) {
        if (!running()) {
            Q_EMIT problem(QString::fromStdString(nope::errorText(e)));
        }
    }
}

void SweepRunner::onFinished(int exitCode) {
    m_poll.stop();
    m_tab->setRunning(false);
    poll(true);
    const QString message =
        exitCode == 0 ? "sweep finished: " + m_folder
        : exitCode == 130
            ? "sweep stopped; Run sweep on the same folder resumes it"
            : "sweep ended with status " + QString::number(exitCode) + ": " + m_lastLine;
    if (exitCode == 0 || exitCode == 130) {
        Q_EMIT finished(message);
    } else {
        Q_EMIT problem(message);
    }
}

}  // namespace nope::gui
