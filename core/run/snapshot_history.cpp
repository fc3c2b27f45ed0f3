#include "run/snapshot_history.h"

#include <algorithm>
#include <cmath>

namespace nope {

void SnapshotHistory::reset(std::vector<Snapshot> snapshots) {
    m_snapshots = std::move(snapshots);
    m_evaluations.clear();
    m_live.clear();
    m_extraProbeStep = -1;
    m_extraProbes = ProbeReport{};
}

size_t SnapshotHistory::add(const Snapshot& snapshot) {
    auto it = std::lower_bound(m_snapshots.begin(), m_snapshots.end(), snapshot.step,
                               [](const Snapshot& s, int step) { return s.step < step; });
    if (it != m_snapshots.end() && it->step == snapshot.step) {
        *it = snapshot;
    } else {
        it = m_snapshots.insert(it, snapshot);
    }
    return static_cast<size_t>(it - m_snapshots.begin());
}

void SnapshotHistory::addProbes(const ProbeReport& report, int step) {
    auto it = std::find_if(m_snapshots.begin(), m_snapshots.end(),
                           [step](const Snapshot& s) { return s.step == step; });
    if (it != m_snapshots.end()) {
        it->probes = report;
    } else {
        m_extraProbeStep = step;
        m_extraProbes = report;
    }
}

namespace {

// Inserts `e` in step order into `points`, replacing one of the same step.
void insertByStep(std::vector<EvalPoint>& points, const EvalPoint& e) {
    auto it = std::lower_bound(points.begin(), points.end(), e.step,
                               [](const EvalPoint& p, int step) { return p.step < step; });
    if (it != points.end() && it->step == e.step) {
        *it = e;
    } else {
        points.insert(it, e);
    }
}

}  // namespace

void SnapshotHistory::addEvaluation(const EvalPoint& evaluation) {
    insertByStep(m_evaluations, evaluation);
}

void SnapshotHistory::setEvaluations(std::vector<EvalPoint> evaluations) {
    m_evaluations.clear();
    for (const EvalPoint& e : evaluations) {
        insertByStep(m_evaluations, e);
    }
}

void SnapshotHistory::addLiveLoss(const LossPoint& point) {
    if (!std::isfinite(point.loss) || (!m_live.empty() && point.step <= m_live.back().step)) {
        return;
    }
    m_live.push_back(point);
}

std::vector<LossPoint> SnapshotHistory::liveLosses() const {
    const int last = m_snapshots.empty() ? -1 : m_snapshots.back().step;
    std::vector<LossPoint> out;
    for (const LossPoint& p : m_live) {
        if (p.step > last) {
            out.push_back(p);
        }
    }
    return out;
}

std::vector<EvalPoint> SnapshotHistory::evaluations() const {
    std::vector<EvalPoint> points = m_evaluations;
    for (const Snapshot& s : m_snapshots) {
        // A snapshot carries the latest evaluation, which may be an earlier step's.
        if (std::isfinite(s.eval.testLoss)) {
            insertByStep(points, {s.eval.step, s.eval.testLoss, s.eval.accuracy});
        }
    }
    return points;
}

const Snapshot* SnapshotHistory::best() const {
    const Snapshot* best = nullptr;
    for (const Snapshot& s : m_snapshots) {
        if (s.best) {
            best = &s;  // bests only improve, so the last one flagged is the best
        }
    }
    return best;
}

const ProbeReport* SnapshotHistory::initProbes() const {
    if (!m_snapshots.empty() && m_snapshots.front().step == 0 &&
        !m_snapshots.front().probes.empty()) {
        return &m_snapshots.front().probes;
    }
    return m_extraProbeStep == 0 ? &m_extraProbes : nullptr;
}

const ProbeReport* SnapshotHistory::probesAt(size_t index, int* step) const {
    const ProbeReport* found = nullptr;
    *step = -1;
    const bool latest = index + 1 >= m_snapshots.size();
    const int shownStep = index < m_snapshots.size() ? m_snapshots[index].step : -1;
    for (size_t i = 0; i < m_snapshots.size() && (latest || i <= index); ++i) {
        if (!m_snapshots[i].probes.empty()) {
            found = &m_snapshots[i].probes;
            *step = m_snapshots[i].step;
        }
    }
    if (m_extraProbeStep > *step && (latest || m_extraProbeStep <= shownStep)) {
        found = &m_extraProbes;
        *step = m_extraProbeStep;
    }
    return found;
}

}  // namespace nope
