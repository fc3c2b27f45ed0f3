#include "gui/training_worker.h"

#include <exception>
#include <filesystem>

#include "run/run_folder.h"
#include "run/saved_model.h"
#include "training/run_recorder.h"
#include "training/trainer.h"
#include "util/runtime.h"

namespace nope::gui {

TrainingWorker::TrainingWorker(QObject* parent)
    : QObject(parent), m_control(std::make_shared<RunControl>()) {}

TrainingWorker::~TrainingWorker() = default;

void TrainingWorker::requestStop() {
    m_probeCancel = true;
    m_control->requestStop();
}

void TrainingWorker::setPaused(bool paused) {
    m_control->setPaused(paused);
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
    replaceTrainer(std::make_unique<Trainer>(spec.task, spec.model, spec.train, m_control));
    m_spec = spec;
    return true;
}

void TrainingWorker::initialize(const RunSpec& spec) {
    const int generation = m_generation;
    try {
        Q_EMIT status("building the data and the model...", generation);
        replaceTrainer(nullptr);
        m_checkpointFolder.clear();
        ensureTrainer(spec);
        Snapshot s;
        s.totalSteps = spec.train.steps;
        s.analysis = m_trainer->analyze();
        Q_EMIT snapshot(s, generation);
        if (spec.train.probeEvery > 0) {  // the heatmaps first, then the probes at init
            Q_EMIT status("probing the model at initialization...", generation);
            s.probes = m_trainer->probe(spec.train.probe, &m_probeCancel,
                                        [this, generation](int done, int total) {
                                            Q_EMIT probeProgress(done, total, generation);
                                        });
            if (!s.probes.cancelled) {
                Q_EMIT snapshot(s, generation);
            }
        }
        Q_EMIT ready(spec,
                     QString("initialized: %1 analysed prompts, forward %2 s")
                         .arg(s.analysis.samples)
                         .arg(s.analysis.forwardSeconds, 0, 'f', 2),
                     ModelOrigin::Initialized, generation);
    } catch (const std::exception& e) {
        replaceTrainer(nullptr);
        Q_EMIT failed(QString("Initialize failed: %1").arg(e.what()), generation);
    }
}

void TrainingWorker::train(const RunSpec& spec, const QString& runFolder) {
    const int generation = m_generation;
    try {
        ensureTrainer(spec);
        Trainer& trainer = *m_trainer;
        if (m_control->stopRequested()) {  // Stop was pressed while the model was being built
            m_control->clearStop();
            Q_EMIT finished(QString("stopped before the first step"), true, generation);
            return;
        }
        const bool continuing = trainer.step() > 0;
        nlohmann::json config = trainer.configJson();
        config["preset"] = m_spec.preset;
        RunRecorder recorder(trainer, runFolder.toStdString(), config, continuing,
                             m_checkpointFolder.toStdString());
        Q_EMIT status(QString("training; run folder %1").arg(runFolder), generation);
        TrainerCallbacks forward;
        forward.evaluated = [this, generation](const Snapshot& p, bool) {
            Q_EMIT progress(p, generation);
        };
        forward.snapshot = [this, generation](const Snapshot& s) {
            Q_EMIT snapshot(s, generation);
        };
        const TrainOutcome outcome = trainer.run(recorder.wrap(forward));
        m_control->runPending();  // probes asked for as the run ended
        recorder.finish(outcome);
        Q_EMIT finished(
            QString::fromStdString(outcome.message) + QString(" (run folder %1)").arg(runFolder),
            outcome.reason != StopReason::NonFinite, generation);
    } catch (const std::exception& e) {
        Q_EMIT finished(QString("Training failed: %1").arg(e.what()), false, generation);
    }
}

void TrainingWorker::saveCheckpoint(const QString& path) {
    const int generation = m_generation;
    try {
        if (!m_trainer) {
            Q_EMIT failed("There is no model to save yet: press Initialize or Train first.",
                          generation);
            return;
        }
        m_trainer->saveCheckpoint(path.toStdString());
        Q_EMIT status(QString("saved checkpoint %1 (step %2)").arg(path).arg(m_trainer->step()),
                      generation);
    } catch (const std::exception& e) {
        Q_EMIT failed(QString("Saving the checkpoint failed: %1").arg(e.what()), generation);
    }
}

void TrainingWorker::loadCheckpoint(const QString& path) {
    const int generation = m_generation;
    try {
        auto trainer = Trainer::resume(path.toStdString(), 0, m_control);
        applyThreadCount(trainer->trainConfig().threads);
        const std::filesystem::path folder =
            std::filesystem::path(path.toStdString()).parent_path();
        if (const auto best = bestCheckpoint(folder)) {
            trainer->loadBest(*best);  // "trained" means the best checkpoint
        }
        RunSpec spec = trainer->spec();
        spec.preset = "custom";
        Snapshot s;
        s.step = trainer->step();
        s.totalSteps = trainer->trainConfig().steps;
        s.analysis = trainer->analyze();
        replaceTrainer(std::move(trainer));
        m_spec = spec;
        m_checkpointFolder = QString::fromStdString(folder.string());
        Q_EMIT snapshot(s, generation);
        Q_EMIT ready(spec, QString("loaded %1 at step %2").arg(path).arg(s.step),
                     ModelOrigin::Checkpoint, generation);
    } catch (const std::exception& e) {
        Q_EMIT failed(QString("Loading the checkpoint failed: %1").arg(e.what()), generation);
    }
}

void TrainingWorker::reset() {
    replaceTrainer(nullptr);
}

void TrainingWorker::runProbes(const ProbeConfig& config) {
    if (!m_trainer) {
        Q_EMIT failed(
            "There is no model to probe yet: press Initialize, Train or File > "
            "Open model first.",
            m_generation);
        return;
    }
    m_probeCancel = false;
    probeNow(*m_trainer, config, m_generation);
}

bool TrainingWorker::probeDuringRun(const ProbeConfig& config) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_trainer) {
        return false;
    }
    Trainer* trainer = m_trainer.get();  // alive while its run() drains the queued tasks
    const int generation = m_generation;
    m_probeCancel = false;
    m_control->post(
        [this, trainer, config, generation] { probeNow(*trainer, config, generation); });
    return true;
}

