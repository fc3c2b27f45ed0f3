// nopescope-cli mechanism ablate: the authors' ablations at init. The model (at init, or saved)
// runs on test prompts once per ablation, with one switch of its attention or its inputs, and the
// adjacency score of every capture point and layer is tabulated: rows the ablations, columns
// the embedding and layers 1..L.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/mechanism_commands.h"
#include "cli/model_source.h"
#include "mechanism/ablation_runner.h"
#include "tasks/batch.h"
#include "util/files.h"
#include "util/runtime.h"

namespace nope::cli {

namespace {

std::string ablationHelp() {
    std::string text;
    for (Ablation a : allAblations()) {
        char line[160];
        std::snprintf(line, sizeof line, "  %-9s %s\n", toString(a).c_str(),
                      describeAblation(a, false).c_str());
        text += line;
    }
    return text;
}

// One table per per-block capture point: rows the ablations, columns the embedding (when scored)
// and layers 1..L; the embedding alone when it is the only point.
void printTable(const AblationTable& table) {
    const bool withEmbedding = table.config.points.contains(CapturePoint::Embedding);
    std::vector<CapturePoint> tables;
    for (CapturePoint p : table.config.points.points()) {
        if (p != CapturePoint::Embedding) {
            tables.push_back(p);
        }
    }
    if (tables.empty()) {
        tables.push_back(CapturePoint::Embedding);
    }
    const int layers = table.results.front().analysis.layerCount();
    for (CapturePoint p : tables) {
        const int lastLayer = p == CapturePoint::Embedding ? 0 : layers;
        std::printf("\n%s: adjacency score, mean over %d prompts\n%-9s", toString(p).c_str(),
                    table.samples, "ablation");
        if (withEmbedding) {
            std::printf(" %9s", "embedding");
        }
        for (int l = 1; l <= lastLayer; ++l) {
            std::printf("  layer %-2d", l);
        }
        std::printf("\n");
        for (const auto& r : table.results) {
            std::printf("%-9s", toString(r.ablation).c_str());
            if (withEmbedding) {
                std::printf(" %9.4f", r.analysis.find(CapturePoint::Embedding, 0)->adjacencyMean);
            }
            for (int l = 1; l <= lastLayer; ++l) {
                std::printf(" %9.4f", r.analysis.find(p, l)->adjacencyMean);
            }
            std::printf("%s\n", r.nonFinite ? "  (NaN states)" : "");
        }
    }
}

nlohmann::json tableJson(const AblationTable& table) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : table.results) {
        for (const auto& row : r.analysis.rows) {
            rows.push_back({{"ablation", toString(r.ablation)},
                            {"point", toString(row.point)},
                            {"layer", row.layer},
                            {"adjacency_mean", row.adjacencyMean},
                            {"adjacency_std", row.adjacencyStd},
                            {"non_finite", r.nonFinite}});
        }
    }
    return rows;
}

