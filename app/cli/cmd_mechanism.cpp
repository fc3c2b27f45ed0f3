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
#include "mechanism/averaging.h"
#include "run/scores_io.h"
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
            {"inputs", "gaussian"},
            {"seed", c.seed}};
}

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, their checks,
// the work, the output); split, the flags' variables would travel between parts.
int runSimulate(const Args& args) {
    AveragingConfig c;
    std::string weights = "uniform";
    bool bidirectional = false;
    bool json = false;
    std::string out;
    int threads = 0;
    FlagSet flags(
        "nopescope-cli mechanism simulate [--length T] [--dim d] [--weights uniform|random] "
        "[--temperature t] [--samples N] [--bidirectional] [--seed S] [--out DIR]",
        "Averages N sequences of T random vectors (d dimensions, N(0, 1) entries) over earlier\n"
        "tokens, as causal attention does, with uniform weights or random softmax weights of\n"
        "the temperature (scores N(0, 1) / t, drawn for every sequence), and prints the\n"
        "adjacency score of the averages' self-cosine matrices (mean and std over sequences).\n"
        "With uniform weights and causal averaging it compares the mean matrix with the closed\n"
        "form sqrt(k/m) for positions k < m. --bidirectional averages over every token (the\n"
        "control: identical rows). --out DIR writes matrix.csv (the mean matrix, T lines of T\n"
        "values), closed_form.csv (uniform causal only) and score.json.");
    flags.addInt("length", &c.length, "tokens per sequence", 3, 1024);
    flags.addInt("dim", &c.dim, "dimensions of the input vectors", 1, 65536);
    flags.addChoice("weights", &weights, "the averaging weights", {"uniform", "random"});
    flags.addDouble("temperature", &c.temperature,
                    "random weights: softmax(scores / t); low t approaches one token each", 1e-6,
                    1e6);
    flags.addInt("samples", &c.samples, "sequences averaged and scored", 1, 100000);
    flags.addSwitch("bidirectional", &bidirectional, "average over every token (the control)");
    flags.addUint64("seed", &c.seed, "seed of the inputs and the random weights");
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
    c.weights = *parseAveragingWeights(weights);
    c.causal = !bidirectional;
    if (auto problem = checkAveraging(c)) {
        return usageError("mechanism simulate", *problem);
    }
    configureRuntime(threads);
    const AveragingResult r = simulateAveraging(c);
    nlohmann::json score = settingsJson(c);
    score["adjacency_mean"] = r.adjacencyMean;
    score["adjacency_std"] = r.adjacencyStd;
    score["seconds"] = r.seconds;
    const bool closedForm = c.weights == AveragingWeights::Uniform && c.causal;
    std::vector<float> closed;
    if (closedForm) {
        closed = uniformAveragingCosine(c.length);
        score["largest_difference_from_closed_form"] =
            largestLowerDifference(r.meanMatrix, closed, c.length);
    }
    if (json) {
        std::cout << score.dump(2) << "\n";
    } else {
        std::printf("%d sequences of %d tokens x %d dimensions, %s %s averaging", c.samples,
                    c.length, c.dim, c.causal ? "causal" : "bidirectional", weights.c_str());
        if (c.weights == AveragingWeights::Random) {
            std::printf(" (temperature %g)", c.temperature);
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
