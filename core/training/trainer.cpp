#include "training/trainer.h"

#include <algorithm>
#include <cmath>

#include "model/dropout.h"
#include "model/init.h"
#include "run/run_spec.h"
#include "run/snapshot_io.h"
#include "training/data_parallel.h"
#include "training/lr_schedule.h"
#include "util/autocast_scope.h"
#include "util/enum_names.h"
#include "util/format.h"
#include "util/memory.h"
#include "util/rng.h"
#include "util/runtime.h"
#include "util/stopwatch.h"

namespace nope {

namespace {

torch::Device deviceFor(DeviceKind kind) {
    if (kind == DeviceKind::Cuda) {
        if (!torch::cuda::is_available()) {
            throw std::runtime_error(
                "--device: cuda is not available (this LibTorch was built without CUDA or no GPU "
                "is visible; allowed here: cpu)");
        }
        return torch::Device(torch::kCUDA);
    }
    return torch::Device(torch::kCPU);
}

void throwIfInvalid(TaskKind task, const ModelConfig& model, const TrainConfig& train) {
    const FieldErrors errors = validate(RunSpec{task, model, train, ""});
    if (!errors.empty()) {
        throw std::invalid_argument(describe(errors.front()));
    }
}

std::vector<OptimizerParam> optimizerParams(GptImpl& model) {
    std::vector<OptimizerParam> params;
    for (const auto& item : model.named_parameters()) {
        params.push_back({item.key(), item.value(), decaysWeight(item.key())});
    }
    return params;
}

}  // namespace

std::string toString(StopReason reason) {
    static constexpr EnumName<StopReason> kReasons[] = {
        {StopReason::Completed, "completed"},
        {StopReason::ReachedAccuracy, "reached accuracy"},
        {StopReason::Stopped, "stopped"},
        {StopReason::TimeLimit, "time limit"},
        {StopReason::NonFinite, "non-finite loss"}};
    return nameOf(kReasons, reason);
}

bool decaysWeight(const std::string& name) {
    const bool linear = name.find(".c_attn.") != std::string::npos ||
                        name.find(".c_proj.") != std::string::npos ||
                        name.find(".c_fc.") != std::string::npos;
    return linear && name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
}

Trainer::Trainer(TaskKind task, const ModelConfig& model, const TrainConfig& train,
                 std::shared_ptr<RunControl> control)
    : m_task(task),
      m_modelConfig(model),
      m_trainConfig(train),
      m_device(torch::kCPU),
      m_control(control ? std::move(control) : std::make_shared<RunControl>()) {
    throwIfInvalid(task, model, train);
    m_device = deviceFor(train.device);
    m_data = makeTaskData(task, train.data);
    m_prompts = makePromptSet(m_data, train.analysisSamples, analysisPromptSeed(train.data.seed));

    m_model = seededModel(model, train.seed);
    m_model->to(m_device);
    m_model->train();
    m_optimizer = std::make_unique<AdamW>(optimizerParams(*m_model), train.beta1, train.beta2,
                                          train.weightDecay);
    m_batches = std::make_unique<BatchSource>(task, m_data.train, train.objective,
                                              train.windowLength, deriveSeed(train.seed, 1),
                                              Curriculum{train.curriculumSteps, train.batchSize});
    std::vector<Example> evalSet =
        train.evalSamples == 0
            ? m_data.test
            : sampleExamples(m_data.test, train.evalSamples, deriveSeed(train.data.seed, 0xe7));
    m_evaluator = std::make_unique<Evaluator>(task, m_data.test, std::move(evalSet),
                                              train.objective, train.windowLength,
                                              train.precision == Precision::Bf16, m_device);
    m_microRows = trainingPlan(RunSpec{task, model, train}).rows;
}

Trainer::~Trainer() = default;

std::unique_ptr<Trainer> Trainer::resume(const std::filesystem::path& checkpoint, int steps,
                                         std::shared_ptr<RunControl> control) {
    const CheckpointState state = readCheckpointState(checkpoint);
    RunSpec spec;
    try {
        spec = runSpecFromJson(state.config);
    } catch (const std::exception& e) {
        throw std::runtime_error(checkpoint.string() + ": damaged config: " + e.what());
    }
    const TaskKind task = spec.task;
    const ModelConfig& model = spec.model;
    TrainConfig& train = spec.train;
    if (steps > 0) {
        train.steps = steps;
    }
    auto trainer = std::make_unique<Trainer>(task, model, train, std::move(control));
    loadCheckpoint(checkpoint, *trainer->m_model, *trainer->m_optimizer);
    trainer->m_step = state.step;
    trainer->m_best.setRecord({state.bestAccuracy, state.bestLoss, state.bestStep});
    trainer->m_batches->setRngState(state.batchRng);
    trainer->m_snapshotLossSum = state.snapshotLossSum;
    trainer->m_snapshotLossSteps = state.snapshotLossSteps;
    trainer->m_evalLossSum = state.evalLossSum;
    trainer->m_evalLossSteps = state.evalLossSteps;
    trainer->m_secondsBefore = std::isfinite(state.elapsedSeconds) && state.elapsedSeconds > 0
                                   ? state.elapsedSeconds
                                   : 0.0;
    if (!state.lastEvaluation.is_null()) {
        try {
            trainer->m_lastEval = evalFromJson(state.lastEvaluation);
        } catch (const std::exception& e) {
            throw std::runtime_error(checkpoint.string() +
                                     ": damaged last evaluation: " + e.what());
        }
    }
    return trainer;
}

nlohmann::json Trainer::configJson() const {
    return {{"task", taskName(m_task)}, {"model", m_modelConfig}, {"train", m_trainConfig}};
}

RunSpec Trainer::spec() const {
    return RunSpec{m_task, m_modelConfig, m_trainConfig, ""};
}

void Trainer::setDataParallel(std::shared_ptr<DataParallel> group) {
    if (group && m_trainConfig.batchSize % group->worldSize() != 0) {
        throw std::invalid_argument(
            "--batch: " + std::to_string(m_trainConfig.batchSize) + " does not split across " +
            std::to_string(group->worldSize()) +
            " processes (allowed: a multiple of WORLD_SIZE; each process trains on its share)");
    }
    m_parallel = std::move(group);
    if (m_parallel) {
        m_parallel->broadcastFromLead(m_model->parameters());
        m_parallel->attach(m_model->parameters());
    }
}

// With data parallelism every rank draws the same global batch and trains on its share of the
// rows. Each rank's mean loss is weighted by its share of the batch's target tokens, so that the
// gradients summed over the ranks are those of the whole batch's mean loss, as one process
// computes it; the reported loss is the same sum. Within a process the batch runs in parts of at
// most m_microRows rows (micro-batches), each part's gradients added to the others', weighted
// the same way. Each part's dropout is keyed by its rows' place in the global batch, so the
// gradient is the whole batch's whatever the parts, threads and processes, up to rounding.
double Trainer::accumulateStep(int iteration) {
    Batch batch = m_batches->next(m_trainConfig.batchSize, iteration);
    const uint64_t dropoutSeed = deriveSeed(m_trainConfig.seed, 0x10000000ULL + iteration);
    int64_t firstRow = 0;  // the global batch's index of this process's first row
    if (m_parallel) {
        const int64_t share = m_trainConfig.batchSize / m_parallel->worldSize();
        firstRow = share * m_parallel->rank();
        batch = rowsOf(batch, firstRow, share);
    }
    const double tokens = double(targetTokens(batch));
    const double total = m_parallel ? m_parallel->sum({tokens}).front() : tokens;
    if (!m_parallel && total == 0.0) {  // no target in the batch: its mean loss is NaN
        return std::nan("");
    }
    const int64_t rows = batch.inputs.size(0);
    const int64_t parts = std::max<int64_t>(1, (rows + m_microRows - 1) / m_microRows);
    double value = 0.0;
    for (int64_t m = 0; m < parts; ++m) {
        const int64_t first = rows * m / parts;
        const Batch part =
            parts == 1 ? batch : rowsOf(batch, first, rows * (m + 1) / parts - first);
        const double weight = total > 0.0 ? double(targetTokens(part)) / total : 0.0;
        if (m_parallel && m + 1 == parts) {
            m_parallel->beginGradients();  // summed over the ranks as the last part's arrive
        }
        value += accumulatePart(part, firstRow + first, dropoutSeed, weight);
        if (!std::isfinite(value) && !m_parallel) {
            break;  // the step is lost: no need for the other parts
        }
    }
    if (m_parallel) {
        m_parallel->finishGradients();
        // every rank sees the same loss, so that all skip a non-finite step together
        value = m_parallel->sum({value}).front();
    }
    return value;
}

Trainer::StepResult Trainer::trainStep(int iteration) {
    const double value = accumulateStep(iteration);
    if (!std::isfinite(value)) {
        m_optimizer->zeroGrad();
        return {value, 0.0};
    }
    return {value,
            m_optimizer->step(learningRateAt(iteration, m_trainConfig), m_trainConfig.gradClip)};
}

StepGradients Trainer::gradients(int iteration) {
    applyThreadCount(m_trainConfig.threads);
    m_optimizer->zeroGrad();
    const std::string order = m_batches->rngState();  // the run's batches stay as they are
    StepGradients out;
    out.loss = accumulateStep(iteration);
    m_batches->setRngState(order);
    torch::NoGradGuard noGrad;
    for (const auto& item : m_model->named_parameters()) {
        const torch::Tensor& g = item.value().grad();
        out.gradients.emplace_back(item.key(),
                                   g.defined() ? g.clone() : torch::zeros_like(item.value()));
    }
    m_optimizer->zeroGrad();
    return out;
}

int Trainer::microBatches() const {
    const int64_t rows = m_trainConfig.batchSize / (m_parallel ? m_parallel->worldSize() : 1);
    return static_cast<int>(std::max<int64_t>(1, (rows + m_microRows - 1) / m_microRows));
}

StepTiming Trainer::timeStep(double budgetSeconds, int maxRows) {
    applyThreadCount(m_trainConfig.threads);
    StepTiming timing;
    timing.microBatches = microBatches();
    const Batch batch = m_batches->next(m_trainConfig.batchSize, m_step);
    const int64_t rows = batch.inputs.size(0);
    timing.rows = static_cast<int>((rows + timing.microBatches - 1) / timing.microBatches);
    timing.rowsTimed = maxRows > 0 ? std::min(maxRows, timing.rows) : timing.rows;
    const Batch part = rowsOf(batch, 0, timing.rowsTimed);
    const double weight = double(targetTokens(part)) / std::max(1.0, double(targetTokens(batch)));
    const uint64_t dropoutSeed = deriveSeed(m_trainConfig.seed, 0x10000000ULL + m_step);
    std::vector<double> seconds;
    double spent = 0.0;
    while (true) {
        m_optimizer->zeroGrad();
        const auto passStart = SteadyClock::now();
        accumulatePart(part, 0, dropoutSeed, weight);
        seconds.push_back(secondsSince(passStart));
        spent += seconds.back();
        // a second pass unless the first alone took long (its warm-up is then a small part)
        const bool enough = seconds.size() >= 2 && spent >= budgetSeconds;
        const bool long_ = seconds.size() == 1 && spent >= std::max(budgetSeconds, 20.0);
        if (enough || long_ || seconds.size() >= 50) {
            break;
        }
    }
    double pass = seconds.front();
    if (seconds.size() > 1) {  // the first pass warms up: allocations, kernels chosen
        pass = 0.0;
        for (size_t i = 1; i < seconds.size(); ++i) {
            pass += seconds[i];
        }
        pass /= double(seconds.size() - 1);
    }
    const auto optimizerStart = SteadyClock::now();
    m_optimizer->step(0.0, m_trainConfig.gradClip);  // the same work; the weights stay
    const double optimizer = secondsSince(optimizerStart);
    timing.partsTimed = static_cast<int>(seconds.size());
    const double scale = double(timing.rows) / double(timing.rowsTimed);
    timing.secondsPerStep = pass * scale * timing.microBatches + optimizer;
    return timing;
}

double Trainer::accumulatePart(const Batch& part, int64_t firstRow, uint64_t dropoutSeed,
                               double weight) {
    const int64_t shares = m_parallel || !m_device.is_cpu() ? 1 : stepShares(part.inputs.size(0));
    if (shares > 1) {
        return splitPart(part, firstRow, dropoutSeed, weight, shares);
    }
    DropoutStream dropoutSeeds(dropoutSeed, firstRow);
    const torch::Tensor loss = weightedLoss(part, weight);
    const double value = loss.item<double>();
    if (std::isfinite(value)) {
        loss.backward();
    }
    return value;
}

torch::Tensor Trainer::weightedLoss(const Batch& batch, double weight) {
    AutocastScope autocast(m_trainConfig.precision == Precision::Bf16);
    const auto logits = m_model->forward(batch.inputs.to(m_device), nullptr, Head::AllPositions,
                                         nullptr, batch.padding);
    if (weight == 0.0) {  // a share without targets adds nothing (its mean loss is NaN)
        return logits.sum().to(torch::kFloat) * 0.0;
    }
    const auto loss = languageModelLoss(logits, batch.targets.to(m_device));
    return weight == 1.0 ? loss : loss * weight;
}

void Trainer::copyWeightsFrom(const GptImpl& other) {
    torch::NoGradGuard noGrad;
    const auto source = other.named_parameters();
    for (auto& item : m_model->named_parameters()) {
        const torch::Tensor* from = source.find(item.key());
        if (!from || !from->sizes().equals(item.value().sizes())) {
            throw std::invalid_argument("weight " + item.key() + " is missing or has shape " +
                                        (from ? c10::str(from->sizes()) : std::string("none")) +
                                        ", the model expects " + c10::str(item.value().sizes()));
        }
        item.value().copy_(*from);
    }
}

EvalResult Trainer::evaluate() {
    EvalResult result = m_evaluator->evaluate(*m_model);
    result.step = m_step;
    return result;
}

void Trainer::saveCheckpoint(const std::filesystem::path& path) const {
    CheckpointState state;
    state.config = configJson();
    state.step = m_step;
    state.bestAccuracy = m_best.record().accuracy;
    state.bestStep = m_best.record().step;
    state.bestLoss = m_best.record().loss;
    state.batchRng = m_batches->rngState();
    state.lastEvaluation = toJson(m_lastEval);
    state.snapshotLossSum = m_snapshotLossSum;
    state.snapshotLossSteps = m_snapshotLossSteps;
    state.evalLossSum = m_evalLossSum;
    state.evalLossSteps = m_evalLossSteps;
    state.elapsedSeconds = runSeconds();
    nope::saveCheckpoint(path, *m_model, *m_optimizer, state);
}

void Trainer::saveBestWeightsForPython(const std::filesystem::path& path) {
    if (!m_best.hasWeights()) {
        saveWeightsForPython(path, *m_model);
        return;
    }
    Gpt best(m_modelConfig);
    m_best.copyInto(*best);
    saveWeightsForPython(path, *best);
}

double Trainer::stepOnce() {
    const StepResult result = trainStep(m_step);
    ++m_step;
    return result.finite() ? result.loss : std::nan("");
}

void Trainer::loadBest(const std::filesystem::path& bestCheckpoint) {
    const CheckpointState state = readCheckpointState(bestCheckpoint);
    const int recorded = m_best.record().step;
    bool sameModel = false;
    try {  // compared as configs, so that a file of an older version with fewer keys compares
        sameModel = nlohmann::json(state.config.at("model").get<ModelConfig>()) ==
                    nlohmann::json(m_modelConfig);
    } catch (const std::exception&) {
        sameModel = false;
    }
    if (!sameModel || state.step != recorded) {
        if (recorded == m_step) {
            m_best.loadFrom(*m_model, m_device);
        }
        return;
    }
    Gpt best(m_modelConfig);
    loadWeights(bestCheckpoint, *best);
    m_best.loadFrom(*best, m_device);
}

double Trainer::sessionSeconds() const {
    return m_sessionStart ? secondsSince(*m_sessionStart) : 0.0;
}

Snapshot Trainer::progress(double trainLoss, double tokensPerSecond, double elapsed,
                           int firstStep) {
    Snapshot s;
    s.step = m_step;
    s.totalSteps = m_trainConfig.steps;
    s.trainLoss = trainLoss;
    s.learningRate = learningRateAt(std::max(0, m_step.load() - 1), m_trainConfig);
    s.tokensPerSecond = tokensPerSecond;
    s.elapsedSeconds = m_secondsBefore + elapsed;  // the run's, over its sessions
    s.etaSeconds =
        m_step > firstStep ? elapsed / (m_step - firstStep) * (m_trainConfig.steps - m_step) : 0.0;
    // The time limit ends the run first: the time to it, and the step it stops near at this speed.
    const double limit = 60.0 * m_trainConfig.timeLimitMinutes;
    if (limit > 0 && m_step > firstStep && elapsed > 0 && limit - elapsed < s.etaSeconds) {
        const double toLimit = std::max(0.0, limit - elapsed);
        s.etaSeconds = toLimit;
        s.limitStep = m_step + static_cast<int>(toLimit / elapsed * (m_step - firstStep));
    }
    s.eval = m_lastEval;
    s.best = m_best.record().step == m_step && m_step > 0;
    return s;
}

int64_t Trainer::tokensPerStep() const {
    const int64_t perSequence = m_trainConfig.objective == Objective::Lm
                                    ? m_trainConfig.windowLength
                                    : answerSequenceLength(m_task) - 1;
    return int64_t{m_trainConfig.batchSize} * perSequence;
}

TrainOutcome Trainer::outcome(StopReason reason, std::string message) const {
    if (reason == StopReason::Stopped) {
        message += " at step " + std::to_string(m_step.load());
    }
    return TrainOutcome{reason, std::move(message), m_step.load(), m_best.record().accuracy,
                        m_best.record().step};
}

}  // namespace nope
