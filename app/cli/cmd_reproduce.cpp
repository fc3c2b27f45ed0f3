// nopescope-cli reproduce: the paper's study as one command. Runs its parts as sweeps into one
// folder (the layer-wise table of the four tasks at init and trained, the size grid, the init
// ablation, the probes, the controls), renders the figures with the window's plots
// (`nopescope --report DIR`, offscreen), and writes report.md with every table, figure, command,
// seed, version, the machine and the wall time of each part. Interrupted, the same command
// continues: finished parts are kept and a part's finished runs too.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/report.h"
#include "study/manifest.h"
#include "util/error_text.h"
#include "util/files.h"
#include "util/stopwatch.h"

namespace nope::cli {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> allTasks() {
    return {"addition", "reversal", "indexing", "ordering"};
}

enum class Scale { Smoke, Quick, Full };

// --smoke: tiny models, prompts and training, to check the whole pipeline in a minute or two.
const std::vector<std::string> kSmokeModel = {"--layers", "2", "--dim", "32", "--heads", "2"};
const std::vector<std::string> kSmokeTraining = {
    "--steps",         "20",  "--eval-every",       "10",  "--snapshot-every", "10",
    "--train-size",    "300", "--test-size",        "100", "--eval-samples",   "50",
    "--final-samples", "32",  "--analysis-samples", "16",  "--batch",          "16",
    "--probe-every",   "0"};

void append(std::vector<std::string>& args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
}

// The parts of the study, in the order they run.
std::vector<ReportPart> planParts(Scale scale, int seeds) {
    const bool quick = scale != Scale::Full;
    const bool smoke = scale == Scale::Smoke;
    const std::string s = std::to_string(seeds);
    const std::string samples = smoke ? "32" : "256";
    std::vector<ReportPart> parts;
    for (const auto& task : allTasks()) {
        parts.push_back({"init-" + task,
                         "tasks",
                         task,
                         {"--grid", "attention=causal,bidirectional positional=none,learned",
                          "--seeds", s, "--task", task, "--samples", samples}});
    }
    parts.push_back({"sizes",
                     "sizes",
                     "addition",
                     {"--grid", smoke ? "layers=1,2 dim=32,64" : "layers=6,12,24 dim=192,384,768",
                      "--seeds", s, "--task", "addition", "--samples", samples}});
    parts.push_back({"init-scheme",
                     "init",
                     "addition",
                     {"--grid", "init-mean=0,4,8 init-std=0.002,0.02,0.2", "--init", "normal",
                      "--seeds", s, "--task", "addition", "--samples", samples}});
    parts.push_back(
        {"probes",
         "probes",
         "addition",
         {"--grid", "attention=causal,bidirectional", "--probes", "--seeds", s, "--task",
          "addition", "--samples", samples, "--preset", quick ? "fast" : "full"}});
    // Trained: in the quick report the tasks the quick preset learns in minutes on two cores
    // (docs/presets.md), one seed each; the full report trains every task with the paper's
    // recipe, every seed.
    const std::vector<std::string> trained =
        quick ? std::vector<std::string>{"addition", "reversal"} : allTasks();
    for (const auto& task : trained) {
        parts.push_back({"trained-" + task,
                         "trained",
                         task,
                         {"--trained", quick ? "quick" : "paper", "--grid", "positional=none",
                          "--seeds", quick ? "1" : s, "--task", task},
                         quick ? 1 : 0});  // one run: every core's thread for it
    }
    if (smoke) {
        for (auto& part : parts) {
            // the sizes part sweeps layers and width itself; 2 heads divide its widths
            append(part.args,
                   part.kind == "sizes" ? std::vector<std::string>{"--heads", "2"} : kSmokeModel);
            if (part.kind == "trained") {
                append(part.args, kSmokeTraining);
            }
            if (part.kind == "probes") {
                append(part.args, {"--probe-length", "8", "--probe-train-strings", "64",
                                   "--probe-test-strings", "32"});
            }
        }
    }
    return parts;
}

bool finished(const fs::path& dir) {
    if (!study::holdsSweep(dir)) {
        return false;
    }
    for (const auto& run : study::readManifest(dir).runs) {
        if (run.status != study::RunStatus::Done) {
            return false;  // a failed run is run again: its sweep resumes
        }
    }
    return true;
}

const char* scaleName(Scale scale) {
    return scale == Scale::Smoke ? "smoke" : scale == Scale::Quick ? "quick" : "full";
}

// DIR/study.json: the scale and seeds of the study in DIR. A later invocation continues it
// only with the same ones; returns the problem when they differ.
std::optional<std::string> claimStudy(const fs::path& dir, Scale scale, int seeds) {
    const fs::path file = dir / "study.json";
    const nlohmann::json wanted = {{"scale", scaleName(scale)}, {"seeds", seeds}};
    if (fs::exists(file)) {
        nlohmann::json held;
        try {
            held = nlohmann::json::parse(readFile(file));
        } catch (const std::exception& e) {
            return "--out: " + file.string() + " is damaged (" + nope::errorText(e) +
                   "; allowed: a new folder)";
        }
        if (held != wanted) {
            return "--out: " + dir.string() + " holds a " + held.value("scale", "?") +
                   " study with " + std::to_string(held.value("seeds", 0)) +
                   " seeds (allowed: the same scale and --seeds to continue it, or a new "
                   "folder)";
        }
        return std::nullopt;
    }
    fs::create_directories(dir);
    writeFileAtomic(file, wanted.dump(2) + "\n");
    return std::nullopt;
}

// Runs one part's sweep (or resumes it); returns the sweep's exit status.
int runPart(ReportPart& part, const fs::path& dir, int jobs) {
    const fs::path folder = dir / part.name;
    if (finished(folder)) {
        std::fprintf(stderr, "reproduce: %s is done, kept\n", part.name.c_str());
        recordTiming(dir, part, 0.0);
        part.status = kExitOk;
        for (const auto& run : study::readManifest(folder).runs) {
            part.status = run.status == study::RunStatus::Failed ? kExitFailure : part.status;
        }
        return part.status;
    }
    Args args = study::holdsSweep(folder) ? Args{"--resume", folder.string()} : part.args;
    if (!study::holdsSweep(folder)) {
        args.insert(args.end(), {"--out", folder.string()});
    }
    if (jobs > 0 || part.jobs > 0) {
        args.insert(args.end(), {"--jobs", std::to_string(jobs > 0 ? jobs : part.jobs)});
    }
    std::fflush(stdout);  // the previous part's table before this part's progress
    std::fprintf(stderr, "reproduce: %s: nopescope-cli sweep %s\n", part.name.c_str(),
                 commandLine(args).c_str());
    const auto start = std::chrono::steady_clock::now();
    const int status = runSweep(args);
    recordTiming(dir, part, secondsSince(start));
    part.status = status;
    return status;
}

}  // namespace

