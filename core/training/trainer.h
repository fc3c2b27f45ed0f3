// A run: builds the task data, the model and the optimizer from configs (or from a checkpoint),
// trains step by step (the loop and its phases are in train_loop.cpp), evaluates, analyses, and
// reports value-type snapshots through callbacks. Pause, resume, stop and queued work go through
// the run's RunControl, which other threads share; they act between steps. Only the thread that
// calls run() touches the model. The best weights so far are kept by a BestWeights.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "model/gpt.h"
#include "probe/probe_result.h"
#include "run/run_spec.h"
#include "run/snapshot.h"
#include "tasks/batch.h"
#include "tasks/dataset.h"
#include "training/adamw.h"
#include "training/batches.h"
#include "training/best_weights.h"
#include "training/checkpoint.h"
#include "training/evaluation.h"
#include "training/run_control.h"
#include "training/train_config.h"

namespace nope {

enum class StopReason {
    Completed,        // ran every step
    ReachedAccuracy,  // test accuracy passed the stop threshold
    Stopped,          // requestStop()
    TimeLimit,        // the run's wall-time limit passed
    NonFinite,        // the loss or the gradient norm became NaN or infinite
};
std::string toString(StopReason reason);

struct TrainOutcome {
    StopReason reason = StopReason::Completed;
    std::string message;  // one line for the user
    int step = 0;         // steps done when it ended
    double bestAccuracy = -1.0;
    int bestStep = -1;
};

struct TrainerCallbacks {
    // After every evaluation: the progress since the previous one with the new evaluation in
    // `eval` (its analysis is left empty), and whether it is the best so far.
    std::function<void(const Snapshot& progress, bool best)> evaluated;
    // Every snapshotEvery steps (and at step 0 and the last step), with the analysis.
    std::function<void(const Snapshot&)> snapshot;
    // After the model at initialization and after every step, once its evaluation and snapshot
    // (when due) are delivered: what a step records is complete.
    std::function<void(int step)> stepEnded;
    // After the first step of a session, then about once a second (kTickSeconds), and when the
    // loop stops for a pause: the step, the training loss and throughput since the previous
    // tick and the time left; `eval` is the latest evaluation, the analysis is left empty.
    std::function<void(const Snapshot& progress)> ticked;
    // A stop between snapshots, before the snapshot of the step it stopped at (an analysis that a
    // second stop does not end): what must be safe first is saved here (the run folder's
    // checkpoint). `step` is the trainer's step; it ended when the stop came between steps.
    std::function<void(int step)> stopping;
};

// The interval of TrainerCallbacks::ticked, in seconds.
inline constexpr double kTickSeconds = 1.0;

// Which Linear weights get weight decay (c_attn, c_proj, c_fc): not the tied token embedding, not
// the learned positional table, not LayerNorm weights, not biases.
bool decaysWeight(const std::string& parameterName);

class DataParallel;

// The gradient of one step's batch at the current weights (Trainer::gradients).
struct StepGradients {
    double loss = 0.0;
    std::vector<std::pair<std::string, torch::Tensor>> gradients;  // by parameter name
};

// What a training step costs here, measured (Trainer::timeStep).
struct StepTiming {
    int microBatches = 1;         // parts of the batch, their gradients accumulated
    int rows = 0;                 // rows of the largest part
    int rowsTimed = 0;            // rows of each timed pass (fewer: scaled to `rows`)
    double secondsPerStep = 0.0;  // the parts' forward and backward, and the optimizer step
    int partsTimed = 0;           // forward-and-backward passes timed (the first is a warm-up)
};

class Trainer {
public:
    // A fresh run: the model is initialized from train.seed. Throws std::invalid_argument for an
    // invalid config and std::runtime_error when the device is unavailable. `control` is shared
    // with whoever drives the run (a new one when none is given).
    Trainer(TaskKind task, const ModelConfig& model, const TrainConfig& train,
            std::shared_ptr<RunControl> control = nullptr);
    // Continues the run saved in `checkpoint`; `steps` > 0 replaces the total step count.
    static std::unique_ptr<Trainer> resume(const std::filesystem::path& checkpoint, int steps = 0,
                                           std::shared_ptr<RunControl> control = nullptr);
    ~Trainer();

