// nopescope-cli probe: position probes on a model at initialization or on a saved model. Prints
// the R and NRMSE of every feature per capture point and layer, with the shuffled-target
// control beside each, and optionally writes probes.csv, probes.json and predictions.csv.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/train_flags.h"
#include "probe/prober.h"
#include "run/probe_io.h"
#include "tasks/batch.h"
#include "util/runtime.h"

namespace nope::cli {

namespace {

std::string cell(double value, int width, int decimals) {
    char buffer[32];
    if (std::isnan(value)) {
        std::snprintf(buffer, sizeof buffer, "%*s", width, "-");
    } else {
        std::snprintf(buffer, sizeof buffer, "%*.*f", width, decimals, value);
    }
    return buffer;
}

// Rows: point and layer; per feature: R, NRMSE and the control's R.
void printTable(const ProbeReport& report) {
    const auto& features = report.config.features;
    std::string header = "point      layer";
    std::string sub = "                ";
    for (auto f : features) {
        char title[64];
        std::snprintf(title, sizeof title, " | %-22s", toString(f).c_str());
        header += title;
        sub += " |      R  NRMSE  ctl R";
    }
    std::printf("%s\n%s\n", header.c_str(), sub.c_str());
    std::vector<std::pair<CapturePoint, int>> sites;
    for (const auto& r : report.results) {
        if (sites.empty() || sites.back() != std::make_pair(r.point, r.layer)) {
            sites.emplace_back(r.point, r.layer);
        }
    }
    for (const auto& [point, layerIndex] : sites) {
        std::string line = toString(point);
        line.resize(10, ' ');
        char layer[16];
        std::snprintf(layer, sizeof layer, " %5d", layerIndex);
        line += layer;
        for (auto f : features) {
            const ProbeResult* r = report.find(point, layerIndex, f);
            const double nan = std::nan("");
            line += " | " + cell(r ? r->pearsonR : nan, 6, 3) + " " +
                    cell(r ? r->nrmse : nan, 6, 3) + " " + cell(r ? r->controlR : nan, 6, 3);
        }
        std::printf("%s\n", line.c_str());
    }
}

// A progress bar on stderr when it is a terminal.
void showProgress(int done, int total, double seconds) {
    if (!isatty(STDERR_FILENO) || total <= 0) {
        return;
    }
    constexpr int kWidth = 30;
    const int filled = kWidth * done / total;
    std::fprintf(stderr, "\rprobes [%s%s] %d/%d epochs, %.0f s ", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, ' ').c_str(), done, total, seconds);
    if (done == total) {
        std::fprintf(stderr, "\n");
    }
    std::fflush(stderr);
}

// "--probe-length prompt" (or "--length prompt"): the task's prompt length, as a number.
Args withPromptLength(Args args) {
    const TaskKind task =
        parseTask(peekFlag(args, "task").value_or("addition")).value_or(TaskKind::Addition);
    const std::string length = std::to_string(longestPrompt(task));
    for (size_t i = 0; i < args.size(); ++i) {
        for (const std::string flag : {"--probe-length", "--length"}) {
            if (args[i] == flag && i + 1 < args.size() && args[i + 1] == "prompt") {
                args[i + 1] = length;
            } else if (args[i] == flag + "=prompt") {
                args[i] = flag + "=" + length;
            }
        }
    }
    return args;
}

}  // namespace

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, one line each,
// their checks, the work, the output); split, the flags' variables would travel between parts.
int runProbe(const Args& args) {
    // The preset sets the defaults (and the help shows them); explicit flags override them.
    std::string preset = peekFlag(args, "preset").value_or("full");
    RunSpec spec;
    spec.train.probe = probePreset(preset).value_or(fullProbeConfig());
    ProbeConfig& config = spec.train.probe;
    std::string task = "addition";
    int probeLayers = static_cast<int>(config.hidden.size()) + 1;
    uint64_t dataSeed = 1234;
    std::string out;
    int threads = 0;
    bool json = false;
    bool check = false;
    ModelSource source;

    FlagSet flags(
        "nopescope-cli probe [model flags | --checkpoint PATH] [--probe-points P] "
        "[--probe-features F,G] [--probe-length T] [--probe-train-chars 5678 "
        "--probe-test-chars 1234] [--probe-layers 4] [--probe-epochs 20] [--probe-seed S] "
        "[--out DIR] [--json]",
        "Trains position probes on the hidden states of a model (fresh at initialization, or\n"
        "loaded with --checkpoint): per capture point, layer and feature (vector, variance,\n"
        "norm, cosine to the last token, cosine row) an MLP that predicts the position from the\n"
        "feature, trained on random strings over --probe-train-chars and tested on strings over\n"
        "--probe-test-chars. Prints Pearson R and NRMSE (RMSE / range of the targets) on the\n"
        "test strings, and the R of a control probe trained on shuffled targets. With --out it\n"
        "writes probes.csv, probes.json and predictions.csv. --probe-length prompt uses the\n"
        "task's prompt length.");
    flags.addChoice("preset", &preset,
                    "probe size: full (the authors' 4-layer MLP, 20 epochs) or fast (the live "
                    "view's); sets the defaults of the probe flags",
                    {"full", "fast"});
    source.addTo(flags);
    flags.addSettings(&spec, {SettingSection::Probe});
    flags.addChoice("task", &task, "task of --probe-data task and of --probe-length prompt",
                    taskNames());
    flags.addInt("probe-layers", &probeLayers,
                 "Linear layers of the probe (1 = a linear probe; uses the first widths)", 1, 9);
    flags.addUint64("data-seed", &dataSeed, "seed of the task data (--probe-data task)");
    flags.addString("out", &out, "folder for probes.csv, probes.json and predictions.csv", "DIR");
    flags.addInt("threads", &threads, "CPU threads (0 = all cores)", 0, 256);
    flags.addSwitch("json", &json, "print probes.json to stdout instead of the table");
    flags.addSwitch("check", &check, kCheckHelp);
    if (auto error = flags.parse(withPromptLength(args))) {
        return usageError("probe", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    if (auto error = source.check(flags)) {
        return usageError("probe", *error);
    }
    fitProbeActivations(flags, config);
    if (flags.given("probe-layers")) {
        const size_t hiddenLayers = static_cast<size_t>(probeLayers - 1);
        if (hiddenLayers > config.hidden.size()) {
            return usageError(
                "probe", "--probe-layers: " + std::to_string(probeLayers) + " needs " +
                             std::to_string(hiddenLayers) + " hidden widths (allowed: 1 to " +
                             std::to_string(config.hidden.size() + 1) + " with --probe-widths " +
                             findSetting("probe-widths")->get(spec) + ")");
        }
        config.hidden.resize(hiddenLayers);
        config.activations.resize(std::min(config.activations.size(), hiddenLayers));
    }
    const TaskKind taskKind = *parseTask(task);
    const ModelConfig modelConfig = source.config();
    if (const FieldErrors errors = validate(config, modelConfig.blockSize); !errors.empty()) {
        return usageError("probe", describe(errors.front()));
    }
    const DataConfig dataConfig;
    if (config.data == ProbeData::Task) {
        if (config.trainStrings + config.testStrings > dataConfig.testSize) {
            return usageError("probe",
                              "--probe-train-strings: with --probe-data task, train and test "
                              "strings together come from the " +
                                  std::to_string(dataConfig.testSize) +
                                  " test prompts (allowed: a sum up to " +
                                  std::to_string(dataConfig.testSize) + ")");
        }
        if (longestPrompt(taskKind) > modelConfig.blockSize) {
            return usageError("probe", "--task: the " + task +
                                           " prompts are longer than the model's context (" +
                                           std::to_string(modelConfig.blockSize) + ")");
        }
    }
    if (!out.empty() && std::filesystem::exists(out) && !std::filesystem::is_directory(out)) {
        return usageError("probe", "--out: '" + out + "' is a file (allowed: a folder)");
    }
    if (check) {
        return kExitOk;
    }
    config.keepPredictions = config.testStrings;  // predictions.csv holds every test string

    configureRuntime(threads);
    Gpt model = source.build();
    ProbeTokens tokens;
    if (config.data == ProbeData::Task) {
        const TaskData taskData =
            makeTaskData(taskKind, {dataConfig.trainSize, dataConfig.testSize, dataSeed});
        const PromptSet prompts = makePromptSet(taskData, config.trainStrings + config.testStrings,
                                                analysisPromptSeed(dataSeed));
        tokens = taskProbeTokens(config, prompts.tokens);
    } else {
        tokens = randomProbeTokens(config);
    }
    const auto start = std::chrono::steady_clock::now();
    ProbeRunHooks hooks;
    hooks.progress = [&](int done, int total) {
        showProgress(
            done, total,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
    const ProbeReport report = runProbes(*model, config, tokens, hooks);

    nlohmann::json meta = {{"command", "probe"}, {"model", modelConfig}};
    meta.update(source.describe());
    if (config.data == ProbeData::Task) {
        meta["task"] = task;
        meta["data_seed"] = dataSeed;
    }
    if (json) {
        nlohmann::json all = meta;
        all.update(probesJson(report));
        std::cout << all.dump(2) << "\n";
    } else {
        std::printf(
            "probes on %s strings of %d tokens (%d train, %d test); probe %zu Linear "
            "layers, %d epochs, %s, seed %llu\n\n",
            config.data == ProbeData::Random ? "random" : task.c_str(), report.sequenceLength,
            report.trainStrings, report.testStrings, config.hidden.size() + 1, config.epochs,
            toString(config.precision).c_str(), static_cast<unsigned long long>(config.seed));
        printTable(report);
        std::printf("\n%zu probes%s in %.1f s (%d threads)\n",
                    report.results.size() * (config.controls ? 2 : 1),
                    config.controls ? " with controls" : "", report.seconds, at::get_num_threads());
    }
    if (!out.empty()) {
        writeProbeFolder(out, report, meta);
        if (!json) {
            std::printf("wrote %s/probes.csv, probes.json and predictions.csv\n", out.c_str());
        }
    }
    return kExitOk;
}

}  // namespace nope::cli
