// nopescope-cli analyze: builds a model at initialization (or loads a saved one), runs it on test
// prompts of a task, and prints (and optionally writes) the adjacency, norm and variance scores
// of every capture point and layer.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/analyzer.h"
#include "cli/commands.h"
#include "cli/model_source.h"
#include "run/scores_io.h"
#include "tasks/batch.h"
#include "tasks/vocab.h"
#include "training/evaluation.h"
#include "util/files.h"
#include "util/format.h"
#include "util/runtime.h"
#include "util/stopwatch.h"

namespace nope::cli {

namespace {

constexpr const char* kAttentionWeights = "attn_weights";

void printAttention(const AttentionAnalysis& attention) {
    std::printf("\n%5s %4s  %8s  %13s\n", "layer", "head", "entropy", "mean distance");
    for (const auto& h : attention.heads) {
        std::printf("%5d %4d  %8.3f  %13.3f\n", h.layer, h.head, h.entropy, h.meanDistance);
    }
}

// attention.csv (layer,head,entropy,mean_distance) and attention/layer<l>_head<h>.csv.
void writeAttention(const std::filesystem::path& dir, const AttentionAnalysis& attention) {
    std::string csv = "layer,head,entropy,mean_distance\n";
    for (const auto& h : attention.heads) {
        csv += std::to_string(h.layer) + "," + std::to_string(h.head) + "," + fixed(h.entropy, 6) +
               "," + fixed(h.meanDistance, 6) + "\n";
        writeFileAtomic(
            dir / "attention" /
                ("layer" + std::to_string(h.layer) + "_head" + std::to_string(h.head) + ".csv"),
            matrixCsv(h.meanMatrix, attention.seqLen));
    }
    writeFileAtomic(dir / "attention.csv", csv);
}

void printTable(const Analysis& analysis) {
    std::printf("%-10s %5s  %9s  %7s  %6s  %8s\n", "point", "layer", "adjacency", "std", "norm",
                "variance");
    for (const auto& row : analysis.rows) {
        std::printf("%-10s %5d  %9.4f  %7.4f  %6.3f  %8.3f\n", toString(row.point).c_str(),
                    row.layer, row.adjacencyMean, row.adjacencyStd, row.normScore,
                    row.varianceScore);
    }
}

void printAnswers(const std::vector<PromptAnswer>& answers) {
    std::printf("\n%-24s  %-20s  %-20s  %s\n", "prompt", "answer", "expected", "verdict");
    for (const auto& a : answers) {
        std::printf("%-24s  %-20s  %-20s  %s\n", a.prompt.c_str(), a.answer.c_str(),
                    a.expected.empty() ? "-" : a.expected.c_str(),
                    a.expected.empty() ? "not a task prompt"
                    : a.correct        ? "correct"
                                       : "wrong");
    }
}

void printProjection(const ProjectionSet& projection) {
    std::printf("\n%-10s %5s  %6s  %9s  %9s  %9s  %10s\n", "point", "layer", "method", "explained",
                "axis 2", "axis 3", "R position");
    for (const auto& p : projection.items) {
        std::printf("%-10s %5d  %6s  %9.4f  %9.4f  %9.4f  %10.4f\n", toString(p.point).c_str(),
                    p.layer, toString(p.method).c_str(), p.explained[0], p.explained[1],
                    p.explained[2], p.rPosition);
    }
}

// The lines of a prompts file, one prompt each (a trailing '\r' dropped, empty lines skipped).
std::optional<std::string> readPromptsFile(const std::string& path, std::vector<std::string>& out) {
    std::ifstream in(path);
    if (!in) {
        return "--prompts-file: cannot read '" + path +
               "' (allowed: a text file, one prompt a line)";
    }
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        if (!line.empty()) {
            out.push_back(line);
        }
    }
    if (out.empty()) {
        return "--prompts-file: '" + path + "' holds no prompt (allowed: one prompt a line)";
    }
    return std::nullopt;
}

// The user's prompts' problems: characters outside the vocabulary, or a padded length beyond the
// model's context. Sets `length` to the padded length.
std::optional<std::string> checkOwnPrompts(const std::vector<std::string>& prompts,
                                           const std::string& flag, int taskLength, int blockSize,
                                           bool padToTask, int& length) {
    length = 0;
    for (const auto& p : prompts) {
        if (const std::string problem = vocab::outsideMessage(p); !problem.empty()) {
            return flag + ": prompt '" + p + "': " + problem;
        }
        if (static_cast<int>(p.size()) > blockSize) {
            return flag + ": prompt '" + p + "' has " + std::to_string(p.size()) +
                   " characters, longer than the model's context of " + std::to_string(blockSize) +
                   " (allowed: up to " + std::to_string(blockSize) + ")";
        }
        length = std::max(length, static_cast<int>(p.size()));
    }
    if (padToTask && taskLength <= blockSize) {
        length = std::max(length, taskLength);
    }
    return std::nullopt;
}

}  // namespace

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, one line each,
// their checks, the work, the output); split, the flags' variables would travel between parts.
int runAnalyze(const Args& args) {
    std::string task = "addition";
    int samples = 256;
    uint64_t dataSeed = 1234;
    std::vector<std::string> points = {"embedding", "attn"};
    std::string out;
    int threads = 0;
    bool json = false;
    bool check = false;
    std::vector<std::string> ownPrompts, filePrompts;
    std::string promptsFile;
    std::string padding = "longest";
    std::string projection;
    int projectionPrompts = 256;
    std::string precision = "fp32";
    ModelSource source;
    const DataConfig data;

    FlagSet flags(
        "nopescope-cli analyze --task T [--samples N | --prompt TEXT... | --prompts-file FILE] "
        "[model flags | --checkpoint PATH] [--point P,Q] [--projection pca|mds] [--out DIR]",
        "Builds the model at initialization (or loads a saved one with --checkpoint), runs it on\n"
        "N test prompts of the task (left-padded with newlines to the task's longest prompt) and\n"
        "prints, per capture point and layer, the adjacency probability score (mean and std over\n"
        "prompts) and the triple scores of the per-token norm and variance shrinking with\n"
        "position. With --out it writes scores.csv, scores.json and the mean self-cosine matrix\n"
        "of each point and layer under matrices/. --checkpoint reads checkpoint.pt, best.pt and\n"
        "weights.pt, a run folder (its best.pt), and nanoGPT's ckpt.pt or a state dict with\n"
        "nanoGPT's names written by PyTorch; --heads is needed only when the file has no config.\n"
        "--prompt (repeatable) and --prompts-file analyse your own strings instead of drawn\n"
        "prompts and add the model's greedy answers (answers.csv). --projection adds each point\n"
        "and layer's hidden states projected to 3 dimensions (projection.csv,\n"
        "projection_summary.csv): pca over every token of the first --projection-prompts prompts,\n"
        "or mds of each prompt's cosine dissimilarity 1 - C; R position is the Pearson R of the\n"
        "first axis with position.");
    flags.addChoice("task", &task, "task whose test prompts are analysed", taskNames());
    flags.addInt("samples", &samples, "test prompts to analyse", 1, data.testSize);
    flags.addUint64("data-seed", &dataSeed, "seed of the dataset and of the prompt draw");
    source.addTo(flags);
    std::vector<std::string> choices = pointNames();
    choices.push_back(kAttentionWeights);
    flags.addList("point", &points,
                  "capture points to score; attn_weights: every head's attention weights", choices);
    flags.addRepeated("prompt", &ownPrompts,
                      "a prompt of your own, analysed in place of drawn test prompts", "TEXT");
    flags.addString("prompts-file", &promptsFile,
                    "a text file of prompts, one a line, in place of drawn test prompts", "FILE");
    flags.addChoice("padding", &padding,
                    "own prompts left-padded with newlines to the longest given (one prompt: as "
                    "typed, like the window's Explore tab) or to the task's longest prompt (as "
                    "drawn prompts are: the same matrices)",
                    {"longest", "task"});
    flags.addChoice("projection", &projection,
                    "project hidden states to 3 dimensions: principal components or classical "
                    "scaling of 1 - cosine",
                    projectionMethodNames());
    flags.addInt("projection-prompts", &projectionPrompts,
                 "prompts projected (the first N analysed)", 1, data.testSize);
    flags.addChoice("precision", &precision,
                    "matrix products of the forward passes (bf16 as train's "
                    "--snapshot-precision bf16: faster, adjacency within 0.01; the scores and "
                    "attn_weights stay fp32)",
                    {"fp32", "bf16"});
    flags.addString("out", &out, "folder for scores.csv, scores.json and matrices/", "DIR");
    flags.addInt("threads", &threads, "CPU threads (0 = all cores)", 0, 256);
    flags.addSwitch("json", &json, "print scores.json to stdout instead of the table");
    flags.addSwitch("check", &check, kCheckHelp);
    if (auto error = flags.parse(args)) {
        return usageError("analyze", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    if (auto error = source.check(flags)) {  // loads a --checkpoint (throws on a bad file)
        return usageError("analyze", *error);
    }
    const ModelConfig config = source.config();
    const TaskKind taskKind = *parseTask(task);
    const int promptLength = longestPrompt(taskKind);
    const bool own = !ownPrompts.empty() || !promptsFile.empty();
    int ownLength = 0;
    if (own && flags.given("samples")) {
        return usageError("analyze",
                          "--samples: counts drawn test prompts (allowed: without "
                          "--prompt and --prompts-file)");
    }
    if (!promptsFile.empty()) {
        if (auto error = readPromptsFile(promptsFile, filePrompts)) {
            return usageError("analyze", *error);
        }
    }
    for (const auto& [list, flag] :
         {std::pair{&ownPrompts, "--prompt"}, std::pair{&filePrompts, "--prompts-file"}}) {
        int length = 0;
        if (auto error = checkOwnPrompts(*list, flag, promptLength, config.blockSize,
                                         padding == "task", length)) {
            return usageError("analyze", *error);
        }
        ownLength = std::max(ownLength, length);
    }
    ownPrompts.insert(ownPrompts.end(), filePrompts.begin(), filePrompts.end());
    // Drawn prompts must fit the context (own prompts were checked above).
    if (!own && promptLength > config.blockSize && source.fromCheckpoint()) {
        return usageError("analyze", "--task: the " + task + " prompts have " +
                                         std::to_string(promptLength) +
                                         " tokens, longer than the saved model's context of " +
                                         std::to_string(config.blockSize) +
                                         " (allowed: a task whose prompts fit)");
    }
    if (!own && promptLength > config.blockSize) {
        return usageError("analyze", "--context: " + std::to_string(config.blockSize) +
                                         " is shorter than the " + task + " prompts (allowed: " +
                                         std::to_string(promptLength) + " to 4096)");
    }
    if (!out.empty() && std::filesystem::exists(out) && !std::filesystem::is_directory(out)) {
        return usageError("analyze", "--out: '" + out + "' is a file (allowed: a folder)");
    }
    if (check) {
        return kExitOk;
    }
    CaptureSet pointSet;
    bool withAttention = false;
    for (const auto& p : points) {
        if (p == kAttentionWeights) {
            withAttention = true;
        } else {
            pointSet.insert(*parseCapturePoint(p));
        }
    }

    configureRuntime(threads);
    const auto start = std::chrono::steady_clock::now();
    const PromptSet prompts =
        own ? makePromptSet(ownPrompts, ownLength)
            : makePromptSet(makeTaskData(taskKind, {data.trainSize, data.testSize, dataSeed}),
                            samples, analysisPromptSeed(dataSeed));
    Gpt model = source.build();
    const double setupSeconds = secondsSince(start);

    const auto analysisStart = std::chrono::steady_clock::now();
    AnalysisOptions options;
    options.points = pointSet;
    options.bf16 = precision == "bf16";
    if (!projection.empty()) {
        options.projections = {*parseProjectionMethod(projection)};
        options.projectionPrompts = projectionPrompts;
    }
    const Analysis analysis =
        pointSet.empty() ? Analysis{} : analyze(*model, prompts.tokens, options);
    const AttentionAnalysis attention =
        withAttention ? analyzeAttention(*model, prompts.tokens) : AttentionAnalysis{};
    const double analysisSeconds = secondsSince(analysisStart);
    if (analysis.nonFinite) {  // no table of NaN or zeros: say where the values broke
        std::fprintf(stderr, "nopescope-cli analyze: %s; nothing written\n",
                     analysis.nonFiniteMessage().c_str());
        return kExitFailure;
    }
    const std::vector<PromptAnswer> answers =
        own ? answerPrompts(*model, taskKind, ownPrompts, prompts.tokens)
            : std::vector<PromptAnswer>{};

    std::vector<std::string> chosen;
    for (CapturePoint p : pointSet.points()) {
        chosen.push_back(toString(p));
    }
    nlohmann::json meta = {{"command", "analyze"},  {"task", task},
                           {"data_seed", dataSeed}, {"points", chosen},
                           {"model", config},       {"parameters", countParameters(*model)},
                           {"precision", precision}};
    meta.update(source.describe());  // the seed, or the checkpoint's file and format
    if (own) {
        meta["prompts"] = ownPrompts;
        meta["padding"] = padding;
    }
    if (json) {
        nlohmann::json all = meta;
        all.update(scoresJson(analysis));
        if (withAttention) {
            all["attention"] = nlohmann::json::array();
            for (const auto& h : attention.heads) {
                all["attention"].push_back({{"layer", h.layer},
                                            {"head", h.head},
                                            {"entropy", h.entropy},
                                            {"mean_distance", h.meanDistance}});
            }
        }
        for (const auto& a : answers) {
            all["answers"].push_back({{"prompt", a.prompt},
                                      {"answer", a.answer},
                                      {"expected", a.expected},
                                      {"correct", a.correct}});
        }
        for (const auto& p : analysis.projection.items) {
            all["projection"].push_back({{"point", toString(p.point)},
                                         {"layer", p.layer},
                                         {"method", toString(p.method)},
                                         {"explained", p.explained},
                                         {"r_position", p.rPosition}});
        }
        std::cout << all.dump(2) << "\n";
    } else {
        std::printf(
            "%s: %d %s of %d tokens; model %d layers x %d wide, %d heads, pe %s, "
            "%s attention, %s\n\n",
            task.c_str(), static_cast<int>(prompts.tokens.size(0)),
            own ? "own prompts" : "test prompts", static_cast<int>(prompts.tokens.size(1)),
            config.nLayer, config.nEmbd, config.nHead, toString(config.positional).c_str(),
            toString(config.attention).c_str(), source.summary().c_str());
        if (!analysis.rows.empty()) {
            printTable(analysis);
        }
        if (withAttention) {
            printAttention(attention);
        }
        if (!analysis.projection.empty()) {
            printProjection(analysis.projection);
        }
        if (own) {
            printAnswers(answers);
        }
        std::printf(
            "\nsetup %.2f s, analysis %.2f s (forward %.2f s, scores %.2f s, projection %.3f s; %d "
            "threads)\n",
            setupSeconds, analysisSeconds, analysis.forwardSeconds, analysis.scoringSeconds,
            analysis.projectionSeconds, at::get_num_threads());
    }
    if (!out.empty()) {
        writeAnalysisFolder(out, analysis, meta);
        if (withAttention) {
            writeAttention(out, attention);
        }
        if (!analysis.projection.empty()) {
            writeFileAtomic(std::filesystem::path(out) / "projection.csv",
                            projectionCsv(analysis.projection));
            writeFileAtomic(std::filesystem::path(out) / "projection_summary.csv",
                            projectionSummaryCsv(analysis.projection));
        }
        if (own) {
            writeFileAtomic(std::filesystem::path(out) / "answers.csv", answersCsv(answers));
        }
        if (!json) {
            std::printf("wrote %s/scores.csv, scores.json and %zu matrices\n", out.c_str(),
                        analysis.rows.size());
        }
    }
    return kExitOk;
}

}  // namespace nope::cli
