// The window's side of training: owns the worker thread, sends it commands as queued calls (each
// with the current model's RunChannel), sets stop and pause directly, and tracks what state the
// model is in. Closing stops the run.
#pragma once

#include <QObject>
#include <QThread>

#include <string>

#include "gui/meta_types.h"
#include "gui/run_channel.h"
#include "run/run_spec.h"
#include "run/snapshot.h"

namespace nope::gui {

class TrainingWorker;

class TrainingController : public QObject {
    Q_OBJECT

public:
    enum class State {
        Empty,     // no model
        Busy,      // building a model or loading a checkpoint
        Ready,     // a model exists, not training
        Training,  // the training loop runs
        Paused,    // the training loop waits
    };

    explicit TrainingController(QObject* parent = nullptr);
    ~TrainingController() override;

    void initialize(const RunSpec& spec);
    // Trains the current model, or a new one when there is none or the form changed before
    // training began.
    void train(const RunSpec& spec, const QString& runFolder);
    void pause();
    void resume();
    void stop();
    void reset();
    void saveCheckpoint(const QString& path);
    void loadCheckpoint(const QString& path);
    // Any saved model (a checkpoint, weights.pt, a run folder, nanoGPT's ckpt.pt) for analysis
    // and probes on `spec`'s task.
    void openModel(const QString& path, const RunSpec& spec);
    // Probes of the current model; Stop ends them between epochs.
    void runProbes(const ProbeConfig& config);
    // Ends the probes running (at init, or on demand) at their next epoch, without a result.
    void cancelProbes();

    // The user's own prompts with the current weights (at once when idle, between two steps
    // during a run): promptAnalysis or promptFailed answers. False when there is no model.
    bool analyzePrompts(const std::vector<std::string>& prompts);

    // Stops any run and ends the thread; false when it did not end within `milliseconds`.
    bool shutdown(int milliseconds);

    State state() const { return m_state; }
    bool hasModel() const { return m_hasModel; }
    int modelStep() const { return m_modelStep; }

Q_SIGNALS:
    void stateChanged(nope::gui::TrainingController::State state);
    void snapshot(const nope::Snapshot& snapshot);
    void progress(const nope::Snapshot& progress);  // after each evaluation
    void tick(const nope::Snapshot& progress);      // about once a second during a run
    void ready(const nope::gui::ModelReady& model);
    // A run ended: `ok` unless it failed, `stopped` when a stop ended it (not its steps, its
    // accuracy or its time limit).
    void finished(const QString& message, bool ok, bool stopped);
    void failed(const QString& message);
    void status(const QString& message);
    void probes(const nope::ProbeReport& report, int step);
    void probeProgress(int done, int total);
    void promptAnalysis(const nope::PromptAnalysis& analysis);
    void promptFailed(const QString& message);

private:
    void setState(State state);
    // A receiver (and its channel) for a new model: what the old one's commands still send is
    // dropped (gui/run_channel.h).
    void newReceiver();
    // Forgets the current model and waits for the one a command is about to build or load.
    void beginNewModel();

    QThread m_thread;
    TrainingWorker* m_worker;
    State m_state = State::Empty;
    bool m_hasModel = false;
    int m_modelStep = 0;
    std::string m_modelSpec;            // JSON of the spec the model was built from
    RunReceiver* m_receiver = nullptr;  // replaced by initialize, reset, load and open
    Channel m_channel;
};

}  // namespace nope::gui
