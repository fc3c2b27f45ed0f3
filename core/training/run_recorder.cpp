#include "training/run_recorder.h"

#include "run/snapshot_io.h"
#include "util/files.h"

namespace nope {

namespace fs = std::filesystem;

RunRecorder::RunRecorder(Trainer& trainer, const fs::path& dir, const nlohmann::json& config,
                         bool continuing)
    : m_trainer(trainer), m_writer(dir, continuing, trainer.step()) {
    m_writer.writeConfig(config);
    const fs::path first = dir / "snapshots" / snapshotFileName(0);
    if (continuing && fs::exists(first)) {
        m_init = snapshotFromJson(nlohmann::json::parse(readFile(first))).analysis;
    }
}

TrainerCallbacks RunRecorder::wrap(TrainerCallbacks inner) {
    TrainerCallbacks outer;
    outer.evaluated = [this, inner](const Snapshot& progress, bool best) {
        m_trainer.saveCheckpoint(m_writer.checkpointPath());
        if (best) {
            m_trainer.saveCheckpoint(m_writer.bestPath());
        }
        if (inner.evaluated) {
            inner.evaluated(progress, best);
        }
    };
    outer.snapshot = [this, inner](const Snapshot& s) {
        m_writer.add(s);
        if (s.step == 0) {
            m_init = s.analysis;
        }
        if (inner.snapshot) {
            inner.snapshot(s);
        }
    };
    return outer;
}

RunRecorder::Final RunRecorder::finish() {
    m_trainer.saveCheckpoint(m_writer.checkpointPath());
    Final out;
    out.trained = m_trainer.analyzeBest();
    out.init = m_init.rows.empty() ? out.trained : m_init;
    m_writer.writeFinalScores(out.init, out.trained);
    m_trainer.saveBestWeightsForPython(m_writer.weightsPath());
    return out;
}

}  // namespace nope
