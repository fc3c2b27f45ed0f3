// Helpers of the window's tests: a tiny run and waiting for the event loop.
#pragma once

#include <QElapsedTimer>
#include <QTest>

#include "run/run_spec.h"
#include "settings/settings.h"

namespace nope::gui_test {

// A run small enough for a few seconds on two cores.
inline RunSpec tinySpec() {
    RunSpec spec;
    spec.task = TaskKind::Addition;
    spec.preset = "custom";
    spec.model.nLayer = 2;
    spec.model.nHead = 2;
    spec.model.nEmbd = 32;
    spec.model.dropout = 0.0;
    spec.train.objective = Objective::Answer;
    spec.train.batchSize = 16;
    spec.train.steps = 20;
    spec.train.decaySteps = 20;
    spec.train.warmupSteps = 2;
    spec.train.learningRate = 1e-3;
    spec.train.evalEvery = 10;
    spec.train.evalSamples = 30;
    spec.train.snapshotEvery = 5;
    spec.train.analysisSamples = 8;
    spec.train.keepPrompts = 2;
    spec.train.threads = 1;
    spec.train.data = {300, 100, 3};
    return spec;
}

// The tiny run with another number of steps (the learning rate decays over all of them).
inline RunSpec tinySpec(int steps) {
    RunSpec spec = tinySpec();
    spec.train.steps = spec.train.decaySteps = steps;
    return spec;
}

// Processes events until `done` or the timeout; returns done(). The timeout only guards against
// a test that would hang: generous, also for a build under a sanitizer (several times slower).
template <typename F>
inline bool waitFor(F done, int milliseconds = 240000) {
    QElapsedTimer clock;
    clock.start();
    while (!done() && clock.elapsed() < milliseconds) {
        QTest::qWait(20);
    }
    return done();
}

}  // namespace nope::gui_test
