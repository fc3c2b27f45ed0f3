#include "gui/call_queue.h"

#include <QMetaObject>

namespace nope::gui {

void CallQueue::post(std::function<void()> call) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_calls.push_back(std::move(call));
    }
    // By name: the event is made inside Qt, and carries nothing of the caller's.
    [[maybe_unused]] const bool queued =
        QMetaObject::invokeMethod(this, "runNext", Qt::QueuedConnection);
    Q_ASSERT(queued);  // runNext is found by name: a renamed slot would leave calls waiting
}

void CallQueue::runNext() {
    std::function<void()> call;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_calls.empty()) {
            return;
        }
        call = std::move(m_calls.front());
        m_calls.pop_front();
    }
    call();
}

}  // namespace nope::gui
