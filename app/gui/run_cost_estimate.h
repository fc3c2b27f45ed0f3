// The form's estimate of a run's wall time on this machine (training/run_cost.h, with lighter
// timings than `train --check`): asked for once the form has settled, computed on a thread of
// its own with a model built for it (the window's model and run are not touched), and answered on
// the window's thread. A newer request replaces an older one still waiting.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

#include <atomic>
#include <optional>
#include <thread>

#include "run/run_spec.h"

namespace nope::gui {

class RunCostEstimate : public QObject {
    Q_OBJECT

public:
    explicit RunCostEstimate(QObject* parent = nullptr);
    ~RunCostEstimate() override;  // waits for a timing under way (a few seconds at most)

    // Estimates `spec` once no other request has come for kSettleMs.
    void request(const RunSpec& spec);
    // Forgets a request still waiting (a run starts: the machine is busy, the timing would lie).
    void cancel();
    bool busy() const { return m_busy; }

    static constexpr int kSettleMs = 1500;
    // How long each part is timed: the step on 64 rows for about a second, an evaluation on 32
    // test examples; the probes are not timed (the estimate says so).
    static constexpr double kStepSeconds = 1.0;
    static constexpr int kStepRows = 64;
    static constexpr int kEvalExamples = 32;

Q_SIGNALS:
    // `key` is gui/subject.h's specKey of the spec estimated; `seconds` the run's wall time
    // (negative when it could not be estimated, `text` then says why).
    void estimated(const QString& key, double seconds, const QString& text);

private:
    void start();
    void join();

    QTimer m_settle;
    std::optional<RunSpec> m_pending;
    std::thread m_thread;
    std::atomic<bool> m_busy{false};
};

}  // namespace nope::gui
