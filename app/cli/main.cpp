// nopescope-cli: the headless front end. Each command drives the same core objects as the window.
#include <exception>
#include <iostream>
#include <map>
#include <stdexcept>

#include "cli/commands.h"
#include "util/error_text.h"

namespace {

using Command = int (*)(const nope::cli::Args&);

struct Entry {
    Command run;
    const char* summary;
};

const std::map<std::string, Entry>& commands() {
    static const std::map<std::string, Entry> kCommands = {
        {"info", {nope::cli::runInfo, "the model configuration and its parameter count"}},
        {"analyze",
         {nope::cli::runAnalyze,
          "per-layer adjacency, norm and variance scores of a fresh or saved model"}},
        {"train", {nope::cli::runTrain, "train a model on a task; writes a run folder"}},
        {"mechanism",
         {nope::cli::runMechanism,
          "the averaging effect without a model: simulate (uniform or random weights)"}},
        {"probe",
         {nope::cli::runProbe,
          "position probes (R, NRMSE, controls) per layer and feature, fresh or saved model"}},
        {"bench", {nope::cli::runBench, "training throughput (fp32, bf16) and analysis time"}},
        {"reproduce",
         {nope::cli::runReproduce,
          "the paper's study as sweeps, figures and report.md (--quick: under 30 minutes)"}},
        {"sweep",
         {nope::cli::runSweep,
          "a grid of settings times seeds, run in parallel; scores and their means with 95% "
          "intervals"}},
    };
    return kCommands;
}

void printUsage(std::ostream& out) {
    out << "usage: nopescope-cli <command> [flags]   (nopescope-cli <command> --help for its "
           "flags)\n\n"
        << "commands:\n";
    for (const auto& [name, entry] : commands()) {
        out << "  " << name << std::string(10 - name.size(), ' ') << entry.summary << "\n";
    }
}

}  // namespace

namespace nope::cli {

std::filesystem::path thisExecutable() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        throw std::runtime_error("cannot find this executable (/proc/self/exe): " + ec.message());
    }
    return exe;
}

int usageError(const std::string& command, const std::string& message) {
    std::cerr << "nopescope-cli " << command << ": " << message << "\n";
    return kExitUsage;
}

}  // namespace nope::cli

int main(int argc, char** argv) {
    if (argc < 2) {
        printUsage(std::cerr);
        return nope::cli::kExitUsage;
    }
    const std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        printUsage(std::cout);
        return nope::cli::kExitOk;
    }
    const auto it = commands().find(name);
    if (it == commands().end()) {
        std::string known;
        for (const auto& [command, entry] : commands()) {
            known += (known.empty() ? "" : ", ") + command;
        }
        std::cerr << "nopescope-cli: unknown command '" << name << "' (allowed: " << known << ")\n";
        return nope::cli::kExitUsage;
    }
    try {
        return it->second.run(nope::cli::Args(argv + 2, argv + argc));
    } catch (const std::exception& e) {
        std::cerr << "nopescope-cli " << name << ": error: " << nope::errorText(e) << "\n";
        return nope::cli::kExitFailure;
    }
}
