// Runs the Mechanism tab's ablations in the background: a model at initialization from the
// form's settings, the task's test prompts, every ablation (mechanism/ablation_runner.h). One
// run at a time; the result or the failure comes back on the window's thread. Destroying the job
// stops a run between ablations and waits for it.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <thread>

#include "gui/call_queue.h"
#include "mechanism/ablation.h"
#include "run/run_spec.h"

namespace nope::gui {

class AblationJob : public QObject {
    Q_OBJECT

public:
    explicit AblationJob(QObject* parent = nullptr);
    ~AblationJob() override;

    bool running() const { return m_running; }
    // False (nothing started) while a run is going on.
    bool start(const RunSpec& spec, const AblationConfig& config, int samples);
    // "6 layers x 384 wide, 6 heads, init default, seed 1337; 256 addition test prompts"
    static QString describe(const RunSpec& spec, int samples);

Q_SIGNALS:
    void finished(const nope::AblationTable& table);
    void failed(const QString& message);

private:
    CallQueue* m_calls;  // the run's result, back on the window's thread
    std::thread m_thread;
    std::atomic<bool> m_cancel{false};
    bool m_running = false;
};

}  // namespace nope::gui
