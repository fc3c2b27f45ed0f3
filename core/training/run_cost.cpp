#include "training/run_cost.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "util/format.h"
#include "util/memory.h"
#include "util/stopwatch.h"

namespace nope {

namespace {

double timed(const std::function<void()>& work) {
    const auto start = SteadyClock::now();
    work();
    return secondsSince(start);
}

}  // namespace

double runProductFlops(const RunSpec& spec) {
    return 6.0 * double(parameterCount(spec.model)) * double(spec.train.batchSize) *
           double(trainingTokens(spec)) * double(spec.train.steps);
}

RunCost estimateRunCost(Trainer& trainer, const RunCostOptions& options) {
    const TrainConfig& t = trainer.trainConfig();
    RunCost cost;
    cost.step = trainer.timeStep(options.stepSeconds, options.stepRows);
    // an evaluation timed on some of its examples, scaled to all of them
    const std::vector<Example>& test = trainer.data().test;
    cost.evalExamples = t.evalSamples == 0 ? static_cast<int>(test.size()) : t.evalSamples;
    cost.evalTimed = std::max(1, std::min(cost.evalExamples, options.evalExamples));
    const std::vector<Example> sample(test.begin(), test.begin() + cost.evalTimed);
    Evaluator evaluator(trainer.task(), sample, sample, t.objective, t.windowLength,
                        t.precision == Precision::Bf16, trainer.model().parameters()[0].device());
    cost.evaluation = timed([&] { evaluator.evaluate(trainer.model()); }) *
                      double(cost.evalExamples) / double(cost.evalTimed);
    cost.snapshot = timed([&] { trainer.analyze(0, t.snapshotPrecision); });
    cost.analysis = timed([&] { trainer.analyze(t.finalSamples); });
    if (t.probeEvery > 0 && options.probeEpochs) {
        // the first epoch also captures the hidden states: one epoch, then two, the difference
        // an epoch after the first
        ProbeConfig shorter = t.probe;
        shorter.epochs = 1;
        const double one = timed([&] { trainer.probe(shorter); });
        cost.probe = one;
        if (t.probe.epochs > 1) {
            shorter.epochs = 2;
            const double two = timed([&] { trainer.probe(shorter); });
            cost.probe = one + std::max(0.0, two - one) * (t.probe.epochs - 1);
        }
    }
    cost.steps = std::max(0, t.steps - trainer.step());
    cost.evaluations = cost.steps / t.evalEvery + 1;
    cost.snapshots = cost.steps / t.snapshotEvery + 1;
    // at the start, every probeEvery snapshots, and in the last
    cost.probes = t.probeEvery > 0 ? cost.steps / (t.probeEvery * t.snapshotEvery) + 2 : 0;
    return cost;
}

std::string describe(const RunCost& c) {
    char step[32];
    std::snprintf(step, sizeof step, "%.3g s", c.step.secondsPerStep);
    std::string text =
        "about " + clockDuration(c.seconds()) + " on this machine (" + withCommas(c.steps) +
        " steps at " + step + ", " + std::to_string(c.evaluations) + " evaluations " +
        clockDuration(c.evaluation * c.evaluations) + ", " + std::to_string(c.snapshots) +
        " snapshots " + clockDuration(c.snapshot * c.snapshots);
    if (c.probes > 0) {
        text += ", " + std::to_string(c.probes) + " probe runs " +
                (c.probe > 0.0 ? clockDuration(c.probe * c.probes) : std::string("not timed"));
    }
    return text + ", init and final analyses " + clockDuration(2.0 * c.analysis) + ")";
}

}  // namespace nope