bool TrainingWorker::saveDuringRun(const QString& path) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_trainer) {
        return false;
    }
    m_control->post([this, path] { saveCheckpoint(path); });  // on the training thread
    return true;
}

void TrainingWorker::probeNow(Trainer& trainer, const ProbeConfig& config, int generation) {
    try {
        const FieldErrors errors = validate(config, trainer.modelConfig().blockSize);
        if (!errors.empty()) {
            Q_EMIT failed(
                QString("Probes not run: %1").arg(QString::fromStdString(describe(errors.front()))),
                generation);
            return;
        }
        Q_EMIT status("running position probes...", generation);
        const ProbeReport report =
            trainer.probe(config, &m_probeCancel, [this, generation](int done, int total) {
                Q_EMIT probeProgress(done, total, generation);
            });
        if (report.cancelled) {
            Q_EMIT failed("Probes stopped before the end; nothing was kept.", generation);
            return;
        }
        Q_EMIT probes(report, trainer.step(), generation);
        Q_EMIT status(QString("probes done in %1 s").arg(report.seconds, 0, 'f', 1), generation);
    } catch (const std::exception& e) {
        Q_EMIT failed(QString("Probes failed: %1").arg(e.what()), generation);
    }
}

void TrainingWorker::openModel(const QString& path, const RunSpec& form) {
    const int generation = m_generation;
    try {
        SavedModel saved = loadSavedModel(path.toStdString());
        RunSpec spec = form;
        spec.model = saved.config;
        spec.model.dropout = form.model.dropout;
        spec.preset = "custom";
        auto trainer = std::make_unique<Trainer>(spec.task, spec.model, spec.train, m_control);
        trainer->copyWeightsFrom(*saved.model);
        applyThreadCount(spec.train.threads);
        Snapshot s;
        s.totalSteps = spec.train.steps;
        s.analysis = trainer->analyze();
        replaceTrainer(std::move(trainer));
        m_spec = spec;
        m_checkpointFolder.clear();
        Q_EMIT snapshot(s, generation);
        Q_EMIT ready(spec,
                     QString("loaded model %1 (%2)")
                         .arg(QString::fromStdString(saved.file.string()),
                              QString::fromStdString(saved.format)),
                     ModelOrigin::SavedModel, generation);
    } catch (const std::exception& e) {
        Q_EMIT failed(QString("Opening the model failed: %1").arg(e.what()), generation);
    }
}

}  // namespace nope::gui
