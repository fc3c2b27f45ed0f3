#include "training_worker.h"

#include <exception>
#include <filesystem>

#include "training/run_recorder.h"
#include "training/trainer.h"
#include "util/runtime.h"

namespace nope::gui {

TrainingWorker::TrainingWorker(QObject* parent) : QObject(parent) {}

TrainingWorker::~TrainingWorker() = default;

void TrainingWorker::requestStop() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_trainer) {
        m_trainer->requestStop();
    }
}

void TrainingWorker::setPaused(bool paused) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_pausedRequest = paused;
    if (m_trainer) {
        m_trainer->setPaused(paused);
    }
}

void TrainingWorker::replaceTrainer(std::unique_ptr<Trainer> trainer) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_trainer = std::move(trainer);
}

bool TrainingWorker::ensureTrainer(const RunSpec& spec) {
    if (m_trainer) {
        return true;
    }
    applyThreadCount(spec.train.threads);
    replaceTrainer(std::make_unique<Trainer>(spec.task, spec.model, spec.train));
    m_spec = spec;
    return true;
}

void TrainingWorker::initialize(const RunSpec& spec) {
    try {
        Q_EMIT status("building the data and the model...");
        replaceTrainer(nullptr);
        ensureTrainer(spec);
        Snapshot s;
        s.totalSteps = spec.train.steps;
        s.analysis = m_trainer->analyze();
        Q_EMIT snapshot(s);
        Q_EMIT ready(spec, QString("initialized: %1 analysed prompts, forward %2 s")
                               .arg(s.analysis.samples)
                               .arg(s.analysis.forwardSeconds, 0, 'f', 2));
    } catch (const std::exception& e) {
        replaceTrainer(nullptr);
        Q_EMIT failed(QString("Initialize failed: %1").arg(e.what()));
    }
}

void TrainingWorker::train(const RunSpec& spec, const QString& runFolder) {
    try {
        ensureTrainer(spec);
        Trainer& trainer = *m_trainer;
        trainer.setPaused(m_pausedRequest);
        const bool continuing = trainer.step() > 0;
        nlohmann::json config = trainer.configJson();
        config["preset"] = m_spec.preset;
        RunRecorder recorder(trainer, runFolder.toStdString(), config, continuing);
        Q_EMIT status(QString("training; run folder %1").arg(runFolder));
        TrainerCallbacks forward;
        forward.evaluated = [this](const Snapshot& p, bool) { Q_EMIT progress(p); };
        forward.snapshot = [this](const Snapshot& s) { Q_EMIT snapshot(s); };
        const TrainOutcome outcome = trainer.run(recorder.wrap(forward));
        recorder.finish();
        Q_EMIT finished(
            QString::fromStdString(outcome.message) + QString(" (run folder %1)").arg(runFolder),
            outcome.reason != StopReason::NonFinite);
    } catch (const std::exception& e) {
        Q_EMIT failed(QString("Training failed: %1").arg(e.what()));
        Q_EMIT finished(QString("training failed"), false);
    }
}

void TrainingWorker::saveCheckpoint(const QString& path) {
    try {
        if (!m_trainer) {
            Q_EMIT failed("There is no model to save yet: press Initialize or Train first.");
            return;
        }
        m_trainer->saveCheckpoint(path.toStdString());
        Q_EMIT status(QString("saved checkpoint %1 (step %2)").arg(path).arg(m_trainer->step()));
    } catch (const std::exception& e) {
        Q_EMIT failed(QString("Saving the checkpoint failed: %1").arg(e.what()));
    }
}

void TrainingWorker::loadCheckpoint(const QString& path) {
    try {
        auto trainer = Trainer::resume(path.toStdString());
        applyThreadCount(trainer->trainConfig().threads);
        RunSpec spec = trainer->spec();
        spec.preset = "custom";
        Snapshot s;
        s.step = trainer->step();
        s.totalSteps = trainer->trainConfig().steps;
        s.analysis = trainer->analyze();
        replaceTrainer(std::move(trainer));
        m_spec = spec;
        Q_EMIT snapshot(s);
        Q_EMIT ready(spec, QString("loaded %1 at step %2").arg(path).arg(s.step));
    } catch (const std::exception& e) {
        Q_EMIT failed(QString("Loading the checkpoint failed: %1").arg(e.what()));
    }
}

void TrainingWorker::reset() {
    replaceTrainer(nullptr);
}

}  // namespace nope::gui
