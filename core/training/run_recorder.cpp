#include "training/run_recorder.h"

#include "run/snapshot_io.h"
#include "util/error_text.h"
#include "util/files.h"

namespace nope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInitAnalysis = RunFiles::kInitAnalysis;

}  // namespace

RunRecorder::RunRecorder(Trainer& trainer, const fs::path& dir, const nlohmann::json& config,
                         bool continuing, const fs::path& initSource)
    : m_trainer(trainer),
      m_writer(dir, continuing, trainer.step()),
      m_lastEndedStep(trainer.step()) {
    m_writer.writeConfig(config);
    // the init analysis: measured for a new run, else read back (a folder loaded into the window
    // passes its own as initSource); unknown, the final table leaves init out
    const fs::path own = dir / kInitAnalysis;
    if (continuing && fs::exists(own)) {
        m_init = analysisFromJson(nlohmann::json::parse(readFile(own)));
        return;
    } else if (trainer.step() == 0) {
        m_init = trainer.analyze(trainer.trainConfig().finalSamples);
    } else if (!initSource.empty() && fs::exists(initSource / kInitAnalysis)) {
        m_init = analysisFromJson(nlohmann::json::parse(readFile(initSource / kInitAnalysis)));
    } else {
        return;
    }
    writeFileAtomic(own, toJson(m_init).dump() + "\n");
}

TrainerCallbacks RunRecorder::wrap(TrainerCallbacks inner) {
    TrainerCallbacks outer;
    // The checkpoints of an evaluated step are written when the step has ended, after its
    // snapshot's files: a run killed at any point resumes from a checkpoint whose step the tables
    // and snapshot files record in full (what came after is dropped and redone).
    outer.evaluated = [this, inner](const Snapshot& progress, bool best) {
        guarded([&] { m_writer.addEvaluation(progress); });
        m_checkpointDue = true;
        m_bestDue = m_bestDue || best;
        if (inner.evaluated) {
            inner.evaluated(progress, best);
        }
    };
    outer.snapshot = [this, inner](const Snapshot& s) {
        guarded([&] { m_writer.add(s); });
        if (inner.snapshot) {
            inner.snapshot(s);
        }
    };
    outer.ticked = inner.ticked;  // nothing to record between snapshots
    // a stop's last snapshot takes an analysis: the checkpoint of the step it stopped at is
    // written first, so that a second Ctrl-C (or a kill) during it loses no step
    outer.stopping = [this, inner](int step) {
        if (step == m_lastEndedStep) {
            guarded([&] { m_trainer.saveCheckpoint(m_writer.checkpointPath()); });
            m_checkpointDue = false;
        }
        if (inner.stopping) {
            inner.stopping(step);
        }
    };
    outer.stepEnded = [this, inner](int step) {
        guarded([&] { saveDueCheckpoints(); });
        m_lastEndedStep = step;
        if (inner.stepEnded) {
            inner.stepEnded(step);
        }
    };
    return outer;
}

// A file that cannot be written (a full disk, a folder made read-only) stops the run: nothing more
// is written, and finish() reports the file. What was written before stays whole.
template <class Write>
void RunRecorder::guarded(Write&& write) {
    if (!m_writeError.empty()) {
        return;
    }
    try {
        write();
    } catch (const std::exception& e) {
        m_writeError = errorText(e);
        m_writeErrorStep = m_trainer.step();
        m_trainer.control().requestStop();
    }
}

// best.pt before checkpoint.pt: a kill between the two leaves a best.pt ahead of the checkpoint,
// which a resume ignores (Trainer::loadBest) and the resumed run writes again.
void RunRecorder::saveDueCheckpoints() {
    if (m_bestDue) {
        m_trainer.saveCheckpoint(m_writer.bestPath());
    }
    if (m_checkpointDue) {
        m_trainer.saveCheckpoint(m_writer.checkpointPath());
    }
    m_checkpointDue = m_bestDue = false;
}

RunRecorder::Final RunRecorder::finish(const TrainOutcome& outcome) {
    if (!m_writeError.empty()) {
        throw std::runtime_error(m_writeError + "; training stopped at step " +
                                 std::to_string(m_writeErrorStep) +
                                 ". The run folder keeps what was written before; resume the run "
                                 "once the folder can be written again");
    }
    // The last checkpoint, unless the run stopped inside a step (a stop during its evaluation or
    // snapshot: what the step records is incomplete, so the run resumes from the checkpoint
    // before it) or at a non-finite loss (the last good checkpoint stays).
    const bool inside =
        outcome.reason == StopReason::Stopped && m_trainer.step() != m_lastEndedStep;
    if (outcome.reason != StopReason::NonFinite && !inside) {
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
