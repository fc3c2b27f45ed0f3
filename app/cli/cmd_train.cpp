// nopescope-cli train: trains a NoPE model on a task, printing a progress line per evaluation,
// and writes the run folder (config, metrics, adjacency per snapshot, final scores, checkpoints).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/train_flags.h"
#include "model/fast_ops.h"
#include "run/run_folder.h"
#include "training/data_parallel.h"
#include "training/presets.h"
#include "training/run_cost.h"
#include "training/run_recorder.h"
#include "training/trainer.h"
#include "util/error_text.h"
#include "util/files.h"
#include "util/format.h"
#include "util/memory.h"
#include "util/parse_number.h"
#include "util/runtime.h"

namespace nope::cli {

namespace fs = std::filesystem;

namespace {

std::atomic<RunControl*> g_running{nullptr};

// "bf16", with a word where its matrix products are emulated (model/fast_ops.h)
std::string precisionText(Precision precision) {
    std::string text = toString(precision);
    const std::string reason = bf16EmulationReason();
    if (precision == Precision::Bf16 && !reason.empty()) {
        text += " (products emulated in fp32 on bf16-rounded values: " + reason + ")";
    }
    return text;
}

// How long a rank waits for the others: at the rendezvous, and at each step while rank 0
// evaluates, snapshots and probes. NOPESCOPE_GROUP_TIMEOUT_MINUTES sets it.
constexpr int kGroupTimeoutMinutes = 30;
constexpr int kMaxGroupTimeoutMinutes = 7 * 24 * 60;

void onInterrupt(int) {
    if (RunControl* control = g_running.load()) {
        control->requestStopFromSignal();
    }
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

void printProgress(const Snapshot& p, bool best) {
    std::printf(
        "step %6d/%-6d loss %s  test %s  acc %6.2f%%%s  lr %.2e  %s tok/s  eval %.1fs  "
        "left %s%s\n",
        p.step, p.totalSteps, std::isfinite(p.trainLoss) ? fixed(p.trainLoss, 4).c_str() : "     -",
        std::isfinite(p.eval.testLoss) ? fixed(p.eval.testLoss, 4).c_str() : "     -",
        p.eval.accuracy, best ? "*" : " ", p.learningRate,
        withCommas(static_cast<int64_t>(p.tokensPerSecond)).c_str(), p.eval.seconds,
        clockDuration(p.etaSeconds).c_str(),
        p.limitStep > 0 ? (" (the time limit, near step " + withCommas(p.limitStep) + ")").c_str()
                        : "");
    std::fflush(stdout);
}

// The paper's table: adjacency of the attention output per layer, init and trained.
void printFinalTable(const Analysis& init, const Analysis& trained,
                     const std::string& trainedLabel) {
    const int layers = trained.layerCount();
    std::printf(
        "\nadjacency probability score (attn; embedding for layer 0), mean over %d prompts\n",
        trained.samples);
    std::printf("%-9s %10s", "", "embedding");
    for (int l = 1; l <= layers; ++l) {
        std::printf("  layer %-3d", l);
    }
    std::printf("\n");
    for (const auto* stage : {&init, &trained}) {
        std::printf("%-9s", stage == &init ? "init" : "trained");
        const LayerScores* e = stage->find(CapturePoint::Embedding, 0);
        std::printf(" %10s", e ? fixed(e->adjacencyMean, 4).c_str() : "-");
        for (int l = 1; l <= layers; ++l) {
            const LayerScores* r = stage->find(CapturePoint::Attn, l);
            std::printf("  %9s", r ? fixed(r->adjacencyMean, 4).c_str() : "-");
        }
        std::printf("\n");
    }
    std::printf("(%s)\n", trainedLabel.c_str());
}

// Exact-match accuracy of the last evaluation by the length of the expected answer.
void printByLength(const EvalResult& eval) {
    if (eval.byLength.empty()) {
        return;
    }
    std::printf("\ntest accuracy by answer length (step %d):", eval.step);
    for (const auto& b : eval.byLength) {
        std::printf("  %d: %.1f%% of %d", b.answerLength,
                    b.total > 0 ? 100.0 * b.correct / b.total : 0.0, b.total);
    }
    std::printf("\n");
}

// What each stage of the curriculum draws, and from which step (nothing without one); the
// stages after the run's last step are left out.
void printCurriculum(const std::vector<CurriculumStage>& stages, int steps, int runSteps) {
    if (stages.empty()) {
        if (steps > 0) {
            std::printf("curriculum: none (no shorter prompts fill a batch)\n\n");
        }
        return;
    }
    std::printf("curriculum:");
    const char* separator = " ";
    for (const CurriculumStage& s : stages) {
        if (s.firstStep >= runSteps && s.firstStep > 0) {
            break;
        }
        std::printf("%sprompts of up to %d characters (%s examples) from step %s", separator,
                    s.longestPrompt, withCommas(s.examples).c_str(),
                    withCommas(s.firstStep).c_str());
        separator = ", ";
    }
    if (steps < runSteps) {
        std::printf(", all from step %s\n\n", withCommas(steps).c_str());
    } else {
        std::printf(" (the run's %s steps end within the curriculum's %s)\n\n",
                    withCommas(runSteps).c_str(), withCommas(steps).c_str());
    }
}

// `train --check`: how the step runs here, what it costs, and the run's wall time at that rate.
void printPlan(Trainer& trainer, double budgetSeconds) {
    const TrainConfig& t = trainer.trainConfig();
    const TrainingPlan plan = trainingPlan(trainer.spec());
    const int parts = trainer.microBatches();
    std::printf("plan: batch %s in %s (%s)\n", withCommas(t.batchSize).c_str(),
                parts == 1 ? "one piece"
                           : (std::to_string(parts) + " micro-batches of up to " +
                              withCommas(plan.rows) + " rows, gradients accumulated")
                                 .c_str(),
                t.microBatches == 0 ? "--micro-batches 0: as few as fit in memory"
                                    : "set by --micro-batches");
    std::printf(
        "memory: about %s at a time (weights %s, gradients %s, optimizer state %s, "
        "activations %s); %s\n",
        bytesText(plan.memory.total()).c_str(), bytesText(plan.memory.weights).c_str(),
        bytesText(plan.memory.gradients).c_str(), bytesText(plan.memory.optimizer).c_str(),
        bytesText(plan.memory.activations).c_str(),
        plan.available ? (bytesText(*plan.available) + " available").c_str()
                       : "available memory unknown");
    std::printf("timing the step on %d thread(s) for about %.3g s...\n",
                t.threads > 0 ? t.threads : availableCores(), budgetSeconds);
    std::fflush(stdout);
    RunCostOptions options;
    options.stepSeconds = budgetSeconds;
    const RunCost cost = estimateRunCost(trainer, options);
    std::printf(
        "step: %.3g s (%d forward and backward pass(es) of %s rows timed%s, times %d, "
        "and the optimizer step)\n",
        cost.step.secondsPerStep, cost.step.partsTimed, withCommas(cost.step.rowsTimed).c_str(),
        cost.step.partsTimed > 1 ? ", the first a warm-up" : "", parts);
    std::printf(
        "evaluation: %.3g s for %s test examples (%s of them timed); snapshot: %.3g s; "
        "init or final analysis: %.3g s",
        cost.evaluation, withCommas(cost.evalExamples).c_str(), withCommas(cost.evalTimed).c_str(),
        cost.snapshot, cost.analysis);
    if (t.probeEvery > 0) {
        std::printf("; probes: %.3g s", cost.probe);
    }
    std::printf("\nestimate: %s\n", describe(cost).c_str());
}

struct RunPlan {
    std::unique_ptr<Trainer> trainer;
    fs::path out;
    std::string preset;
    bool resumed = false;
    bool checkOnly = false;     // --check: everything parsed and checked, the trainer built; no run
    double checkSeconds = 5.0;  // --check-time: how long --check times the step (0: not at all)
    bool distributed = false;
    std::optional<Rendezvous> rendezvous;  // --distributed: this process's place in the group
    bool writes() const { return !rendezvous || rendezvous->rank == 0; }  // the run folder
};

constexpr const char* kCheckTimeHelp =
    "with --check: time the step for about this long, then print the plan (micro-batches, "
    "memory, seconds per step) and the run's estimated wall time; 0 prints nothing";

constexpr const char* kDistributedHelp =
    "train one model on the processes of a torchrun-style launch (MASTER_ADDR, MASTER_PORT, "
    "RANK, WORLD_SIZE, LOCAL_RANK; scripts/launch-local.sh, srun): each trains on its share of "
    "every batch, rank 0 evaluates and writes the run folder";

// --distributed: this process's place in the group, from the launcher's environment.
std::optional<int> joinGroup(RunPlan& plan) {
    if (!plan.distributed) {
        return std::nullopt;
    }
    RendezvousOrError found = rendezvousFromEnvironment();
    if (!found.rendezvous) {
        return usageError("train", "--distributed: " + found.error);
    }
    plan.rendezvous = found.rendezvous;
    return std::nullopt;
}

// Parses `train --resume DIR [--steps N] [--threads N] [--distributed]`.
std::optional<int> planResume(const Args& args, RunPlan& plan) {
    std::string dir;
    int steps = 0;
    int threads = -1;
    FlagSet flags("nopescope-cli train --resume DIR [--steps N] [--threads N] [--distributed]",
                  "Continues the run saved in DIR (its checkpoint.pt), appending to its files.");
    flags.addString("resume", &dir, "run folder written by nopescope-cli train", "DIR");
    flags.addInt("steps", &steps,
                 "new total step count (default: the run's own); steps past the old end run at "
                 "the final learning rate",
                 1, 10000000);
    flags.addInt("threads", &threads, "CPU threads (0 = all cores)", 0, 256);
    flags.addSwitch("check", &plan.checkOnly, kCheckHelp);
    flags.addDouble("check-time", &plan.checkSeconds, kCheckTimeHelp, 0.0, 3600.0);
    flags.addSwitch("distributed", &plan.distributed, kDistributedHelp);
    if (auto error = flags.parse(args)) {
        return usageError("train", *error + (error->find("unknown flag") == 0
                                                 ? "; with --resume only --steps, --threads, "
                                                   "--distributed, --check and --check-time "
                                                   "apply"
                                                 : ""));
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    if (auto exit = joinGroup(plan)) {
        return *exit;
    }
    const auto checkpoint = resumableCheckpoint(dir);
    if (checkpoint) {
        plan.trainer = Trainer::resume(*checkpoint, steps);
    } else if (holdsRun(dir)) {
        // stopped (killed) before its first checkpoint: the run starts again from its config.json,
        // with the same seeds, so the same steps follow
        RunSpec spec;
        try {
            spec = runSpecFromJson(readRunConfig(dir));
        } catch (const std::exception& e) {
            throw std::runtime_error(dir + "/" + RunFiles::kConfig + ": " + e.what());
        }
        if (steps > 0) {
            spec.train.steps = steps;
        }
        plan.trainer = std::make_unique<Trainer>(spec.task, spec.model, spec.train);
        std::printf("%s has no %s yet: starting the run again from step 0\n", dir.c_str(),
                    RunFiles::kCheckpoint);
    } else {
        return usageError("train", "--resume: '" + dir + "' has no " + RunFiles::kCheckpoint +
                                       " (allowed: a folder written by nopescope-cli train)");
    }
    if (threads >= 0) {
        plan.trainer->setThreads(threads);
    }
    if (const auto best = bestCheckpoint(dir)) {
        plan.trainer->loadBest(*best);
    }
    plan.out = dir;
    plan.resumed = true;
    return std::nullopt;
}

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, one line each,
// their checks, the work, the output); split, the flags' variables would travel between parts.
std::optional<int> planFresh(const Args& args, RunPlan& plan) {
    const std::string taskArg = peekFlag(args, "task").value_or("addition");
    const std::string presetArg = peekFlag(args, "preset").value_or("quick");
    const TaskKind presetTask = parseTask(taskArg).value_or(TaskKind::Addition);
    const Preset preset =
        makePreset(presetArg, presetTask).value_or(*makePreset("quick", presetTask));

    std::string task = "addition";
    std::string presetName = "quick";
    std::string out;
    RunSpec spec{presetTask, preset.model, preset.train, preset.name};
    ModelFlags modelFlags(&spec);
    TrainFlags trainFlags(&spec, args);
    FlagSet flags(
        "nopescope-cli train --task T [--preset quick|cpu|paper] [model, init and training flags] "
        "[--out DIR] [--distributed]\n       nopescope-cli train --resume DIR [--steps N] "
        "[--threads N] [--distributed]",
        "Trains a NoPE model on the task. Prints a progress line per evaluation and, at the end,\n"
        "the adjacency score of each layer at init and trained. Writes config.json, metrics.csv,\n"
        "evaluations.csv, adjacency.csv, snapshots/, final_scores.csv, checkpoint.pt, best.pt\n"
        "and weights.pt into DIR. A preset sets the defaults shown here for the chosen task;\n"
        "flags override them.\n"
        "Ctrl-C stops after the current step and still writes everything.");
    flags.addChoice("task", &task, "task to learn", taskNames());
    flags.addChoice("preset", &presetName,
                    "quick: minutes on a CPU (2 layers); cpu: the paper's 6-layer model for a "
                    "CPU; paper: the authors' setup",
                    presetNames());
    modelFlags.addTo(flags);
    trainFlags.addTo(flags);
    flags.addString(
        "out", &out,
        "run folder (default runs/cli-<task>-<preset>-<time>, under $NOPESCOPE_RUNS when set)",
        "DIR");
    flags.addString("resume", &out, "continue the run in DIR (see the second usage line)", "DIR");
    flags.addSwitch("check", &plan.checkOnly, kCheckHelp);
    flags.addDouble("check-time", &plan.checkSeconds, kCheckTimeHelp, 0.0, 3600.0);
    flags.addSwitch("distributed", &plan.distributed, kDistributedHelp);
    if (auto error = flags.parse(args)) {
        return usageError("train", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    ModelConfig model;
    if (auto error = modelFlags.build(flags, model)) {
        return usageError("train", *error);
    }
    if (auto error = trainFlags.build(flags)) {
        return usageError("train", *error);
    }
    const TrainConfig& train = spec.train;
    if (train.device == DeviceKind::Cuda && !torch::cuda::is_available()) {
        return usageError("train", "--device: cuda is not available in this build (allowed: cpu)");
    }
    // refused before anything is allocated, with the estimate and what the machine has
    if (const auto error = trainingMemoryError(RunSpec{*parseTask(task), model, train})) {
        return usageError("train", describe(*error));
    }
    if (auto exit = joinGroup(plan)) {
        return *exit;
    }
    if (out.empty() && !plan.writes()) {
        out = "(rank 0's)";
    } else if (out.empty()) {
        out = newRunFolder("cli", task, presetName).string();
    }
    if (!plan.writes()) {
        // rank 0 checks and writes the folder
    } else if (fs::exists(out) && !fs::is_directory(out)) {
        return usageError("train", "--out: '" + out + "' is a file (allowed: a folder)");
    }
    if (plan.writes() && holdsRun(out)) {
        return usageError("train", "--out: '" + out +
                                       "' already holds a run (allowed: a new folder; or "
                                       "continue it with --resume " +
                                       out + ")");
    }
    try {
        plan.trainer = std::make_unique<Trainer>(*parseTask(task), model, train);
    } catch (const std::invalid_argument& e) {
        return usageError("train", e.what());
    }
    plan.out = out;
    plan.preset = presetName;
    return std::nullopt;
}

bool rawSwitch(const Args& args, const std::string& name) {
    for (const auto& a : args) {
        if (a == "--" + name || a.rfind("--" + name + "=", 0) == 0) {
            return true;
        }
    }
    return false;
}

// Every rank joins the group before any gives up, then all vote: a rank that refused its flags
// (a run folder in the way, a bad value) stops the others at once instead of leaving them at
// the rendezvous until the timeout. `refused` is this rank's own planning result. Then every
// rank takes rank 0's weights.
std::optional<int> startGroup(const Rendezvous& r, const std::optional<int>& refused,
                              Trainer* trainer) {
    int minutes = kGroupTimeoutMinutes;
    std::optional<int> ownRefusal = refused;
    if (const char* text = std::getenv("NOPESCOPE_GROUP_TIMEOUT_MINUTES"); text && *text) {
        const auto value = parseInteger<int64_t>(text);
        if (!value || *value < 1 || *value > kMaxGroupTimeoutMinutes) {
            std::fprintf(stderr,
                         "nopescope-cli train: NOPESCOPE_GROUP_TIMEOUT_MINUTES is '%s' (allowed: "
                         "1 to %d minutes, %d by default)\n",
                         text, kMaxGroupTimeoutMinutes, kGroupTimeoutMinutes);
            // joining anyway, with the default, to refuse with the others
            ownRefusal = ownRefusal.value_or(kExitUsage);
        } else {
            minutes = static_cast<int>(*value);
        }
    }
    std::shared_ptr<DataParallel> group;
    double refusals = 0.0;
    try {
        group = std::make_shared<DataParallel>(r, std::chrono::minutes(minutes));
        refusals = group->sum({ownRefusal ? 1.0 : 0.0}).front();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nopescope-cli train: %s\n", e.what());
        return ownRefusal ? *ownRefusal : kExitFailure;
    }
    if (ownRefusal) {
        return *ownRefusal;
    }
    if (refusals > 0) {
        std::fprintf(stderr,
                     "nopescope-cli train: %.0f of the %d ranks refused their flags (their own "
                     "messages say why); rank %d stops too\n",
                     refusals, r.worldSize, r.rank);
        return kExitUsage;
    }
    try {
        trainer->setDataParallel(group);
    } catch (const std::invalid_argument& e) {
        return usageError("train", e.what());
    }
    return std::nullopt;
}

// Ranks other than 0 train their share and write nothing; they end when rank 0 does.
int runFollower(const Rendezvous& r, Trainer& trainer) {
    std::printf(
        "rank %d of %d: training its share of every batch; rank 0 evaluates and writes "
        "the run folder\n",
        r.rank, r.worldSize);
    std::fflush(stdout);
    g_running = &trainer.control();
    std::signal(SIGINT, onInterrupt);
    const TrainOutcome outcome = trainer.run(TrainerCallbacks{});
    g_running = nullptr;
    std::signal(SIGINT, SIG_DFL);
    std::printf("rank %d: %s\n", r.rank, outcome.message.c_str());
    return outcome.reason == StopReason::NonFinite ? kExitFailure : kExitOk;
}

}  // namespace

int runTrain(const Args& args) {
    RunPlan plan;
    const bool resume = peekFlag(args, "resume").has_value();
    // configure before any tensor work; the trainer sets its own thread count when it runs
    configureRuntime(0);
    // --distributed: where the group meets, known before the flags are checked, so that a rank
    // whose flags are refused still meets the others to tell them
    std::optional<Rendezvous> meeting;
    const bool help =
        rawSwitch(args, "help") || std::find(args.begin(), args.end(), "-h") != args.end();
    if (rawSwitch(args, "distributed") && !rawSwitch(args, "check") && !help) {
        meeting = rendezvousFromEnvironment().rendezvous;
    }
    std::optional<int> planned;
    try {
        planned = resume ? planResume(args, plan) : planFresh(args, plan);
    } catch (const std::exception& e) {
        if (!meeting) {
            throw;  // main prints it
        }
        std::fprintf(stderr, "nopescope-cli train: %s\n", errorText(e).c_str());
        planned = kExitFailure;  // and the others hear of it
    }
    if (meeting) {
        if (auto exit = startGroup(*meeting, planned, plan.trainer.get())) {
            return *exit;
        }
    } else if (planned) {
        return *planned;
    }
    if (plan.checkOnly) {
        if (plan.checkSeconds > 0.0 && plan.trainer) {
            printPlan(*plan.trainer, plan.checkSeconds);
        }
        return kExitOk;
    }
    Trainer& trainer = *plan.trainer;
    if (plan.rendezvous && !plan.writes()) {
        return runFollower(*plan.rendezvous, trainer);
    }
    nlohmann::json config = trainer.configJson();
    if (plan.resumed) {
        config = readRunConfig(plan.out);
        config["train"]["steps"] = trainer.trainConfig().steps;
    } else {
        config["preset"] = plan.preset;
    }
    if (plan.rendezvous) {
        config["world_size"] = plan.rendezvous->worldSize;
    }
    RunRecorder recorder(trainer, plan.out, config, plan.resumed);

    const ModelConfig& m = trainer.modelConfig();
    const TrainConfig& t = trainer.trainConfig();
    std::printf(
        "%s %s on %s: %d layers x %d wide, %d heads, pe %s, %s attention; %s objective, "
        "%s, batch %d, lr %.3g, %d steps\nrun folder: %s\n\n",
        plan.resumed ? "resuming" : "training", plan.preset.empty() ? "" : plan.preset.c_str(),
        taskName(trainer.task()).c_str(), m.nLayer, m.nEmbd, m.nHead,
        toString(m.positional).c_str(), toString(m.attention).c_str(),
        toString(t.objective).c_str(), precisionText(t.precision).c_str(), t.batchSize,
        t.learningRate, t.steps, plan.out.c_str());
    if (trainer.microBatches() > 1) {
        std::printf(
            "micro-batches: each step's batch in %d parts, their gradients accumulated "
            "(%s)\n\n",
            trainer.microBatches(),
            t.microBatches == 0 ? "as few as fit in memory" : "--micro-batches");
    }
    printCurriculum(trainer.curriculumStages(), t.curriculumSteps, t.steps);
    if (plan.rendezvous) {
        std::printf("data parallel: %d processes, each trains on %d of the batch's %d rows\n\n",
                    plan.rendezvous->worldSize, t.batchSize / plan.rendezvous->worldSize,
                    t.batchSize);
    }

    TrainerCallbacks print;
    print.evaluated = [](const Snapshot& progress, bool best) { printProgress(progress, best); };
    g_running = &trainer.control();
    std::signal(SIGINT, onInterrupt);
    const TrainOutcome outcome = trainer.run(recorder.wrap(print));
    g_running = nullptr;
    std::signal(SIGINT, SIG_DFL);
    const RunRecorder::Final final = recorder.finish(outcome);
    const Analysis& initAnalysis = final.init;
    const Analysis& trained = final.trained;

    std::printf("\n%s\n", outcome.message.c_str());
    const std::string label = outcome.bestStep >= 0
                                  ? "trained = best checkpoint: step " +
                                        std::to_string(outcome.bestStep) + ", test accuracy " +
                                        fixed(outcome.bestAccuracy, 2) + "%"
                                  : "trained = last step";
    printFinalTable(initAnalysis, trained, label);
    printByLength(trainer.lastEvaluation());
    std::printf(
        "\nwrote %s: config.json, metrics.csv, evaluations.csv, adjacency.csv, snapshots/, "
        "final_scores.csv, checkpoint.pt, best.pt, weights.pt\n",
        plan.out.c_str());
    return outcome.reason == StopReason::NonFinite ? kExitFailure : kExitOk;
}

}  // namespace nope::cli
