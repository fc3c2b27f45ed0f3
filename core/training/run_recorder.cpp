#include "training/run_recorder.h"

#include "run/snapshot_io.h"
#include "util/files.h"

namespace nope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInitAnalysis = RunFiles::kInitAnalysis;

}  // namespace

RunRecorder::RunRecorder(Trainer& trainer, const fs::path& dir, const nlohmann::json& config,
                         bool continuing, const fs::path& initSource)
    : m_trainer(trainer), m_writer(dir, continuing, trainer.step()) {
    m_writer.writeConfig(config);
    // the init analysis: measured for a new run, else read back (a folder loaded into the window
    // passes its own as initSource); unknown, the final table leaves init out
    const fs::path own = dir / kInitAnalysis;
    if (!continuing && trainer.step() == 0) {
        m_init = trainer.analyze(trainer.trainConfig().finalSamples);
    } else if (fs::exists(own)) {
        m_init = analysisFromJson(nlohmann::json::parse(readFile(own)));
        return;
    } else if (!initSource.empty() && fs::exists(initSource / kInitAnalysis)) {
        m_init = analysisFromJson(nlohmann::json::parse(readFile(initSource / kInitAnalysis)));
    } else {
        return;
    }
    writeFileAtomic(own, toJson(m_init).dump() + "\n");
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
        if (inner.snapshot) {
            inner.snapshot(s);
        }
    };
    return outer;
}

RunRecorder::Final RunRecorder::finish(const TrainOutcome& outcome) {
    if (outcome.reason != StopReason::NonFinite) {
        m_trainer.saveCheckpoint(m_writer.checkpointPath());
    }
    Final out;
    out.trained = m_trainer.analyzeBest(m_trainer.trainConfig().finalSamples);
    out.init = m_init;
    m_writer.writeFinalScores(out.init, out.trained);
    m_trainer.saveBestWeightsForPython(m_writer.weightsPath());
    return out;
}

}  // namespace nope
