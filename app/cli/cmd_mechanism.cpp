// nopescope-cli mechanism: why the adjacency pattern appears (ablate: cmd_mechanism_ablate.cpp).
// `simulate` averages random input vectors causally with weights no training made (uniform, or
// random softmax weights of a chosen temperature) and scores the self-cosine matrix of the averages
// against the closed form of uniform averaging, sqrt(k/m).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/mechanism_commands.h"
#include "cli/model_source.h"
#include "mechanism/averaging_model.h"
#include "run/scores_io.h"
#include "tasks/batch.h"
#include "util/files.h"
#include "util/runtime.h"

namespace nope::cli {

namespace {

constexpr const char* kSubcommands = "simulate, ablate";

nlohmann::json settingsJson(const AveragingConfig& c) {
    return {{"length", c.length},
            {"dim", c.dim},
            {"weights", toString(c.weights)},
            {"temperature", c.temperature},
            {"samples", c.samples},
            {"attention", c.causal ? "causal" : "bidirectional"},
            {"inputs", toString(c.inputs)},
            {"seed", c.seed}};
}

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, their checks,
// the work, the output); split, the flags' variables would travel between parts.
int runSimulate(const Args& args) {
    AveragingConfig c;
    std::string weights = "uniform";
    std::string inputs = "gaussian";
    std::string task = "addition";
    uint64_t dataSeed = 1234;
    bool bidirectional = false;
    bool json = false;
    std::string out;
    int threads = 0;
    ModelSource source;
    FlagSet flags(
        "nopescope-cli mechanism simulate [--length T] [--dim d] [--weights uniform|random|model] "
        "[--temperature t] [--inputs gaussian|tokens] [--samples N] [--bidirectional] [--seed S] "
        "[--task T] [model flags | --checkpoint PATH] [--out DIR]",
        "Averages N sequences of T input vectors over earlier tokens, as causal attention does,\n"
        "and prints the adjacency score of the averages' self-cosine matrices (mean and std\n"
        "over sequences). The weights: uniform, random softmax weights of the temperature\n"
        "(scores N(0, 1) / t, drawn for every sequence), or model: the attention weights of a\n"
        "model's first layer on the task's test prompts (prompt p's weights in head p mod\n"
        "heads; sequence n takes prompt n). The inputs: gaussian (d dimensions, N(0, 1) entries) "
        "or tokens: the model's\n"
        "token embeddings of those prompts. The model is one at init from the model flags, or\n"
        "a saved one (--checkpoint); with it, T is the prompts' length (and d the model's width\n"
        "for tokens). With uniform weights, gaussian inputs and causal averaging it compares the\n"
        "mean matrix with the closed form sqrt(k/m) for positions k < m. --bidirectional\n"
        "averages over every token (the control: identical rows). --out DIR writes matrix.csv\n"
        "(the mean matrix, T lines of T values), closed_form.csv (where it applies) and\n"
        "score.json.");
    flags.addInt("length", &c.length, "tokens per sequence", 3, 1024);
    flags.addChoice("weights", &weights, "the averaging weights", {"uniform", "random", "model"});
    flags.addDouble("temperature", &c.temperature,
                    "random weights: softmax(scores / t); low t approaches one token each", 1e-6,
                    1e6);
    flags.addChoice("inputs", &inputs, "the vectors averaged", {"gaussian", "tokens"});
    flags.addInt("samples", &c.samples, "sequences averaged and scored", 1, 100000);
    flags.addSwitch("bidirectional", &bidirectional, "average over every token (the control)");
    flags.addChoice("task", &task, "weights model, inputs tokens: the task of the prompts",
                    taskNames());
    flags.addUint64("data-seed", &dataSeed, "seed of the dataset and of the prompt draw");
    // The model flags, --seed and --dim among them: --seed seeds the inputs, the random weights
    // and a model at init; --dim is the inputs' width, and a model at init's.
    source.addTo(flags, /*seedAlsoSeedsOthers=*/true);
    flags.addString("out", &out, "folder for matrix.csv, closed_form.csv and score.json", "DIR");
    flags.addInt("threads", &threads, "CPU threads (0 = all cores)", 0, 256);
    flags.addSwitch("json", &json, "print score.json to stdout instead of the summary");
    if (auto error = flags.parse(args)) {
        return usageError("mechanism simulate", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    c.seed = source.seed();
    c.dim = source.requested().nEmbd;
    c.weights = *parseAveragingWeights(weights);
    c.inputs = *parseAveragingInputs(inputs);
    c.causal = !bidirectional;
    const bool withModel = needsModel(c);
    if (!withModel) {
        for (const char* name :
             {"checkpoint", "task", "data-seed", "layers", "heads", "context", "dropout", "bias",
              "positional", "attention", "init", "init-mean", "init-std"}) {
            if (flags.given(name)) {
                return usageError("mechanism simulate",
                                  std::string("--") + name +
                                      ": only used with --weights model or --inputs tokens");
            }
        }
    }
    if (withModel && flags.given("length")) {
        return usageError("mechanism simulate",
                          "--length: set by the task's prompts with --weights model or --inputs "
                          "tokens (allowed: leave it out, or choose --task)");
    }
    if (c.weights == AveragingWeights::Model && bidirectional) {
        return usageError("mechanism simulate",
                          "--bidirectional: the model's weights decide (allowed: --attention "
                          "bidirectional among the model flags)");
    }
    std::optional<PromptSet> prompts;
    if (withModel) {
        if (auto error = source.check(flags)) {
            return usageError("mechanism simulate", *error);
        }
        const TaskKind taskKind = *parseTask(task);
        c.length = longestPrompt(taskKind);
        if (c.length > source.config().blockSize) {
            return usageError("mechanism simulate",
                              "--task: the " + task + " prompts have " + std::to_string(c.length) +
                                  " tokens, more than the model's context of " +
                                  std::to_string(source.config().blockSize) +
                                  " (allowed: a task whose prompts fit)");
        }
        if (c.inputs == AveragingInputs::Tokens) {
            c.dim = source.config().nEmbd;
        }
        if (c.weights == AveragingWeights::Model) {
            c.causal = source.config().attention == AttentionKind::Causal;
        }
    }
    if (auto problem = checkAveraging(c)) {
        return usageError("mechanism simulate", *problem);
    }
    configureRuntime(threads);
    ModelMaterial material;
    nlohmann::json score = settingsJson(c);
    if (withModel) {
        const DataConfig data;
        const TaskData taskData =
            makeTaskData(*parseTask(task), {data.trainSize, data.testSize, dataSeed});
        const int count = std::min(c.samples, data.testSize);
        prompts = makePromptSet(taskData, count, analysisPromptSeed(dataSeed));
        Gpt model = source.build();
        material = modelMaterial(*model, prompts->tokens);
        score["task"] = task;
        score["data_seed"] = dataSeed;
        score["model"] = source.config();
        score.update(source.describe());
    }
    const AveragingResult r = simulateAveraging(c, material);
    score["adjacency_mean"] = r.adjacencyMean;
    score["adjacency_std"] = r.adjacencyStd;
    score["seconds"] = r.seconds;
    const bool closedForm = closedFormApplies(c);
    std::vector<float> closed;
    if (closedForm) {
        closed = uniformAveragingCosine(c.length);
        score["largest_difference_from_closed_form"] =
            largestLowerDifference(r.meanMatrix, closed, c.length);
    }
    if (json) {
        std::cout << score.dump(2) << "\n";
    } else {
        std::printf("%d sequences of %d tokens x %d dimensions (%s inputs), %s %s averaging",
                    c.samples, c.length, c.dim,
                    c.inputs == AveragingInputs::Tokens ? "token-embedding" : "gaussian",
                    c.causal ? "causal" : "bidirectional", weights.c_str());
        if (c.weights == AveragingWeights::Random) {
            std::printf(" (temperature %g)", c.temperature);
        }
        if (withModel) {
            std::printf("\n  from %s, %s test prompts", source.summary().c_str(), task.c_str());
        }
        std::printf("\n");
        std::printf("adjacency score %.4f ± %.4f (%.2f s)\n", r.adjacencyMean, r.adjacencyStd,
                    r.seconds);
        if (closedForm) {
            std::printf("closed form sqrt(k/m): largest difference of the mean matrix %.4f\n",
                        score["largest_difference_from_closed_form"].get<double>());
        }
    }
    if (!out.empty()) {
        writeFileAtomic(std::filesystem::path(out) / "matrix.csv",
                        matrixCsv(r.meanMatrix, c.length));
        if (closedForm) {
            writeFileAtomic(std::filesystem::path(out) / "closed_form.csv",
                            matrixCsv(closed, c.length));
        }
        writeFileAtomic(std::filesystem::path(out) / "score.json", score.dump(2) + "\n");
        if (!json) {
            std::printf("wrote %s/matrix.csv%s and score.json\n", out.c_str(),
                        closedForm ? ", closed_form.csv" : "");
        }
    }
    return kExitOk;
}

}  // namespace

int runMechanism(const Args& args) {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::cout << "usage: nopescope-cli mechanism <" << kSubcommands << "> [flags]\n"
                  << "  simulate  the averaging effect of causal attention without a model\n"
                  << "  ablate    the authors' ablations at init: the adjacency score of every\n"
                  << "            layer with one switch of the attention or its inputs\n";
        return args.empty() ? kExitUsage : kExitOk;
    }
    if (args[0] == "simulate") {
        return runSimulate(Args(args.begin() + 1, args.end()));
    }
    if (args[0] == "ablate") {
        return runAblate(Args(args.begin() + 1, args.end()));
    }
    return usageError("mechanism",
                      "unknown subcommand '" + args[0] + "' (allowed: " + kSubcommands + ")");
}

}  // namespace nope::cli
