// Trainer::run, the training loop, in labelled phases: the model at initialization, then per
// step: (1) between steps: queued work, pause and stop (RunControl); (2) one optimizer step;
// (3) evaluation and the stop conditions it decides; (4) a snapshot with the analysis and, when
// due, the probes; (5) the end of the run.
#include <chrono>
#include <cmath>

#include "training/data_parallel.h"
#include "training/lr_schedule.h"
#include "training/trainer.h"
#include "util/format.h"
#include "util/runtime.h"
#include "util/stopwatch.h"

namespace nope {

namespace {

// Throughput over the steps since the last reset (the mean losses are the Trainer's sums, which
// a checkpoint keeps across a resume).
struct Window {
    double seconds = 0.0;
    int steps = 0;
    void add(double s) {
        seconds += s;
        ++steps;
    }
    double tokensPerSecond(int64_t tokensPerStep) const {
        return seconds > 0 ? double(tokensPerStep) * steps / seconds : 0.0;
    }
};

}  // namespace

// What rank 0 decides after a step, for every rank.
enum class Trainer::Verdict : int { Go = 0, Reached = 1, OutOfTime = 2, Stopped = 3 };

struct Trainer::Loop {
    Loop(const TrainerCallbacks& c, int first, int64_t tokens)
        : callbacks(c), firstStep(first), tokensPerStep(tokens) {}
    const TrainerCallbacks& callbacks;
    int firstStep;
    int64_t tokensPerStep;
    Window sinceEval;
    Window sinceSnapshot;
    bool best = false;      // the last evaluation set a new best
    int lastSnapshot = -1;  // the step of the last snapshot delivered in this session
    Window sinceTick;       // ... and the ticks' throughput and loss (TrainerCallbacks::ticked)
    double tickLossSum = 0.0;
    int tickLossSteps = 0;
    std::optional<SteadyClock::time_point> lastTick;  // none before the session's first tick
    void stepEnded(int step) const {
        if (callbacks.stepEnded) {
            callbacks.stepEnded(step);
        }
    }
};

TrainOutcome Trainer::run(const TrainerCallbacks& callbacks) {
    applyThreadCount(m_trainConfig.threads);
    struct ClearStop {  // a stop ends this run only; a stop asked before it starts still counts
        RunControl& control;
        ~ClearStop() { control.clearStop(); }
    } clearStop{*m_control};
    Loop loop(callbacks, m_step, tokensPerStep());
    struct Session {  // this session's wall time joins the run's when it ends, however it ends
        Trainer& trainer;
        ~Session() {
            trainer.m_secondsBefore = trainer.runSeconds();
            trainer.m_sessionStart.reset();
        }
    } session{*this};
    m_sessionStart = SteadyClock::now();
    const bool lead = !m_parallel || m_parallel->lead();
    auto stopped = [this, &loop, lead] {
        if (lead) {
            stopSnapshot(loop);
        }
        return outcome(StopReason::Stopped, "stopped");
    };

    // A run resumed from the checkpoint of the evaluation that ended it (killed while it wrote
    // its final scores) ends as it did.
    if (m_step > 0 && m_lastEval.step == m_step &&
        m_lastEval.accuracy > m_trainConfig.stopAccuracy) {
        return outcome(StopReason::ReachedAccuracy,
                       "test accuracy " + fixed(m_lastEval.accuracy, 2) + "% had passed " +
                           fixed(m_trainConfig.stopAccuracy, 1) + "% at step " +
                           std::to_string(m_step.load()));
    }
    // (0) The model at initialization. Under data parallelism rank 0 alone evaluates and
    // snapshots, and its verdict is every rank's.
    if (m_step == 0) {
        Verdict verdict = Verdict::Go;
        if (lead && (!evaluatePhase(loop) || !snapshotPhase(loop, /*final=*/false))) {
            verdict = Verdict::Stopped;
        }
        if (m_parallel) {
            verdict = static_cast<Verdict>(m_parallel->broadcastFromLead(int(verdict)));
        }
        if (verdict == Verdict::Stopped) {
            return stopped();
        }
        loop.stepEnded(0);
    }
    while (m_step < m_trainConfig.steps) {
        // (1) Between steps; a stop on any rank stops them all. A pause first says where the
        // model stopped, so that its viewers name the step the paused weights are at.
        bool stop = !m_control->proceed([this, &loop] { tick(loop, /*now=*/true); });
        if (m_parallel) {
            stop = m_parallel->sum({stop ? 1.0 : 0.0}).front() > 0;
        }
        if (stop) {
            return stopped();
        }
        // (2) One optimizer step.
        if (auto failed = stepPhase(loop)) {
            return *failed;
        }
        // (3) and (4)
        Verdict verdict = lead ? evaluateAndSnapshot(loop) : Verdict::Go;
        if (m_parallel) {
            verdict = static_cast<Verdict>(m_parallel->broadcastFromLead(int(verdict)));
        }
        if (verdict == Verdict::Stopped) {
            return stopped();
        }
        loop.stepEnded(m_step);
        tick(loop);
        // (5) The end of the run.
        const std::string at = " at step " + std::to_string(m_step.load());
        if (verdict == Verdict::Reached) {
            return outcome(StopReason::ReachedAccuracy,
                           lead ? "test accuracy " + fixed(m_lastEval.accuracy, 2) + "% passed " +
                                      fixed(m_trainConfig.stopAccuracy, 1) + "%" + at
                                : "rank 0's test accuracy passed " +
                                      fixed(m_trainConfig.stopAccuracy, 1) + "%" + at);
        }
        if (verdict == Verdict::OutOfTime) {
            return outcome(StopReason::TimeLimit, "time limit of " +
                                                      fixed(m_trainConfig.timeLimitMinutes, 1) +
                                                      " minutes reached" + at);
        }
    }
    return outcome(StopReason::Completed, "completed " + std::to_string(m_step.load()) + " steps");
}

// (3) Evaluation and the stops it decides, then (4) a snapshot; a new best always gets one, so
// that the best checkpoint can be browsed.
Trainer::Verdict Trainer::evaluateAndSnapshot(Loop& loop) {
    const bool last = m_step == m_trainConfig.steps;
    bool reached = false;
    loop.best = false;
    if (m_step % m_trainConfig.evalEvery == 0 || last) {
        if (!evaluatePhase(loop)) {
            return Verdict::Stopped;
        }
        reached = m_lastEval.accuracy > m_trainConfig.stopAccuracy;
    }
    const bool outOfTime = m_trainConfig.timeLimitMinutes > 0 &&
                           sessionSeconds() > 60.0 * m_trainConfig.timeLimitMinutes;
    if (outOfTime && !reached && !last && m_lastEval.step != m_step) {
        if (!evaluatePhase(loop)) {
            return Verdict::Stopped;
        }
        reached = m_lastEval.accuracy > m_trainConfig.stopAccuracy;
    }
    const bool final = last || reached || outOfTime;
    if (m_step % m_trainConfig.snapshotEvery == 0 || final || loop.best) {
        if (!snapshotPhase(loop, final)) {
            return Verdict::Stopped;
        }
    }
    if (reached) {
        return Verdict::Reached;
    }
    return outOfTime && !last ? Verdict::OutOfTime : Verdict::Go;
}

std::optional<TrainOutcome> Trainer::stepPhase(Loop& loop) {
    const auto stepStart = SteadyClock::now();
    const StepResult step = trainStep(m_step);
    const double seconds = secondsSince(stepStart);
    if (!step.finite()) {
        const bool lossBad = !std::isfinite(step.loss);
        const double bad = lossBad ? step.loss : step.gradNorm;
        return outcome(StopReason::NonFinite,
                       std::string(lossBad ? "the loss" : "the gradient norm") + " became " +
                           (std::isnan(bad) ? "NaN" : "infinite") + " at step " +
                           std::to_string(m_step.load() + 1) +
                           "; training stopped, earlier checkpoints are kept (try a lower "
                           "--lr or fp32)");
    }
    ++m_step;
    loop.sinceEval.add(seconds);
    loop.sinceSnapshot.add(seconds);
    loop.sinceTick.add(seconds);
    loop.tickLossSum += step.loss;
    ++loop.tickLossSteps;
    m_snapshotLossSum += step.loss;
    ++m_snapshotLossSteps;
    m_evalLossSum += step.loss;
    ++m_evalLossSteps;
    return std::nullopt;
}

// Evaluation checks the stop flag between batches.
bool Trainer::evaluatePhase(Loop& loop) {
    EvalResult result = m_evaluator->evaluate(*m_model, m_control->stopFlag());
    if (result.cancelled) {
        return false;
    }
    result.step = m_step;
    m_lastEval = result;
    loop.best = m_best.offer(result.accuracy, result.testLoss, m_step, *m_model);
    if (loop.callbacks.evaluated) {
        // the loss over the steps since the last evaluation, also those before a resume
        const double meanLoss =
            m_evalLossSteps > 0 ? m_evalLossSum / m_evalLossSteps : std::nan("");
        loop.callbacks.evaluated(
            progress(meanLoss, loop.sinceEval.tokensPerSecond(loop.tokensPerStep), sessionSeconds(),
                     loop.firstStep),
            loop.best);
    }
    loop.sinceEval = Window{};
    m_evalLossSum = 0.0;
    m_evalLossSteps = 0;
    return true;
}

// The analysis checks the stop flag between batches, the probes between epochs. Probes run every
// probeEvery snapshots (by step, so that a resumed run keeps the rhythm) and in the final one.
bool Trainer::snapshotPhase(Loop& loop, bool final) {
    if (loop.callbacks.snapshot) {
        // the loss over the steps since the last snapshot, also those before a resume
        const double meanLoss =
            m_snapshotLossSteps > 0 ? m_snapshotLossSum / m_snapshotLossSteps : std::nan("");
        Snapshot s = progress(meanLoss, loop.sinceSnapshot.tokensPerSecond(loop.tokensPerStep),
                              sessionSeconds(), loop.firstStep);
        s.analysis = analyzeOn(m_prompts, m_control->stopFlag(), m_trainConfig.snapshotPrecision);
        if (s.analysis.cancelled) {
            return false;
        }
        const int every = m_trainConfig.probeEvery;
        if (every > 0 && (final || m_step % (every * m_trainConfig.snapshotEvery) == 0)) {
            s.probes = probe(m_trainConfig.probe, m_control->stopFlag());
            if (s.probes.cancelled) {
                s.probes = ProbeReport{};  // a stop: the snapshot goes out without probes
            }
        }
        loop.callbacks.snapshot(s);
        loop.lastSnapshot = m_step;
    }
    loop.sinceSnapshot = Window{};
    m_snapshotLossSum = 0.0;
    m_snapshotLossSteps = 0;
    return true;
}

void Trainer::stopSnapshot(Loop& loop) {
    // Nothing new to show: a resumed run stopped before its first step ends where its folder does.
    const bool stepsSinceStart = m_step > loop.firstStep || m_step == 0;
    if (!loop.callbacks.snapshot || loop.lastSnapshot == m_step || !stepsSinceStart) {
        return;
    }
    if (loop.callbacks.stopping) {
        loop.callbacks.stopping(m_step);  // e.g. the checkpoint, before the analysis's time
    }
    const double meanLoss =
        m_snapshotLossSteps > 0 ? m_snapshotLossSum / m_snapshotLossSteps : std::nan("");
    Snapshot s = progress(meanLoss, loop.sinceSnapshot.tokensPerSecond(loop.tokensPerStep),
                          sessionSeconds(), loop.firstStep);
    // not cancelled by the stop that asked for it: one analysis of the fixed prompts
    s.analysis = analyzeOn(m_prompts, nullptr, m_trainConfig.snapshotPrecision);
    loop.callbacks.snapshot(s);
    loop.lastSnapshot = m_step;
}

void Trainer::tick(Loop& loop, bool now) {
    if (!loop.callbacks.ticked) {
        return;
    }
    if (!now && loop.lastTick && secondsSince(*loop.lastTick) < kTickSeconds) {
        return;
    }
    const double meanLoss =
        loop.tickLossSteps > 0 ? loop.tickLossSum / loop.tickLossSteps : std::nan("");
    loop.callbacks.ticked(progress(meanLoss, loop.sinceTick.tokensPerSecond(loop.tokensPerStep),
                                   sessionSeconds(), loop.firstStep));
    loop.lastTick = SteadyClock::now();
    loop.sinceTick = Window{};
    loop.tickLossSum = 0.0;
    loop.tickLossSteps = 0;
}

}  // namespace nope
