#include "training/trainer.h"

#include <chrono>
#include <cmath>

#include "analysis/analyzer.h"
#include "model/init.h"
#include "probe/prober.h"
#include "run/run_spec.h"
#include "training/lr_schedule.h"
#include "util/autocast_scope.h"
#include "util/format.h"
#include "util/rng.h"
#include "util/runtime.h"

namespace nope {

namespace {

using Clock = std::chrono::steady_clock;

double secondsBetween(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

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
    switch (reason) {
        case StopReason::Completed:
            return "completed";
        case StopReason::ReachedAccuracy:
            return "reached accuracy";
        case StopReason::Stopped:
            return "stopped";
        case StopReason::TimeLimit:
            return "time limit";
        case StopReason::NonFinite:
            return "non-finite loss";
    }
    return "?";
}

bool decaysWeight(const std::string& name) {
    const bool linear = name.find(".c_attn.") != std::string::npos ||
                        name.find(".c_proj.") != std::string::npos ||
                        name.find(".c_fc.") != std::string::npos;
    return linear && name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
}

Trainer::Trainer(TaskKind task, const ModelConfig& model, const TrainConfig& train)
    : m_task(task), m_modelConfig(model), m_trainConfig(train), m_device(torch::kCPU) {
    throwIfInvalid(task, model, train);
    m_device = deviceFor(train.device);
    m_data = makeTaskData(task, train.data);
    m_prompts = makePromptSet(m_data, train.analysisSamples, analysisPromptSeed(train.data.seed));

    torch::manual_seed(train.seed);
    m_model = Gpt(model);
    initializeWeights(*m_model);
    m_model->to(m_device);
    m_model->train();
    m_optimizer = std::make_unique<AdamW>(optimizerParams(*m_model), train.beta1, train.beta2,
                                          train.weightDecay);
    m_batches = std::make_unique<BatchSource>(task, m_data.train, train.objective,
                                              train.windowLength, deriveSeed(train.seed, 1));
    std::vector<Example> evalSet =
        train.evalSamples == 0
            ? m_data.test
            : sampleExamples(m_data.test, train.evalSamples, deriveSeed(train.data.seed, 0xe7));
    m_evaluator = std::make_unique<Evaluator>(task, m_data.test, std::move(evalSet),
                                              train.objective, train.windowLength,
                                              train.precision == Precision::Bf16, m_device);
}

Trainer::~Trainer() = default;

std::unique_ptr<Trainer> Trainer::resume(const std::filesystem::path& checkpoint, int steps) {
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
    auto trainer = std::make_unique<Trainer>(task, model, train);
    loadCheckpoint(checkpoint, *trainer->m_model, *trainer->m_optimizer);
    trainer->m_step = state.step;
    trainer->m_bestAccuracy = state.bestAccuracy;
    trainer->m_bestStep = state.bestStep;
    trainer->m_bestLoss = state.bestLoss;
    trainer->m_batches->setRngState(state.batchRng);
    return trainer;
}

nlohmann::json Trainer::configJson() const {
    return {{"task", taskName(m_task)}, {"model", m_modelConfig}, {"train", m_trainConfig}};
}

RunSpec Trainer::spec() const {
    return RunSpec{m_task, m_modelConfig, m_trainConfig, ""};
}

void Trainer::requestStop() {
    {
        std::lock_guard<std::mutex> lock(m_pauseMutex);  // no lost wake-up of a paused loop
        m_stop = true;
    }
    m_pauseChanged.notify_all();
}

void Trainer::setPaused(bool paused) {
    {
        std::lock_guard<std::mutex> lock(m_pauseMutex);
        m_paused = paused;
    }
    m_pauseChanged.notify_all();
}

void Trainer::runBetweenSteps(std::function<void()> task) {
    {
        std::lock_guard<std::mutex> lock(m_pauseMutex);
        m_tasks.push_back(std::move(task));
    }
    m_pauseChanged.notify_all();
}

void Trainer::runPendingTasks() {
    std::unique_lock<std::mutex> lock(m_pauseMutex);
    while (!m_tasks.empty()) {
        auto task = std::move(m_tasks.front());
        m_tasks.erase(m_tasks.begin());
        lock.unlock();
        task();
        lock.lock();
    }
}

bool Trainer::waitWhilePaused() {
    for (;;) {
        runPendingTasks();
        std::unique_lock<std::mutex> lock(m_pauseMutex);
        m_pauseChanged.wait(
            lock, [this] { return !m_paused.load() || m_stop.load() || !m_tasks.empty(); });
        if (m_tasks.empty()) {
            return !m_stop.load();
        }
    }
}

Trainer::StepResult Trainer::trainStep(int iteration) {
    const double lr = learningRateAt(iteration, m_trainConfig);
    const Batch batch = m_batches->next(m_trainConfig.batchSize);
    torch::Tensor loss;
    DropoutStream dropoutSeeds(deriveSeed(m_trainConfig.seed, 0x10000000ULL + iteration));
    {
        AutocastScope autocast(m_trainConfig.precision == Precision::Bf16);
        const auto logits = m_model->forward(batch.inputs.to(m_device));
        loss = languageModelLoss(logits, batch.targets.to(m_device));
    }
    const double value = loss.item<double>();
    if (!std::isfinite(value)) {
        m_optimizer->zeroGrad();
        return {value, 0.0};
    }
    loss.backward();
    return {value, m_optimizer->step(lr, m_trainConfig.gradClip)};
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

ProbeReport Trainer::probe(const ProbeConfig& config, const std::atomic<bool>* cancel,
                           const std::function<void(int, int)>& progress) {
    ProbeTokens tokens;
    if (config.data == ProbeData::Task) {
        const int strings = config.trainStrings + config.testStrings;
        if (strings > int(m_data.test.size())) {
            throw std::invalid_argument(
                "--train-strings: train and test strings of task probes "
                "come from the test set (allowed: a sum up to " +
                std::to_string(m_data.test.size()) + ")");
        }
        tokens = taskProbeTokens(
            config,
            makePromptSet(m_data, strings, analysisPromptSeed(m_trainConfig.data.seed)).tokens);
    } else {
        tokens = randomProbeTokens(config);
    }
    tokens.train = tokens.train.to(m_device);
    tokens.test = tokens.test.to(m_device);
    ProbeRunHooks hooks;
    hooks.cancel = cancel;
    hooks.progress = progress;
    return runProbes(*m_model, config, tokens, hooks);
}

Analysis Trainer::analyzeOn(const PromptSet& prompts, const std::atomic<bool>* cancel) {
    AnalysisOptions options;
    options.points = CaptureSet(allCapturePoints());
    options.keepPrompts = m_trainConfig.keepPrompts;
    options.cancel = cancel;
    return nope::analyze(*m_model, prompts.tokens.to(m_device), options, prompts.padded);
}

Analysis Trainer::analyze(int samples) {
    samples = std::min(samples, static_cast<int>(m_data.test.size()));
    if (samples <= 0 || samples == m_trainConfig.analysisSamples) {
        return analyzeOn(m_prompts, nullptr);
    }
    // the same seeded draw: its first analysisSamples prompts are the run's own
    return analyzeOn(makePromptSet(m_data, samples, analysisPromptSeed(m_trainConfig.data.seed)),
                     nullptr);
}

Analysis Trainer::analyzeBest(int samples) {
    if (m_bestWeights.empty()) {
        return analyze(samples);
    }
    torch::NoGradGuard noGrad;
    auto params = m_model->parameters();
    std::vector<torch::Tensor> current;
    for (size_t i = 0; i < params.size(); ++i) {
        current.push_back(params[i].detach().clone());
        params[i].copy_(m_bestWeights[i]);
    }
    Analysis analysis = analyze(samples);
    for (size_t i = 0; i < params.size(); ++i) {
        params[i].copy_(current[i]);
    }
    return analysis;
}

EvalResult Trainer::evaluate() {
    EvalResult result = m_evaluator->evaluate(*m_model);
    result.step = m_step;
    return result;
}

void Trainer::rememberBest() {
    m_bestWeights.clear();
    for (const auto& p : m_model->parameters()) {
        m_bestWeights.push_back(p.detach().clone());
    }
}

void Trainer::saveCheckpoint(const std::filesystem::path& path) const {
    CheckpointState state;
    state.config = configJson();
    state.step = m_step;
    state.bestAccuracy = m_bestAccuracy;
    state.bestStep = m_bestStep;
    state.bestLoss = m_bestLoss;
    state.batchRng = m_batches->rngState();
    nope::saveCheckpoint(path, *m_model, *m_optimizer, state);
}

void Trainer::saveBestWeightsForPython(const std::filesystem::path& path) {
    if (m_bestWeights.empty()) {
        saveWeightsForPython(path, *m_model);
        return;
    }
    ModelConfig config = m_modelConfig;
    Gpt best(config);
    torch::NoGradGuard noGrad;
    auto params = best->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
        params[i].copy_(m_bestWeights[i]);
    }
    saveWeightsForPython(path, *best);
}

double Trainer::stepOnce() {
    const StepResult result = trainStep(m_step);
    ++m_step;
    return result.finite() ? result.loss : std::nan("");
}

void Trainer::loadBest(const std::filesystem::path& bestCheckpoint) {
    Gpt best(m_modelConfig);
    loadWeights(bestCheckpoint, *best);
    m_bestWeights.clear();
    for (const auto& p : best->parameters()) {
        m_bestWeights.push_back(p.detach().to(m_device));
    }
}

Snapshot Trainer::progress(double trainLoss, double tokensPerSecond, double elapsed,
                           int firstStep) {
    Snapshot s;
    s.step = m_step;
    s.totalSteps = m_trainConfig.steps;
    s.trainLoss = trainLoss;
    s.learningRate = learningRateAt(std::max(0, m_step.load() - 1), m_trainConfig);
    s.tokensPerSecond = tokensPerSecond;
    s.elapsedSeconds = elapsed;
    s.etaSeconds =
        m_step > firstStep ? elapsed / (m_step - firstStep) * (m_trainConfig.steps - m_step) : 0.0;
    s.eval = m_lastEval;
    s.best = m_bestStep == m_step && m_step > 0;
    return s;
}

namespace {

// Mean loss and throughput over the steps since the last reset.
struct Window {
    double lossSum = 0.0;
    double seconds = 0.0;
    int steps = 0;
    void add(double loss, double s) {
        lossSum += loss;
        seconds += s;
        ++steps;
    }
    double meanLoss() const { return steps > 0 ? lossSum / steps : std::nan(""); }
    double tokensPerSecond(int64_t tokensPerStep) const {
        return seconds > 0 ? double(tokensPerStep) * steps / seconds : 0.0;
    }
};

}  // namespace

TrainOutcome Trainer::run(const TrainerCallbacks& callbacks) {
    applyThreadCount(m_trainConfig.threads);
    struct ClearStop {  // a stop ends this run only; a stop asked before it starts still counts
        std::atomic<bool>& flag;
        ~ClearStop() { flag = false; }
    } clearStop{m_stop};
    const auto start = Clock::now();
    const int firstStep = m_step;
    const int64_t tokensPerStep =
        int64_t{m_trainConfig.batchSize} * (m_trainConfig.objective == Objective::Lm
                                                ? m_trainConfig.windowLength
                                                : answerSequenceLength(m_task) - 1);
    Window sinceEval, sinceSnapshot;
    auto elapsed = [&] { return secondsBetween(start, Clock::now()); };
    auto outcome = [&](StopReason reason, std::string message) {
        return TrainOutcome{reason, std::move(message), m_step, m_bestAccuracy, m_bestStep};
    };
    auto stopped = [&] {
        return outcome(StopReason::Stopped, "stopped at step " + std::to_string(m_step.load()));
    };
    // Evaluation and analysis check the stop flag between batches; false when it interrupted them.
    bool best = false;
    auto evaluateNow = [&]() -> bool {
        EvalResult result = m_evaluator->evaluate(*m_model, &m_stop);
        if (result.cancelled) {
            return false;
        }
        result.step = m_step;
        m_lastEval = result;
        const double loss = std::isfinite(result.testLoss)
                                ? result.testLoss
                                : std::numeric_limits<double>::infinity();
        best = result.accuracy > m_bestAccuracy ||
               (result.accuracy == m_bestAccuracy && loss < m_bestLoss);
        if (best) {
            m_bestAccuracy = result.accuracy;
            m_bestLoss = loss;
            m_bestStep = m_step;
            rememberBest();
        }
        if (callbacks.evaluated) {
            callbacks.evaluated(
                progress(sinceEval.meanLoss(), sinceEval.tokensPerSecond(tokensPerStep), elapsed(),
                         firstStep),
                best);
        }
        sinceEval = Window{};
        return true;
    };
    // Probes every probeEvery snapshots (by step, so that a resumed run keeps the rhythm) and in
    // the run's final snapshot.
    auto probesDue = [&](bool final) {
        const int every = m_trainConfig.probeEvery;
        return every > 0 && (final || m_step % (every * m_trainConfig.snapshotEvery) == 0);
    };
    auto snapshotNow = [&](bool final) -> bool {
        if (callbacks.snapshot) {
            Snapshot s =
                progress(sinceSnapshot.meanLoss(), sinceSnapshot.tokensPerSecond(tokensPerStep),
                         elapsed(), firstStep);
            s.analysis = analyzeOn(m_prompts, &m_stop);
            if (s.analysis.cancelled) {
                return false;
            }
            if (probesDue(final)) {
                s.probes = probe(m_trainConfig.probe, &m_stop);
                if (s.probes.cancelled) {
                    s.probes = ProbeReport{};  // a stop: the snapshot goes out without probes
                }
            }
            callbacks.snapshot(s);
        }
        sinceSnapshot = Window{};
        return true;
    };

    if (m_step == 0) {  // the model at initialization
        if (!evaluateNow() || !snapshotNow(/*final=*/false)) {
            return stopped();
        }
    }
    while (m_step < m_trainConfig.steps) {
        if (!waitWhilePaused()) {
            return stopped();
        }
        const auto stepStart = Clock::now();
        const StepResult step = trainStep(m_step);
        const double seconds = secondsBetween(stepStart, Clock::now());
        if (!step.finite()) {
            const bool lossBad = !std::isfinite(step.loss);
            const double bad = lossBad ? step.loss : step.gradNorm;
            return outcome(StopReason::NonFinite,
                           std::string(lossBad ? "the loss" : "the gradient norm") + " became " +
                               (std::isnan(bad) ? "NaN" : "infinite") + " at step " +
                               std::to_string(m_step.load() + 1) +
                               "; training stopped, earlier checkpoints are kept (try a lower "
                               "--lr or fp32)");
        }
        ++m_step;
        sinceEval.add(step.loss, seconds);
        sinceSnapshot.add(step.loss, seconds);

        const bool last = m_step == m_trainConfig.steps;
        bool reached = false;
        best = false;
        if (m_step % m_trainConfig.evalEvery == 0 || last) {
            if (!evaluateNow()) {
                return stopped();
            }
            reached = m_lastEval.accuracy > m_trainConfig.stopAccuracy;
        }
        const bool outOfTime =
            m_trainConfig.timeLimitMinutes > 0 && elapsed() > 60.0 * m_trainConfig.timeLimitMinutes;
        if (outOfTime && !reached && !last && m_lastEval.step != m_step && !evaluateNow()) {
            return stopped();
        }
        // a new best always gets a snapshot, so that the best checkpoint can be browsed
        if (m_step % m_trainConfig.snapshotEvery == 0 || last || reached || best || outOfTime) {
            if (!snapshotNow(/*final=*/last || reached || outOfTime)) {
                return stopped();
            }
        }
        if (reached) {
            return outcome(StopReason::ReachedAccuracy,
                           "test accuracy " + fixed(m_lastEval.accuracy, 2) + "% passed " +
                               fixed(m_trainConfig.stopAccuracy, 1) + "% at step " +
                               std::to_string(m_step.load()));
        }
        if (outOfTime && !last) {
            return outcome(StopReason::TimeLimit,
                           "time limit of " + fixed(m_trainConfig.timeLimitMinutes, 1) +
                               " minutes reached at step " + std::to_string(m_step.load()));
        }
    }
    return outcome(StopReason::Completed, "completed " + std::to_string(m_step.load()) + " steps");
}

}  // namespace nope
