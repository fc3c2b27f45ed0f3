#include "gui/training_worker.h"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "model/fast_ops.h"
#include "run/run_folder.h"
#include "run/saved_model.h"
#include "training/run_recorder.h"
#include "training/trainer.h"
#include "util/error_text.h"
#include "util/runtime.h"
#include "util/tsan_annotations.h"

namespace nope::gui {

TrainingWorker::TrainingWorker(QObject* parent)
    : QObject(parent), m_calls(new CallQueue(this)), m_control(std::make_shared<RunControl>()) {}

// Destroyed on its thread once the controller has stopped it (TrainingController::shutdown).
TrainingWorker::~TrainingWorker() {
    happensAfter(thread());  // what the controller did before stopping the thread
    m_trainer.reset();
    happensBefore(thread());  // for the controller, after its wait for the thread
}

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

void TrainingWorker::initialize(const RunSpec& spec, const Channel& channel) {
    try {
        channel->status("building the data and the model...");
        replaceTrainer(nullptr);
        m_checkpointFolder.clear();
        m_fileStep.reset();
        ensureTrainer(spec);
        Snapshot s;
        s.totalSteps = spec.train.steps;
        s.analysis = m_trainer->analyze();
        channel->snapshot(s);
        m_probeCancel = false;  // before ready: a Cancel or Train from then on ends the probes
        channel->ready({spec,
                        QString("initialized: %1 analysed prompts, forward %2 s")
                            .arg(s.analysis.samples)
                            .arg(s.analysis.forwardSeconds, 0, 'f', 2),
                        ModelOrigin::Initialized, QString(), 0});
        if (spec.train.probeEvery > 0) {  // the heatmaps first, then the probes at init
            m_calls->post(
                [this, config = spec.train.probe, s, channel] { probeAtInit(config, s, channel); });
        }
    } catch (const std::exception& e) {
        replaceTrainer(nullptr);
        channel->failed(
            QString("Initialize failed: %1").arg(QString::fromStdString(nope::errorText(e))));
    }
}

void TrainingWorker::probeAtInit(const ProbeConfig& config, Snapshot snapshot,
                                 const Channel& channel) {
    if (!m_trainer || m_probeCancel || !channel->isOpen() || m_trainer->step() != 0) {
        return;  // another model, a run that began, or a cancel: not wanted any more
    }
    try {
        channel->status(
            "probing the model at initialization (Train or Cancel on the Probes tab "
            "ends it)...");
        snapshot.probes = m_trainer->probe(config, &m_probeCancel, [channel](int done, int total) {
            channel->probeProgress(done, total);
        });
        if (snapshot.probes.cancelled) {
            channel->probeProgress(0, 0);
            channel->status("probes at initialization cancelled");
            return;
        }
        channel->snapshot(snapshot);
        channel->status(QString("probes at initialization done in %1 s")
                            .arg(snapshot.probes.seconds, 0, 'f', 1));
    } catch (const std::exception& e) {
        channel->failed(
            QString("Probes failed: %1").arg(QString::fromStdString(nope::errorText(e))));
    }
}

void TrainingWorker::train(const RunSpec& spec, const QString& runFolder, const Channel& channel) {
    try {
        ensureTrainer(spec);
        Trainer& trainer = *m_trainer;
        if (m_control->stopRequested()) {  // Stop was pressed while the model was being built
            m_control->clearStop();
            channel->finished(QString("stopped before the first step"), true, true);
            happensBefore(this);
            Q_EMIT runEnded();
            return;
        }
        const bool continuing = trainer.step() > 0;
        nlohmann::json config = trainer.configJson();
        config["preset"] = m_spec.preset;
        RunRecorder recorder(trainer, runFolder.toStdString(), config, continuing,
                             m_checkpointFolder.toStdString());
        const std::string emulated = bf16EmulationReason();
        channel->status(
            trainer.trainConfig().precision == Precision::Bf16 && !emulated.empty()
                ? QString("training in bf16, products emulated in fp32 (%1); run folder %2")
                      .arg(QString::fromStdString(emulated), runFolder)
                : QString("training; run folder %1").arg(runFolder));
        TrainerCallbacks forward;
        forward.evaluated = [channel](const Snapshot& p, bool) { channel->progress(p); };
        forward.snapshot = [channel](const Snapshot& s) { channel->snapshot(s); };
        forward.ticked = [channel](const Snapshot& p) { channel->tick(p); };
        setInRun(true);
        const TrainOutcome outcome = trainer.run(recorder.wrap(forward));
        setInRun(false);
        m_control->runPending();  // what was asked for as the run ended
        recorder.finish(outcome);
        channel->finished(
            QString::fromStdString(outcome.message) + QString(" (run folder %1)").arg(runFolder),
            outcome.reason != StopReason::NonFinite, outcome.reason == StopReason::Stopped);
    } catch (const std::exception& e) {
        setInRun(false);
        m_control->runPending();
        channel->finished(
            QString("Training failed: %1").arg(QString::fromStdString(nope::errorText(e))), false,
            false);
    }
    happensBefore(this);
    Q_EMIT runEnded();
}

void TrainingWorker::saveCheckpoint(const QString& path, const Channel& channel) {
    try {
        if (!m_trainer) {
            channel->failed("There is no model to save yet: press Initialize or Train first.");
            return;
        }
        m_trainer->saveCheckpoint(path.toStdString());
        channel->status(QString("saved checkpoint %1 (step %2)").arg(path).arg(m_trainer->step()));
    } catch (const std::exception& e) {
        channel->failed(QString("Saving the checkpoint failed: %1")
                            .arg(QString::fromStdString(nope::errorText(e))));
    }
}

void TrainingWorker::loadCheckpoint(const QString& path, const Channel& channel) {
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
        m_fileStep.reset();
        m_checkpointFolder = QString::fromStdString(folder.string());
        channel->snapshot(s);
        channel->ready({spec, QString("loaded %1 at step %2").arg(path).arg(s.step),
                        ModelOrigin::Checkpoint, path, s.step});
    } catch (const std::exception& e) {
        forgetModel();  // the window forgot the old model when it asked for this one
        channel->failed(QString("Loading the checkpoint failed: %1")
                            .arg(QString::fromStdString(nope::errorText(e))));
    }
}