    // Trains until the step count, the accuracy threshold, a stop, or a non-finite loss. At step
    // 0 it first evaluates and snapshots the model at initialization. A stop asked before or
    // during the run ends it and is cleared when it returns.
    TrainOutcome run(const TrainerCallbacks& callbacks);

    // Pause, resume, stop and work queued for the training thread (see run_control.h).
    RunControl& control() { return *m_control; }
    // Threads for the next run() (0 = all cores); changing it moves the loss curve by rounding.
    void setThreads(int threads) { m_trainConfig.threads = threads; }
    // Trains as one rank of a data-parallel group (training/data_parallel.h): the weights become
    // rank 0's now, each step trains on this rank's share of the global batch with the gradients
    // summed over the ranks, the ranks stop together, and only rank 0 evaluates and snapshots
    // (elsewhere the callbacks see stepEnded alone). Throws std::invalid_argument when the batch
    // does not split evenly across the ranks.
    void setDataParallel(std::shared_ptr<DataParallel> group);

    // Analysis of the current weights (eval mode, fp32 unless asked) on the run's fixed prompts,
    // or on the first `samples` test prompts of the same seeded draw when `samples` > 0. The
    // snapshots' analyses take the run's snapshotPrecision instead.
    Analysis analyze(int samples = 0, Precision precision = Precision::Fp32);
    // The same with the best weights so far (the current ones before any evaluation).
    Analysis analyzeBest(int samples = 0);
    // Each of `prompts` on its own (run/snapshot.h PromptAnalysis). Throws std::invalid_argument
    // naming a prompt with characters outside the vocabulary or longer than the context.
    PromptAnalysis analyzePrompts(const std::vector<std::string>& prompts);
    EvalResult evaluate();
    // Position probes of the current weights (see probe/prober.h): on random strings, or on the
    // task's test prompts (drawn from the data seed) with ProbeData::Task. `cancel` (or a stop
    // request) ends it between epochs, marked cancelled.
    ProbeReport probe(const ProbeConfig& config, const std::atomic<bool>* cancel = nullptr,
                      const std::function<void(int, int)>& progress = {});
    // Replaces the weights with those of a model of the same config (a loaded saved model).
    // Throws std::invalid_argument naming a parameter whose shape differs.
    void copyWeightsFrom(const GptImpl& other);
    // One training step outside run() (for benchmarks); returns the loss.
    double stepOnce();
    // The seconds a step takes on this machine, from forward and backward passes of one of its
    // micro-batches (or of `maxRows` of its rows, scaled to the micro-batch, when fewer) repeated
    // for about `budgetSeconds` (at least two, the first a warm-up, unless it alone took 20 s)
    // and one optimizer step at learning rate 0. The weights stay as they are but the
    // optimizer's moments and the batch order move on: time with a trainer built for it.
    StepTiming timeStep(double budgetSeconds, int maxRows = 0);
    // Parts each step's batch runs in: the run's {micro-batches}, or as few as fit in memory.
    int microBatches() const;
    // What step `iteration` (its batch and dropout) computes before the optimizer: its loss and
    // the gradient, in parts as training runs it; the weights, the optimizer and the order of
    // the run's batches stay as they are.
    StepGradients gradients(int iteration);
    // Loads the best weights of a run (its best.pt) so that analyzeBest() and the Python weights
    // use them after a resume. A best.pt of another step than the one this trainer's record
    // names (written just before a kill kept the checkpoint from following it, or another run's)
    // is not used; when the record's best is the trainer's own step, its weights are the best.
    // Throws std::runtime_error naming the file.
    void loadBest(const std::filesystem::path& bestCheckpoint);
    void saveCheckpoint(const std::filesystem::path& path) const;
    // The best weights (current ones before any evaluation) as a torch.load dict.
    void saveBestWeightsForPython(const std::filesystem::path& path);

