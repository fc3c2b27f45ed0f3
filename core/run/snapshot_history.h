// The snapshots of one run as the window holds them: in step order, one per step, with the probes
// run on demand beside them (what the slider scrubs through) and every test evaluation, also
// those between snapshots (what the loss and accuracy curves draw). Plain C++ on value types, so
// that its rules (a later snapshot of a step replaces the earlier one, which probes belong to which
// step, the best snapshot) are tested without a window.
#pragma once

#include <cstddef>
#include <vector>

#include "run/snapshot.h"

namespace nope {

// One evaluation of the test set, as the curves draw it.
struct EvalPoint {
    int step = 0;
    double testLoss = 0.0;  // NaN where the run folder's row has none
    double accuracy = 0.0;  // percent
};

// The training loss of the steps since the previous point, as a run reports it about once a
// second between snapshots (the live tail of the loss curve).
struct LossPoint {
    int step = 0;
    double loss = 0.0;
};

class SnapshotHistory {
public:
    // Starts over with `snapshots` (sorted by step, as a run folder reads them).
    void reset(std::vector<Snapshot> snapshots = {});
    // Adds a snapshot in step order; one of a step already held replaces it (Train's step-0
    // snapshot replaces Initialize's). Returns its index.
    size_t add(const Snapshot& snapshot);
    // Probes run on demand on the weights of `step`: kept with that step's snapshot, or beside
    // the history when there is none (a paused run between snapshots).
    void addProbes(const ProbeReport& report, int step);
    // An evaluation between snapshots (the run's progress after each one); one of a step
    // already held replaces it.
    void addEvaluation(const EvalPoint& evaluation);
    // The evaluations a run folder lists (evaluations.csv), in place of those added before.
    void setEvaluations(std::vector<EvalPoint> evaluations);
    // Every evaluation known, by step: the snapshots' own and the added ones.
    std::vector<EvalPoint> evaluations() const;
    // A live training loss between snapshots; the next snapshot replaces those before it, so
    // that the curve drawn is the run folder's plus the steps since its last snapshot.
    void addLiveLoss(const LossPoint& point);
    // The live losses past the last snapshot, by step.
    std::vector<LossPoint> liveLosses() const;

    bool empty() const { return m_snapshots.empty(); }
    size_t size() const { return m_snapshots.size(); }
    const Snapshot& operator[](size_t index) const { return m_snapshots[index]; }
    const Snapshot& front() const { return m_snapshots.front(); }
    const Snapshot& back() const { return m_snapshots.back(); }
    const std::vector<Snapshot>& all() const { return m_snapshots; }

    // The snapshot of the best evaluation so far; nullptr before one.
    const Snapshot* best() const;
    // The probes of the model at initialization, when they ran.
    const ProbeReport* initProbes() const;
    // The newest probes at or before snapshot `index` (any index past the end: the newest of
    // all, on-demand ones included), and the step they belong to in `step` (-1 when none).
    const ProbeReport* probesAt(size_t index, int* step) const;

private:
    std::vector<Snapshot> m_snapshots;     // by step
    std::vector<EvalPoint> m_evaluations;  // by step, besides the snapshots'
    std::vector<LossPoint> m_live;         // by step, past the last snapshot
    int m_extraProbeStep = -1;             // on-demand probes of a step without a snapshot
    ProbeReport m_extraProbes;
};

}  // namespace nope
