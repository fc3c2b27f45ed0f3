// The report of `nopescope-cli reproduce`: its parts (each a sweep folder under the study's
// folder), report.json (what the figure renderer, `nopescope --report DIR`, reads), the figures'
// rendering, and report.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nope::cli {

struct ReportPart {
    std::string name;               // its folder under the study: "init-addition", "sizes", ...
    std::string kind;               // tasks, sizes, init, probes, trained
    std::string task;               // the task its runs use
    std::vector<std::string> args;  // the sweep's flags, without --out
    int jobs = 0;                   // runs at once (0: one per core), unless --jobs says
    double seconds = 0.0;           // wall time, over every invocation that worked on it
    int status = 0;                 // the sweep's exit status (0 all done, 1 some failed)
};

struct ReportContext {
    std::filesystem::path dir;
    bool quick = false;
    int seeds = 0;
    int samples = 256;         // prompts per analysis
    std::string command;       // the reproduce command as run
    std::string initModel;     // the model of the init parts: "default (6 x 384)"
    std::string trainedModel;  // the model of the trained parts: "quick preset (2 x 256)"
    double seconds = 0.0;      // this invocation
    double partSeconds = 0.0;  // every part, over every invocation
};

// The arguments as one shell line, each quoted when it holds a space.
std::string commandLine(const std::vector<std::string>& args);

// Adds this invocation's seconds to DIR/timing.json and fills each part's total from it.
void recordTiming(const std::filesystem::path& dir, ReportPart& part, double seconds);

// DIR/report.json: the parts by name, kind and task, for the figure renderer.
void writeReportIndex(const ReportContext& context, const std::vector<ReportPart>& parts);
// Runs `nopescope --report DIR` (the window's executable beside this one) offscreen; its output
// goes to DIR/figures/render.log. Returns false, saying why on stderr, when it could not.
bool renderFigures(const std::filesystem::path& dir);
// DIR/report.md, written atomically.
void writeReport(const ReportContext& context, const std::vector<ReportPart>& parts);

}  // namespace nope::cli
