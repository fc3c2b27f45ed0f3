// Calls handed from one of the window's threads to another: each runs on the queue's thread, in
// the order posted, as one event of that thread's event loop (so in order with the Qt events
// posted around it). The calls wait in a queue under a std::mutex and Qt's event only says "run
// the next one", so what a caller did before post() is ordered before the call in a way
// ThreadSanitizer sees (Debian's Qt is not instrumented; see tests/sanitizers/tsan.supp).
#pragma once

#include <QObject>

#include <deque>
#include <functional>
#include <mutex>

namespace nope::gui {

class CallQueue : public QObject {
    Q_OBJECT

public:
    using QObject::QObject;

    // From any thread: `call` runs on this object's thread. Calls still queued when the queue is
    // destroyed are dropped.
    void post(std::function<void()> call);

private:
    Q_INVOKABLE void runNext();

    std::mutex m_mutex;
    std::deque<std::function<void()>> m_calls;
};

}  // namespace nope::gui
