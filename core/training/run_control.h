// Pause, resume and stop of one run, and work queued for the training thread: one object shared
// by whoever drives the run (the CLI's Ctrl-C handler, the window's worker) and the trainer that
// obeys it between steps. Thread-safe; no LibTorch.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace nope {

class RunControl {
public:
    // Ends the run after the current step (or between batches of an evaluation, an analysis or
    // probes); wakes a paused run. Stays set until clearStop().
    void requestStop();
    // Only stores a flag: safe in a signal handler (a paused run sees it at its next wake-up).
    void requestStopFromSignal() noexcept { m_stop.store(true); }
    void clearStop() { m_stop.store(false); }
    bool stopRequested() const { return m_stop.load(); }
    // The flag itself, for work that checks it between batches.
    const std::atomic<bool>* stopFlag() const { return &m_stop; }

    void setPaused(bool paused);
    bool paused() const { return m_paused.load(); }

    // Queues a task for the training thread, which runs it between two steps, or at once while
    // paused.
    void post(std::function<void()> task);
    // Runs the queued tasks on the calling thread (the training thread), in order.
    void runPending();
    // The training thread, between steps: runs queued tasks, blocks while paused (still running
    // tasks as they come) and returns false when a stop was asked. `onPause`, when given, runs
    // once on the training thread as the pause begins, before the first wait.
    bool proceed(const std::function<void()>& onPause = {});

private:
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_paused{false};
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<std::function<void()>> m_tasks;  // guarded by m_mutex
};

}  // namespace nope
