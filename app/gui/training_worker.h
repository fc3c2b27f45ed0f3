// The training thread's object: it owns the trainer (and with it the model, the data and every
// tensor), runs in its own QThread, and sends value-type snapshots out by queued signals. Stop
// and pause are atomic flags the training loop checks between steps, set directly from the
// window's thread (a busy worker never reads its event queue).
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <mutex>

#include "run/run_spec.h"
#include "run/snapshot.h"

namespace nope {
class Trainer;
}

namespace nope::gui {

class TrainingWorker : public QObject {
    Q_OBJECT

public:
    explicit TrainingWorker(QObject* parent = nullptr);
    ~TrainingWorker() override;

    // Thread-safe; act between training steps.
    void requestStop();
    void setPaused(bool paused);

public Q_SLOTS:
    // Builds data and a fresh model and sends its step-0 analysis.
    void initialize(const nope::RunSpec& spec);
    // Trains the current model (initializing it first if needed), recording into `runFolder`.
    void train(const nope::RunSpec& spec, const QString& runFolder);
    void saveCheckpoint(const QString& path);
    // Continues from a checkpoint: its config replaces the form's.
    void loadCheckpoint(const QString& path);
    void reset();

Q_SIGNALS:
    void ready(const nope::RunSpec& spec, const QString& message);  // a model exists
    void snapshot(const nope::Snapshot& snapshot);                  // with analysis
    void progress(const nope::Snapshot& progress);                  // after each evaluation
    void finished(const QString& message, bool ok);                 // training ended
    void failed(const QString& message);                            // nothing changed or stopped
    void status(const QString& message);

private:
    bool ensureTrainer(const RunSpec& spec);
    void replaceTrainer(std::unique_ptr<Trainer> trainer);

    std::unique_ptr<Trainer> m_trainer;
    RunSpec m_spec;
    std::mutex m_mutex;  // guards m_trainer against requestStop/setPaused from the window
    bool m_pausedRequest = false;
};

}  // namespace nope::gui
