#include "gui/training_controller.h"

#include <nlohmann/json.hpp>

#include "gui/subject.h"
#include "gui/training_worker.h"
#include "util/tsan_annotations.h"

namespace nope::gui {

TrainingController::TrainingController(QObject* parent)
    : QObject(parent), m_worker(new TrainingWorker) {
    m_thread.setObjectName("training");
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    // A run that was reset or replaced still ends on the thread: then it is free again.
    connect(m_worker, &TrainingWorker::runEnded, this, [this] {
        happensAfter(m_worker);  // queued from the worker's thread
        if (m_state == State::Training || m_state == State::Paused) {
            setState(m_hasModel ? State::Ready : State::Empty);
        }
    });
    newReceiver();
    m_thread.start();
}

void TrainingController::beginNewModel() {
    m_hasModel = false;
    m_modelStep = 0;
    newReceiver();
    setState(State::Busy);
}

void TrainingController::newReceiver() {
    if (m_worker) {
        m_worker->cancelProbes();  // the old model's probes at init are not wanted any more
    }
    if (m_receiver) {
        m_channel->close();            // the old model's commands send nothing more
        m_receiver->disconnect(this);  // and what they already sent goes nowhere
        m_receiver->deleteLater();
    }
    m_receiver = new RunReceiver(this);
    m_channel = std::make_shared<RunChannel>(m_receiver);
    connect(m_receiver, &RunReceiver::snapshot, this, [this](const Snapshot& s) {
        m_modelStep = s.step;
        Q_EMIT snapshot(s);
    });
    connect(m_receiver, &RunReceiver::progress, this, &TrainingController::progress);
    connect(m_receiver, &RunReceiver::tick, this, &TrainingController::tick);
    connect(m_receiver, &RunReceiver::status, this, &TrainingController::status);
    connect(m_receiver, &RunReceiver::probeProgress, this, &TrainingController::probeProgress);
    connect(m_receiver, &RunReceiver::promptAnalysis, this, &TrainingController::promptAnalysis);
    connect(m_receiver, &RunReceiver::promptFailed, this, &TrainingController::promptFailed);
    connect(m_receiver, &RunReceiver::ready, this, [this](const ModelReady& model) {
        m_hasModel = true;
        m_modelSpec = specKey(model.spec);
        setState(State::Ready);
        Q_EMIT ready(model);
    });
    connect(m_receiver, &RunReceiver::finished, this,
            [this](const QString& m, bool ok, bool stopped) {
                setState(m_hasModel ? State::Ready : State::Empty);
                Q_EMIT finished(m, ok, stopped);
            });
    connect(m_receiver, &RunReceiver::probes, this, [this](const ProbeReport& report, int step) {
        if (m_state == State::Busy) {
            setState(State::Ready);
        }
        Q_EMIT probes(report, step);
    });
    connect(m_receiver, &RunReceiver::failed, this, [this](const QString& m) {
        if (m_state == State::Busy) {
            setState(m_hasModel ? State::Ready : State::Empty);
        }
        Q_EMIT failed(m);
    });
}

TrainingController::~TrainingController() {
    if (!shutdown(2000)) {
        m_thread.wait();  // the step in flight ends; destroying a running thread would abort
        happensAfter(&m_thread);
    }
    m_channel->close();
}

void TrainingController::setState(State state) {
    if (m_state != state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }
}

void TrainingController::initialize(const RunSpec& spec) {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused) {
        return;
    }
    beginNewModel();
    m_worker->calls()->post([w = m_worker, spec, ch = m_channel] { w->initialize(spec, ch); });
}

void TrainingController::train(const RunSpec& spec, const QString& runFolder) {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused || m_state == State::Busy) {
        return;
    }
    if (m_hasModel && m_modelStep == 0 && specKey(spec) != m_modelSpec) {
        // the form changed: another model, on a channel of its own (what the old one still
        // sends, its probes at init or an answer in flight, goes nowhere)
        newReceiver();
        m_worker->calls()->post([w = m_worker] { w->reset(); });
        m_hasModel = false;
    }
    if (!m_hasModel) {
        m_modelSpec = specKey(spec);
    }
    m_worker->setPaused(false);
    m_worker->clearStop();
    m_worker->cancelProbes();  // the probes at init give way: the run probes its own step 0
    m_hasModel = true;
    setState(State::Training);
    m_worker->calls()->post(
        [w = m_worker, spec, runFolder, ch = m_channel] { w->train(spec, runFolder, ch); });
}