    int step() const { return m_step.load(); }
    const EvalResult& lastEvaluation() const { return m_lastEval; }
    TaskKind task() const { return m_task; }
    const ModelConfig& modelConfig() const { return m_modelConfig; }
    const TrainConfig& trainConfig() const { return m_trainConfig; }
    // The curriculum's stages (none without one), for the run's own account of what it drew.
    std::vector<CurriculumStage> curriculumStages() const { return m_batches->curriculumStages(); }
    const TaskData& data() const { return m_data; }
    const PromptSet& prompts() const { return m_prompts; }
    GptImpl& model() { return *m_model; }
    // {"task", "model", "train"}, as stored in checkpoints and config.json.
    nlohmann::json configJson() const;
    RunSpec spec() const;  // the same as a value (preset left empty)

private:
    struct StepResult {
        double loss;
        double gradNorm;
        bool finite() const { return std::isfinite(loss) && std::isfinite(gradNorm); }
    };
    struct Loop;  // the state of one run() (train_loop.cpp)
    StepResult trainStep(int iteration);
    // The loss of step `iteration`'s batch, its gradient in the parameters' .grad (not finite:
    // the gradients are partial; the caller clears them).
    double accumulateStep(int iteration);
    // One part of a step's batch (a micro-batch, or the whole): its forward and backward, its
    // gradients added to the parameters'; returns its mean loss times `weight` (its share of
    // the step's target tokens). `firstRow`: the step's batch's index of its first row, which
    // keys its dropout. A part whose loss is not finite adds no gradient.
    double accumulatePart(const Batch& part, int64_t firstRow, uint64_t dropoutSeed, double weight);
    // The same with the part's rows split in `shares` run side by side (split_step.cpp), and
    // the shares of a part of `rows`: one per thread while each keeps at least 8 rows.
    double splitPart(const Batch& part, int64_t firstRow, uint64_t dropoutSeed, double weight,
                     int64_t shares);
    static int64_t stepShares(int64_t rows);
    // The batch's mean loss over its target tokens times `weight`, the forward in the run's
    // precision; weight 0 gives a zero that still reaches every weight (a data-parallel share
    // without targets).
    torch::Tensor weightedLoss(const Batch& batch, double weight);
    // The phases of run(); each returns false when a stop interrupted it.
    bool evaluatePhase(Loop& loop);
    bool snapshotPhase(Loop& loop, bool final);
    // A stop between snapshots: a snapshot of the step it stopped at, so that the run's record
    // and its viewers end where the run did (the sums of the next regular snapshot are kept).
    void stopSnapshot(Loop& loop);
    // TrainerCallbacks::ticked when a second has passed since the last tick, or `now`.
    void tick(Loop& loop, bool now = false);
    std::optional<TrainOutcome> stepPhase(Loop& loop);  // an outcome when the step failed
    enum class Verdict : int;  // what rank 0 decides after a step (train_loop.cpp)
    Verdict evaluateAndSnapshot(Loop& loop);
    TrainOutcome outcome(StopReason reason, std::string message) const;
    Analysis analyzeOn(const PromptSet& prompts, const std::atomic<bool>* cancel,
                       Precision precision);
    Snapshot progress(double trainLoss, double tokensPerSecond, double elapsed, int firstStep);
    int64_t tokensPerStep() const;

    TaskKind m_task;
    ModelConfig m_modelConfig;
    TrainConfig m_trainConfig;
    torch::Device m_device;
    TaskData m_data;
    PromptSet m_prompts;
    Gpt m_model{nullptr};
    std::unique_ptr<AdamW> m_optimizer;
    std::unique_ptr<BatchSource> m_batches;
    std::unique_ptr<Evaluator> m_evaluator;
    std::shared_ptr<RunControl> m_control;
    std::shared_ptr<DataParallel> m_parallel;  // null: one process
    int64_t m_microRows = 1;                   // rows of a step's largest part (memory.h plan)
    BestWeights m_best;

    std::atomic<int> m_step{0};
    EvalResult m_lastEval;
    double m_snapshotLossSum = 0.0;  // training losses since the last snapshot (checkpointed)
    int m_snapshotLossSteps = 0;
    double m_evalLossSum = 0.0;  // ... and since the last evaluation (checkpointed)
    int m_evalLossSteps = 0;
    // The run's wall time: that of the sessions before this one (checkpointed, so that a resumed
    // run's elapsed_s goes on from where it stopped), and the start of the one under way.
    double m_secondsBefore = 0.0;
    std::optional<std::chrono::steady_clock::time_point> m_sessionStart;
    double sessionSeconds() const;  // the one under way's (0 between sessions)
    double runSeconds() const { return m_secondsBefore + sessionSeconds(); }
};

}  // namespace nope