std::string tokensCsv(const torch::Tensor& tokens) {
    const auto t = tokens.contiguous();
    const int64_t N = t.size(0), T = t.size(1);
    const int64_t* p = t.data_ptr<int64_t>();
    std::string csv;
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t i = 0; i < T; ++i) {
            csv += std::to_string(p[n * T + i]);
            csv += i + 1 < T ? "," : "\n";
        }
    }
    return csv;
}

}  // namespace

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, their checks,
// the work, the output); split, the flags' variables would travel between parts.
int runAblate(const Args& args) {
    std::string task = "addition";
    int samples = 256;
    uint64_t dataSeed = 1234;
    std::vector<std::string> ablations = ablationNames();
    std::vector<std::string> points = {"embedding", "attn"};
    AblationConfig config;
    std::string out;
    int threads = 0;
    bool json = false;
    ModelSource source;
    const DataConfig data;
    FlagSet flags(
        "nopescope-cli mechanism ablate [--task T] [--samples N] [model flags | --checkpoint "
        "PATH] [--ablations A,B] [--shrink-x S] [--as-authors] [--point P,Q] [--out DIR]",
        "Runs the model (at initialization, or a saved one) on N test prompts of the task once\n"
        "per ablation, an inference-time switch of its attention or of its inputs, and prints\n"
        "the adjacency score (mean over prompts) of every capture point and layer: rows the\n"
        "ablations, columns the embedding and layers 1..L. Causality is kept in every variant;\n"
        "--as-authors reproduces the research code's own details instead (the sigmoid weighs\n"
        "future tokens by sigmoid(0), uniform averages all tokens). --out DIR writes\n"
        "ablations.csv (ablation,point,layer,adjacency_mean,adjacency_std), ablations.json (the\n"
        "settings and rows) and tokens.csv (the prompts' token ids, one line each).\n"
        "The ablations:\n" +
            ablationHelp());
    flags.addChoice("task", &task, "task whose test prompts are run", taskNames());
    flags.addInt("samples", &samples, "test prompts", 1, data.testSize);
    flags.addUint64("data-seed", &dataSeed, "seed of the dataset and of the prompt draw");
    source.addTo(flags);
    flags.addList("ablations", &ablations, "the ablations to run, in this order", ablationNames());
    flags.addDouble("shrink-x", &config.shrinkX, "S of shrink_x: q = k = v = x / S", 1e-9, 1e9);
    flags.addSwitch("as-authors", &config.asAuthors,
                    "the research code's details: a non-causal sigmoid and uniform, and a plain "
                    "division (NaN on a zero row sum; see above)");
    flags.addList("point", &points, "capture points to score", pointNames());
    flags.addUint64("input-seed", &config.inputSeed, "seed of the eqx, randx and constant inputs");
    flags.addString("out", &out, "folder for ablations.csv, ablations.json and tokens.csv", "DIR");
    flags.addInt("threads", &threads, "CPU threads (0 = all cores)", 0, 256);
    flags.addSwitch("json", &json, "print ablations.json to stdout instead of the table");
    if (auto error = flags.parse(args)) {
        return usageError("mechanism ablate", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    if (auto error = source.check(flags)) {
        return usageError("mechanism ablate", *error);
    }
    const ModelConfig model = source.config();
    const TaskKind taskKind = *parseTask(task);
    const int promptLength = longestPrompt(taskKind);
    if (promptLength > model.blockSize) {
        return usageError("mechanism ablate",
                          std::string(source.fromCheckpoint() ? "--task" : "--context") + ": the " +
                              task + " prompts have " + std::to_string(promptLength) +
                              " tokens, more than the model's context of " +
                              std::to_string(model.blockSize) +
                              " (allowed: a context of at least the prompt length)");
    }
    config.ablations.clear();
    for (const auto& name : ablations) {
        config.ablations.push_back(*parseAblation(name));
    }
    config.points = CaptureSet{};
    for (const auto& p : points) {
        config.points.insert(*parseCapturePoint(p));
    }
    if (auto problem = checkAblations(config, promptLength, model.nEmbd)) {
        return usageError("mechanism ablate", *problem);
    }
    if (!out.empty() && std::filesystem::exists(out) && !std::filesystem::is_directory(out)) {
        return usageError("mechanism ablate", "--out: '" + out + "' is a file (allowed: a folder)");
    }

    configureRuntime(threads);
    const TaskData taskData = makeTaskData(taskKind, {data.trainSize, data.testSize, dataSeed});
    const PromptSet prompts = makePromptSet(taskData, samples, analysisPromptSeed(dataSeed));
    Gpt gpt = source.build();
    const AblationTable table = runAblations(*gpt, prompts.tokens, config);

    nlohmann::json meta = {{"command", "mechanism ablate"},  {"task", task},
                           {"samples", table.samples},       {"data_seed", dataSeed},
                           {"ablations", ablations},         {"shrink_x", config.shrinkX},
                           {"as_authors", config.asAuthors}, {"points", points},
                           {"input_seed", config.inputSeed}, {"model", model}};
    meta.update(source.describe());
    meta["rows"] = tableJson(table);
    meta["seconds"] = table.seconds;
    if (json) {
        std::cout << meta.dump(2) << "\n";
    } else {
        std::printf(
            "%s: %d test prompts of %d tokens; model %d layers x %d wide, %d heads, %s; "
            "%s attention variants\n",
            task.c_str(), table.samples, table.seqLen, model.nLayer, model.nEmbd, model.nHead,
            source.summary().c_str(), config.asAuthors ? "the authors'" : "causal");
        printTable(table);
        std::printf("\n%zu ablations in %.2f s (%d threads)\n", table.results.size(), table.seconds,
                    at::get_num_threads());
    }
    if (!out.empty()) {
        const std::filesystem::path dir = out;
        writeFileAtomic(dir / "ablations.csv", ablationsCsv(table));
        writeFileAtomic(dir / "ablations.json", meta.dump(2) + "\n");
        writeFileAtomic(dir / "tokens.csv", tokensCsv(prompts.tokens));
        if (!json) {
            std::printf("wrote %s/ablations.csv, ablations.json and tokens.csv\n", out.c_str());
        }
    }
    return kExitOk;
}

}  // namespace nope::cli