void TrainingController::pause() {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training) {
        m_worker->setPaused(true);
        setState(State::Paused);
    }
}

void TrainingController::resume() {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Paused) {
        m_worker->setPaused(false);
        setState(State::Training);
    }
}

void TrainingController::stop() {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused || m_state == State::Busy) {
        m_worker->requestStop();
        m_worker->setPaused(false);
    }
}

void TrainingController::reset() {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    stop();
    newReceiver();  // whatever the old run still sends is dropped
    m_worker->calls()->post([w = m_worker] { w->reset(); });
    m_hasModel = false;
    m_modelStep = 0;
    if (m_state != State::Training && m_state != State::Paused) {
        setState(State::Empty);
    }
}

void TrainingController::saveCheckpoint(const QString& path) {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused) {
        // the worker thread is in the run: save between two steps (at once while paused)
        if (m_worker->saveDuringRun(path, m_channel)) {
            Q_EMIT status(QString("saving %1 after the current step...").arg(path));
        }
        return;
    }
    m_worker->calls()->post([w = m_worker, path, ch = m_channel] { w->saveCheckpoint(path, ch); });
}

void TrainingController::loadCheckpoint(const QString& path) {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused) {
        return;
    }
    beginNewModel();  // the old model is gone, whether the checkpoint loads or not
    m_worker->calls()->post([w = m_worker, path, ch = m_channel] { w->loadCheckpoint(path, ch); });
}

void TrainingController::openModel(const QString& path, const RunSpec& spec) {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused) {
        return;
    }
    // also while another model is being built or probed: it is replaced (its channel closes)
    beginNewModel();
    m_worker->calls()->post(
        [w = m_worker, path, spec, ch = m_channel] { w->openModel(path, spec, ch); });
}

void TrainingController::runProbes(const ProbeConfig& config) {
    if (!m_worker) {
        return;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused) {
        m_worker->probeDuringRun(config, m_channel);  // between two steps, or while paused
        return;
    }
    if (m_state != State::Ready) {
        return;
    }
    m_worker->clearStop();
    setState(State::Busy);
    m_worker->calls()->post([w = m_worker, config, ch = m_channel] { w->runProbes(config, ch); });
}

void TrainingController::cancelProbes() {
    if (m_worker) {
        m_worker->cancelProbes();
    }
}

bool TrainingController::analyzePrompts(const std::vector<std::string>& prompts) {
    if (!m_worker) {
        return false;  // shut down: the worker and its thread are gone
    }
    if (m_state == State::Training || m_state == State::Paused) {
        return m_worker->promptsDuringRun(prompts, m_channel);  // between two steps
    }
    if (m_state != State::Ready) {
        return false;
    }
    m_worker->calls()->post(
        [w = m_worker, prompts, ch = m_channel] { w->analyzePrompts(prompts, ch); });
    return true;
}

bool TrainingController::shutdown(int milliseconds) {
    if (!m_thread.isRunning()) {
        return true;
    }
    m_worker->requestStop();
    m_worker->setPaused(false);
    happensBefore(&m_thread);  // for the worker's destruction on its thread
    m_thread.quit();           // runs once the worker returns to its event loop
    if (!m_thread.wait(QDeadlineTimer(milliseconds))) {
        return false;
    }
    happensAfter(&m_thread);  // the worker's last accesses, on its thread
    m_worker = nullptr;       // deleted on its thread as it finished; commands now do nothing
    // The worker's last signals are still queued and will never be needed: the run is over.
    setState(m_hasModel ? State::Ready : State::Empty);
    return true;
}

}  // namespace nope::gui
