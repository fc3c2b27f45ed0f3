// Runs the Sweep tab's sweeps: `nopescope-cli sweep` (beside the window's executable, else on
// PATH) as a
// child process, its progress read from the sweep folder's sweep.json every second and the
// results (study/results.h) handed to the tab as runs finish and at the end. Stop sends the sweep
// SIGINT, which stops its runs and leaves a folder that Run sweep resumes. Opening a finished or
// interrupted sweep folder shows its results.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QTimer>

#include "study/manifest.h"
#include "widgets/sweep_tab.h"

namespace nope::gui {

class SweepRunner : public QObject {
    Q_OBJECT

public:
    explicit SweepRunner(ui::SweepTab* tab, QObject* parent = nullptr);
    ~SweepRunner() override;

    bool running() const { return m_process.state() != QProcess::NotRunning; }
    // Ends a running sweep before the window goes: its signals are cut from the window, then it
    // gets SIGINT (its runs stop after their step and the folder stays resumable), and after
    // `graceMs` its whole process group SIGKILL. Returns when it has ended.
    void shutDown(int graceMs = 10000);
    QString folder() const { return m_folder; }
    // The arguments of `nopescope-cli` for a request (a folder holding a sweep is resumed).
    static QStringList arguments(const ui::SweepRequest& request, const QString& folder);
    // What a sweep folder's manifest asked for, as the tab's form holds it.
    static ui::SweepRequest requestOf(const study::Manifest& manifest, const QString& folder);
    // Why `folder` cannot take `request` (it holds another sweep); empty when it can.
    static QString differentSweep(const ui::SweepRequest& request, const QString& folder);

public Q_SLOTS:
    void start(const nope::ui::SweepRequest& request);
    void stop();
    void open(const QString& folder);

Q_SIGNALS:
    void problem(const QString& message);
    void finished(const QString& message);

private:
    void poll(bool withResults);
    void onFinished(int exitCode);

    ui::SweepTab* m_tab;
    QProcess m_process;
    QTimer m_poll;
    QString m_folder;
    QString m_lastLine;
    int m_polls = 0;
};

}  // namespace nope::gui
