// What a run will cost on this machine, measured before it starts: the step timed (in parts as
// the run will take it), an evaluation, a snapshot, the init and final analyses and a probe run
// each timed on a sample and scaled, and their counts over the run. `train --check` prints it in
// full; the window's form shows the same estimate, from lighter timings, when a run will take
// more than an hour.
#pragma once

#include <string>

#include "training/trainer.h"

namespace nope {

struct RunCostOptions {
    double stepSeconds = 5.0;  // how long to time the step (Trainer::timeStep)
    int stepRows = 0;          // rows of each timed pass; 0: a whole micro-batch
    int evalExamples = 256;    // test examples of the timed evaluation, scaled to the run's
    bool probeEpochs = true;   // time the probes (two epochs: the first and one more)
};

struct RunCost {
    StepTiming step;
    int steps = 0;            // still to run
    double evaluation = 0.0;  // seconds of one evaluation (scaled to its examples)
    int evalExamples = 0;     // the run's evaluation examples
    int evalTimed = 0;        // how many were timed
    int evaluations = 0;
    double snapshot = 0.0;  // one snapshot's analysis
    int snapshots = 0;
    double analysis = 0.0;  // the init or the final analysis (the run does both)
    double probe = 0.0;     // one run of the probes (0: not timed or none)
    int probes = 0;
    double seconds() const {
        return step.secondsPerStep * steps + evaluation * evaluations + snapshot * snapshots +
               2.0 * analysis + probe * probes;
    }
};

// The multiply-adds of a run's matrix products, counted twice (FLOPs): 6 x parameters x tokens a
// step, as Kaplan et al. count training, over the steps. A floor on its cost that needs no model:
// the window times only runs whose products alone could take an hour at kSlowestFlops.
double runProductFlops(const RunSpec& spec);
inline constexpr double kSlowestFlops = 50e9;  // quick reversal: 95e9 on 2 Zen 3 cores

// Times the parts of a run of `trainer`, which is left unfit to train (Trainer::timeStep): build
// one for it.
RunCost estimateRunCost(Trainer& trainer, const RunCostOptions& options = {});

// "about 46h46m on this machine (2,000 steps at 83.1 s, 9 evaluations 28m14s, ...)"
std::string describe(const RunCost& cost);

}  // namespace nope