// Longer than 60 lines for a reason: a command reads top to bottom (its flags, their checks,
// the parts, the report); split, the flags' variables would travel between parts.
int runReproduce(const Args& args) {
    std::string out;
    bool quick = false;
    bool smoke = false;
    int seeds = 0;
    int jobs = 0;
    bool noFigures = false;
    FlagSet flags(
        "nopescope-cli reproduce --out DIR [--quick | --smoke] [--seeds N] [--jobs N] "
        "[--no-figures]",
        "Regenerates the paper's study into DIR: the adjacency score per layer for the four\n"
        "tasks at init and trained, the size grid (layers x widths), the init ablation (mean x\n"
        "std), the probes (vector, variance, cosine: R and NRMSE) and the controls\n"
        "(bidirectional attention, learned PE), each a sweep over seeds in its own folder, then\n"
        "the figures (PNG and SVG, rendered by `nopescope --report DIR`) and report.md with every\n"
        "table, figure, command, seed, version, the machine and the wall time of each part.\n"
        "--quick: 3 seeds, the fast probes, and only addition and reversal trained (the quick\n"
        "preset, one seed); indexing and ordering at init only. Under 30 minutes on 2 cores.\n"
        "Without --quick: 5 seeds, the full probes, every task trained with the paper preset\n"
        "(days on a CPU). Run the same command again to continue an interrupted study.");
    flags.addString("out", &out, "folder of the study (created; an existing study continues)",
                    "DIR");
    flags.addSwitch("quick", &quick, "the quick study: fewer seeds, quick presets");
    flags.addSwitch("smoke", &smoke,
                    "a check of the whole pipeline in a minute or two: 2-layer, 32-wide models, "
                    "32 prompts, 20 training steps (the numbers mean nothing)");
    flags.addInt("seeds", &seeds, "seeds of the init parts (default 2 smoke, 3 quick, 5 full)", 1,
                 1000);
    flags.addInt("jobs", &jobs, "runs at once within a part (0 = one per core)", 0, 256);
    flags.addSwitch("no-figures", &noFigures,
                    "leave the figures out (render them later with nopescope --report DIR)");
    if (auto error = flags.parse(args)) {
        return usageError("reproduce", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    if (out.empty()) {
        return usageError("reproduce", "--out: needed (allowed: a folder for the study)");
    }
    const fs::path dir = fs::absolute(out);
    if (fs::exists(dir) && !fs::is_directory(dir)) {
        return usageError("reproduce", "--out: '" + out + "' is a file (allowed: a folder)");
    }
    if (quick && smoke) {
        return usageError("reproduce", "--smoke: not with --quick (allowed: one of them)");
    }
    const Scale scale = smoke ? Scale::Smoke : quick ? Scale::Quick : Scale::Full;
    if (!flags.given("seeds")) {
        seeds = smoke ? 2 : quick ? 3 : 5;
    }
    if (auto problem = claimStudy(dir, scale, seeds)) {
        return usageError("reproduce", *problem);
    }
    std::vector<ReportPart> parts = planParts(scale, seeds);
    const auto start = std::chrono::steady_clock::now();
    for (auto& part : parts) {
        const int status = runPart(part, dir, jobs);
        if (status == kExitInterrupted) {
            std::fprintf(stderr, "reproduce: interrupted in %s; the same command continues\n",
                         part.name.c_str());
            return kExitInterrupted;
        }
        if (status == kExitUsage) {
            return status;  // the sweep said why
        }
    }
    ReportContext context{dir,
                          scale != Scale::Full,
                          seeds,
                          smoke ? 32 : 256,
                          "nopescope-cli reproduce " + commandLine(args),
                          smoke ? "2 x 32" : "default (6 x 384)",
                          smoke   ? "quick preset, 2 x 32"
                          : quick ? "quick preset (2 x 256)"
                                  : "paper preset (6 x 384)",
                          secondsSince(start)};
    for (const auto& part : parts) {
        context.partSeconds += part.seconds;
    }
    writeReportIndex(context, parts);
    if (!noFigures) {
        renderFigures(dir);
    }
    writeReport(context, parts);
    std::printf("wrote %s\n", (dir / "report.md").c_str());
    int failed = 0;
    for (const auto& part : parts) {
        failed += part.status == kExitOk ? 0 : 1;
    }
    return failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace nope::cli
