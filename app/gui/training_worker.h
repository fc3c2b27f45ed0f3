// The training thread's object: it owns the trainer (and with it the model, the data and every
// tensor), runs in its own QThread, and sends value-type snapshots out through the RunChannel of
// each command (gui/run_channel.h). Stop and pause go through the RunControl every trainer of this
// worker shares, set directly from the window's thread (a busy worker never reads its event
// queue) and checked between steps.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "gui/meta_types.h"
#include "gui/run_channel.h"
#include "probe/probe_config.h"
#include "run/run_spec.h"
#include "run/snapshot.h"
#include "training/run_control.h"

namespace nope {
class Trainer;
}

namespace nope::gui {

class TrainingWorker : public QObject {
    Q_OBJECT

public:
    explicit TrainingWorker(QObject* parent = nullptr);
    ~TrainingWorker() override;

    // Commands from the window's thread run here, in order (the controller posts them).
    CallQueue* calls() const { return m_calls; }

    // Thread-safe; act between training steps (and between batches of an evaluation).
    void requestStop();
    void setPaused(bool paused);
    // Called by the window's thread just before it queues train(): forgets an earlier stop.
    // Thread-safe, during a run: probes of the current weights between two training steps (or at
    // once while paused). False when there is no model.
    bool probeDuringRun(const ProbeConfig& config, const Channel& channel);
    // Thread-safe, during a run: the user's prompts with the current weights between two steps
    // (or at once while paused). False when there is no model.
    bool promptsDuringRun(const std::vector<std::string>& prompts, const Channel& channel);
    // Thread-safe, during a run: saves a checkpoint of the current weights between two steps
    // (or at once while paused). False when there is no model.
    bool saveDuringRun(const QString& path, const Channel& channel);
    // Called by the window's thread just before it queues train(): forgets an earlier stop.
    void clearStop() {
        m_control->clearStop();
        m_probeCancel = false;
    }
    // Thread-safe: ends the probes running or queued (the model's at init, or on demand) at
    // their next epoch, without a result.
    void cancelProbes() { m_probeCancel = true; }

    // The commands, run on the worker's thread (the controller queues them); each sends what it
    // produces through `channel`.
    // Builds data and a fresh model and sends its step-0 analysis; the model is ready then, and
    // its probes at init (when the spec probes) follow as work of their own, which Train, a new
    // model or cancelProbes() ends.
    void initialize(const nope::RunSpec& spec, const Channel& channel);
    // Trains the current model (initializing it first if needed), recording into `runFolder`.
    void train(const nope::RunSpec& spec, const QString& runFolder, const Channel& channel);
    void saveCheckpoint(const QString& path, const Channel& channel);
    // Continues from a checkpoint: its config replaces the form's.
    void loadCheckpoint(const QString& path, const Channel& channel);
    void reset();
    // Position probes of the current model (initialized, paused, finished or loaded); stopped
    // between epochs by requestStop().
    void runProbes(const nope::ProbeConfig& config, const Channel& channel);
    // The user's prompts with the current model (initialized, finished or loaded).
    void analyzePrompts(const std::vector<std::string>& prompts, const Channel& channel);
    // Loads any saved model (run/saved_model.h) for analysis and probes on `spec`'s task; its
    // settings replace the form's model settings.
    void openModel(const QString& path, const nope::RunSpec& spec, const Channel& channel);

Q_SIGNALS:
    // A training run returned, whatever its channel: the thread is free again.
    void runEnded();

private:
    bool ensureTrainer(const RunSpec& spec);
    // The probes of the model at init, sent as its step-0 snapshot with probes.
    void probeAtInit(const ProbeConfig& config, Snapshot snapshot, const Channel& channel);
    // Runs the probes on the calling (worker) thread and sends the result or the problem.
    void probeNow(Trainer& trainer, const ProbeConfig& config, const Channel& channel);
    void replaceTrainer(std::unique_ptr<Trainer> trainer);
    // No model: the trainer and what was known of where it came from go.
    void forgetModel();
    // A task for the current trainer: between two steps while its run goes on, else queued on
    // this thread after the command running now (a run that has just ended). m_mutex held.
    void postBetweenSteps(std::function<void()> task);
    void setInRun(bool inRun);

    CallQueue* m_calls;  // a child: on the worker's thread
    std::unique_ptr<Trainer> m_trainer;
    RunSpec m_spec;
    QString m_checkpointFolder;  // where a loaded checkpoint came from (its init analysis)
    // The step of an opened model file's weights (-1: the file does not say), which the answers
    // about it name; empty for a model this worker built or a checkpoint it continues.
    std::optional<int> m_fileStep;
    std::mutex m_mutex;    // guards m_trainer and m_inRun against the ...DuringRun calls
    bool m_inRun = false;  // the trainer's run() is going: tasks go through m_control
    // Pause and stop for every trainer of this worker, also before one exists.
    std::shared_ptr<RunControl> m_control;
    std::atomic<bool> m_probeCancel{false};  // stops on-demand probes between epochs
};

}  // namespace nope::gui
