#include "training/run_control.h"

namespace nope {

void RunControl::requestStop() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);  // no lost wake-up of a paused loop
        m_stop = true;
    }
    m_changed.notify_all();
}

void RunControl::setPaused(bool paused) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_paused = paused;
    }
    m_changed.notify_all();
}

void RunControl::post(std::function<void()> task) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_tasks.push_back(std::move(task));
    }
    m_changed.notify_all();
}

void RunControl::runPending() {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_tasks.empty()) {
        auto task = std::move(m_tasks.front());
        m_tasks.erase(m_tasks.begin());
        lock.unlock();
        task();
        lock.lock();
    }
}

bool RunControl::proceed(const std::function<void()>& onPause) {
    bool told = !onPause;
    for (;;) {
        runPending();
        std::unique_lock<std::mutex> lock(m_mutex);
        if (!told && m_paused.load() && !m_stop.load() && m_tasks.empty()) {
            told = true;
            lock.unlock();
            onPause();  // as the pause begins: whoever watches learns where the run waits
            continue;
        }
        m_changed.wait(lock,
                       [this] { return !m_paused.load() || m_stop.load() || !m_tasks.empty(); });
        if (m_tasks.empty()) {
            return !m_stop.load();
        }
    }
}

}  // namespace nope
