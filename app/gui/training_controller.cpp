#include "gui/training_controller.h"

#include <nlohmann/json.hpp>

#include "gui/training_worker.h"

namespace nope::gui {

namespace {

std::string specKey(const RunSpec& spec) {
    nlohmann::json j = toJson(spec);
    j.erase("preset");
    return j.dump();
}

}  // namespace

TrainingController::TrainingController(QObject* parent)
    : QObject(parent), m_worker(new TrainingWorker) {
    m_thread.setObjectName("training");
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    // Signals of an older generation (a run that was reset or replaced) are dropped.
    connect(m_worker, &TrainingWorker::snapshot, this, [this](const Snapshot& s, int generation) {
        if (generation == m_generation) {
            m_modelStep = s.step;
            Q_EMIT snapshot(s);
        }
    });
    connect(m_worker, &TrainingWorker::progress, this, [this](const Snapshot& p, int generation) {
        if (generation == m_generation) {
            Q_EMIT progress(p);
        }
    });
    connect(m_worker, &TrainingWorker::status, this, [this](const QString& m, int generation) {
        if (generation == m_generation) {
            Q_EMIT status(m);
        }
    });
    connect(m_worker, &TrainingWorker::ready, this,
            [this](const RunSpec& spec, const QString& m, ModelOrigin origin, int generation) {
                if (generation != m_generation) {
                    return;
                }
                m_hasModel = true;
                m_modelSpec = specKey(spec);
                setState(State::Ready);
                Q_EMIT ready(spec, m, origin);
            });
    connect(m_worker, &TrainingWorker::finished, this,
            [this](const QString& m, bool ok, int generation) {
                if (generation != m_generation) {
                    // a run that was reset: the thread is free again
                    if (m_state == State::Training || m_state == State::Paused) {
                        setState(m_hasModel ? State::Ready : State::Empty);
                    }
                    return;
                }
                setState(m_hasModel ? State::Ready : State::Empty);
                Q_EMIT finished(m, ok);
            });
    connect(m_worker, &TrainingWorker::probes, this,
            [this](const ProbeReport& report, int step, int generation) {
                if (generation != m_generation) {
                    return;
                }
                if (m_state == State::Busy) {
                    setState(State::Ready);
                }
                Q_EMIT probes(report, step);
            });
    connect(m_worker, &TrainingWorker::probeProgress, this,
            [this](int done, int total, int generation) {
                if (generation == m_generation) {
                    Q_EMIT probeProgress(done, total);
                }
            });
    connect(m_worker, &TrainingWorker::failed, this, [this](const QString& m, int generation) {
        if (generation != m_generation) {
            return;
        }
        if (m_state == State::Busy) {
            setState(m_hasModel ? State::Ready : State::Empty);
        }
        Q_EMIT failed(m);
    });
    m_thread.start();
}

void TrainingController::nextGeneration() {
    m_worker->setGeneration(++m_generation);
}

TrainingController::~TrainingController() {
    if (!shutdown(2000)) {
        m_thread.wait();  // the step in flight ends; destroying a running thread would abort
    }
}

void TrainingController::setState(State state) {
    if (m_state != state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }
}

void TrainingController::initialize(const RunSpec& spec) {
    if (m_state == State::Training || m_state == State::Paused) {
        return;
    }
    m_hasModel = false;
    m_modelStep = 0;
    nextGeneration();
    setState(State::Busy);
    QMetaObject::invokeMethod(m_worker, "initialize", Qt::QueuedConnection,
                              Q_ARG(nope::RunSpec, spec));
}

void TrainingController::train(const RunSpec& spec, const QString& runFolder) {
    if (m_state == State::Training || m_state == State::Paused || m_state == State::Busy) {
        return;
    }
    if (m_hasModel && m_modelStep == 0 && specKey(spec) != m_modelSpec) {
        QMetaObject::invokeMethod(m_worker, "reset", Qt::QueuedConnection);  // the form changed
        m_hasModel = false;
    }
    if (!m_hasModel) {
        m_modelSpec = specKey(spec);
    }
    m_worker->setPaused(false);
    m_worker->clearStop();
    m_hasModel = true;
    setState(State::Training);
    QMetaObject::invokeMethod(m_worker, "train", Qt::QueuedConnection, Q_ARG(nope::RunSpec, spec),
                              Q_ARG(QString, runFolder));
}

void TrainingController::pause() {
    if (m_state == State::Training) {
        m_worker->setPaused(true);
        setState(State::Paused);
    }
}

void TrainingController::resume() {
    if (m_state == State::Paused) {
        m_worker->setPaused(false);
        setState(State::Training);
    }
}

void TrainingController::stop() {
    if (m_state == State::Training || m_state == State::Paused || m_state == State::Busy) {
        m_worker->requestStop();
        m_worker->setPaused(false);
    }
}

void TrainingController::reset() {
    stop();
    nextGeneration();  // whatever the old run still sends is dropped
    QMetaObject::invokeMethod(m_worker, "reset", Qt::QueuedConnection);
    m_hasModel = false;
    m_modelStep = 0;
    if (m_state != State::Training && m_state != State::Paused) {
        setState(State::Empty);
    }
}

void TrainingController::saveCheckpoint(const QString& path) {
    if (m_state == State::Training || m_state == State::Paused) {
        // the worker thread is in the run: save between two steps (at once while paused)
        if (m_worker->saveDuringRun(path)) {
            Q_EMIT status(QString("saving %1 after the current step...").arg(path));
        }
        return;
    }
    QMetaObject::invokeMethod(m_worker, "saveCheckpoint", Qt::QueuedConnection,
                              Q_ARG(QString, path));
}

void TrainingController::loadCheckpoint(const QString& path) {
    if (m_state == State::Training || m_state == State::Paused) {
        return;
    }
    nextGeneration();
    setState(State::Busy);
    QMetaObject::invokeMethod(m_worker, "loadCheckpoint", Qt::QueuedConnection,
                              Q_ARG(QString, path));
}

void TrainingController::openModel(const QString& path, const RunSpec& spec) {
    if (m_state == State::Training || m_state == State::Paused || m_state == State::Busy) {
        return;
    }
    m_hasModel = false;
    m_modelStep = 0;
    nextGeneration();
    setState(State::Busy);
    QMetaObject::invokeMethod(m_worker, "openModel", Qt::QueuedConnection, Q_ARG(QString, path),
                              Q_ARG(nope::RunSpec, spec));
}

void TrainingController::runProbes(const ProbeConfig& config) {
    if (m_state == State::Training || m_state == State::Paused) {
        m_worker->probeDuringRun(config);  // between two steps, or at once while paused
        return;
    }
    if (m_state != State::Ready) {
        return;
    }
    m_worker->clearStop();
    setState(State::Busy);
    QMetaObject::invokeMethod(m_worker, "runProbes", Qt::QueuedConnection,
                              Q_ARG(nope::ProbeConfig, config));
}

bool TrainingController::shutdown(int milliseconds) {
    if (!m_thread.isRunning()) {
        return true;
    }
    m_worker->requestStop();
    m_worker->setPaused(false);
    m_thread.quit();  // runs once the worker returns to its event loop
    if (!m_thread.wait(QDeadlineTimer(milliseconds))) {
        return false;
    }
    // The worker's last signals are still queued and will never be needed: the run is over.
    setState(m_hasModel ? State::Ready : State::Empty);
    return true;
}

}  // namespace nope::gui
