// How what one command of the worker produces (an initialization, a run, a load, probes) reaches
// the window: the controller makes a RunReceiver on the window's thread for each new model and
// hands its RunChannel to every command on that model; the worker sends through the channel. A
// reset or a newer model closes the channel and disconnects the receiver: what the old command
// still had on its way goes nowhere, and nothing is sent after. No generation numbers.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <mutex>
#include <utility>

#include "gui/call_queue.h"
#include "gui/meta_types.h"
#include "run/run_spec.h"
#include "run/snapshot.h"

namespace nope::gui {

// Lives on the window's thread; the controller connects to its signals.
class RunReceiver : public QObject {
    Q_OBJECT

public:
    explicit RunReceiver(QObject* parent = nullptr)
        : QObject(parent), m_calls(new CallQueue(this)) {}
    CallQueue* calls() const { return m_calls; }

Q_SIGNALS:
    void ready(const nope::gui::ModelReady& model);
    void snapshot(const nope::Snapshot& snapshot);  // with analysis
    void progress(const nope::Snapshot& progress);  // after each evaluation
    void tick(const nope::Snapshot& progress);      // about once a second during a run
    void finished(const QString& message, bool ok, bool stopped);  // training ended
    void failed(const QString& message);  // nothing changed, or nothing ran
    void status(const QString& message);
    void probes(const nope::ProbeReport& report, int step);
    void probeProgress(int done, int total);
    void promptAnalysis(const nope::PromptAnalysis& analysis);
    void promptFailed(const QString& message);  // the prompt's problem, for beside its field

private:
    CallQueue* m_calls;
};

// Thread-safe: the worker sends from its thread, the controller closes from the window's.
class RunChannel {
public:
    explicit RunChannel(RunReceiver* receiver) : m_receiver(receiver) {}

    void ready(const ModelReady& model) {
        send([=](RunReceiver* r) { Q_EMIT r->ready(model); });
    }
    void snapshot(const Snapshot& s) {
        send([=](RunReceiver* r) { Q_EMIT r->snapshot(s); });
    }
    void progress(const Snapshot& p) {
        send([=](RunReceiver* r) { Q_EMIT r->progress(p); });
    }
    void tick(const Snapshot& p) {
        send([=](RunReceiver* r) { Q_EMIT r->tick(p); });
    }
    void finished(const QString& message, bool ok, bool stopped) {
        send([=](RunReceiver* r) { Q_EMIT r->finished(message, ok, stopped); });
    }
    void failed(const QString& message) {
        send([=](RunReceiver* r) { Q_EMIT r->failed(message); });
    }
    void status(const QString& message) {
        send([=](RunReceiver* r) { Q_EMIT r->status(message); });
    }
    void probes(const ProbeReport& report, int step) {
        send([=](RunReceiver* r) { Q_EMIT r->probes(report, step); });
    }
    void probeProgress(int done, int total) {
        send([=](RunReceiver* r) { Q_EMIT r->probeProgress(done, total); });
    }
    void promptAnalysis(const PromptAnalysis& analysis) {
        send([=](RunReceiver* r) { Q_EMIT r->promptAnalysis(analysis); });
    }
    void promptFailed(const QString& message) {
        send([=](RunReceiver* r) { Q_EMIT r->promptFailed(message); });
    }

    // Whether what is sent still arrives (work for a closed channel's model is not wanted).
    bool isOpen() {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_receiver != nullptr;
    }

    // On the receiver's thread, before the receiver goes: nothing is sent after.
    void close() {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_receiver = nullptr;
    }

private:
    // Queues `deliver` to run on the receiver's thread, unless the channel is closed.
    template <typename Deliver>
    void send(Deliver deliver) {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (RunReceiver* r = m_receiver) {
            r->calls()->post([r, deliver = std::move(deliver)] { deliver(r); });
        }
    }

    std::mutex m_mutex;
    RunReceiver* m_receiver;
};

using Channel = std::shared_ptr<RunChannel>;

}  // namespace nope::gui