void TrainingWorker::reset() {
    forgetModel();
}

void TrainingWorker::forgetModel() {
    replaceTrainer(nullptr);
    m_fileStep.reset();
    m_checkpointFolder.clear();
}

void TrainingWorker::runProbes(const ProbeConfig& config, const Channel& channel) {
    if (!m_trainer) {
        channel->failed(
            "There is no model to probe yet: press Initialize, Train or File > "
            "Open model first.");
        return;
    }
    m_probeCancel = false;
    probeNow(*m_trainer, config, channel);
}

namespace {

void promptsNow(Trainer& trainer, const std::vector<std::string>& prompts, int step,
                const Channel& channel) {
    try {
        PromptAnalysis analysis = trainer.analyzePrompts(prompts);
        analysis.step = step;  // a model file's own step (-1: unknown), else the trainer's
        channel->promptAnalysis(analysis);
    } catch (const std::exception& e) {
        channel->promptFailed(QString::fromStdString(nope::errorText(e)));
    }
}

}  // namespace

void TrainingWorker::setInRun(bool inRun) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_inRun = inRun;
}

bool TrainingWorker::probeDuringRun(const ProbeConfig& config, const Channel& channel) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_trainer) {
        return false;
    }
    m_probeCancel = false;
    postBetweenSteps([this, config, channel] { probeNow(*m_trainer, config, channel); });
    return true;
}

void TrainingWorker::postBetweenSteps(std::function<void()> task) {
    // called with m_mutex held
    if (m_inRun) {
        m_control->post(std::move(task));  // run between two steps, or at once while paused
    } else {
        // the run has just ended (the window does not know yet): after it, on this thread
        m_calls->post(std::move(task));
    }
}

bool TrainingWorker::promptsDuringRun(const std::vector<std::string>& prompts,
                                      const Channel& channel) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_trainer) {
        return false;
    }
    postBetweenSteps([this, prompts, channel] { analyzePrompts(prompts, channel); });
    return true;
}

void TrainingWorker::analyzePrompts(const std::vector<std::string>& prompts,
                                    const Channel& channel) {
    if (!m_trainer) {
        channel->promptFailed(
            "There is no model yet: press Initialize, Train or File > Open "
            "model first.");
        return;
    }
    promptsNow(*m_trainer, prompts, m_fileStep ? *m_fileStep : m_trainer->step(), channel);
}

bool TrainingWorker::saveDuringRun(const QString& path, const Channel& channel) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_trainer) {
        return false;
    }
    postBetweenSteps([this, path, channel] { saveCheckpoint(path, channel); });
    return true;
}

void TrainingWorker::probeNow(Trainer& trainer, const ProbeConfig& config, const Channel& channel) {
    try {
        const FieldErrors errors = validate(config, trainer.modelConfig().blockSize);
        if (!errors.empty()) {
            channel->failed(QString("Probes not run: %1")
                                .arg(QString::fromStdString(describe(errors.front()))));
            return;
        }
        channel->status("running position probes...");
        const ProbeReport report =
            trainer.probe(config, &m_probeCancel,
                          [channel](int done, int total) { channel->probeProgress(done, total); });
        if (report.cancelled) {
            channel->probeProgress(0, 0);
            channel->failed("Probes stopped before the end; nothing was kept.");
            return;
        }
        channel->probes(report, m_fileStep ? std::max(0, *m_fileStep) : trainer.step());
        channel->status(QString("probes done in %1 s").arg(report.seconds, 0, 'f', 1));
    } catch (const std::exception& e) {
        channel->failed(
            QString("Probes failed: %1").arg(QString::fromStdString(nope::errorText(e))));
    }
}

void TrainingWorker::openModel(const QString& path, const RunSpec& form, const Channel& channel) {
    try {
        SavedModel saved = loadSavedModel(path.toStdString());
        RunSpec spec = form;
        spec.model = saved.config;
        spec.model.dropout = form.model.dropout;
        spec.preset = "custom";
        if (const auto task = parseTask(saved.task)) {
            spec.task = *task;  // the task the model was trained on, where the file says
        }
        auto trainer = std::make_unique<Trainer>(spec.task, spec.model, spec.train, m_control);
        trainer->copyWeightsFrom(*saved.model);
        applyThreadCount(spec.train.threads);
        Snapshot s;
        s.step = std::max(0, saved.step);  // the history's step; an unknown one is said apart
        s.totalSteps = spec.train.steps;
        s.analysis = trainer->analyze();
        replaceTrainer(std::move(trainer));
        m_spec = spec;
        m_fileStep = saved.step;
        m_checkpointFolder.clear();
        channel->snapshot(s);
        const QString file = QString::fromStdString(saved.file.string());
        channel->ready(
            {spec, QString("loaded model %1 (%2)").arg(file, QString::fromStdString(saved.format)),
             ModelOrigin::SavedModel, file, saved.step});
    } catch (const std::exception& e) {
        forgetModel();  // the window forgot the old model when it asked for this one
        channel->failed(QString("Opening the model failed: %1")
                            .arg(QString::fromStdString(nope::errorText(e))));
    }
}

}  // namespace nope::gui
