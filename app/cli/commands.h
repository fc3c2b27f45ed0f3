// The commands of nopescope-cli. Each takes the arguments after its name and returns the exit
// status: 0 success, 1 failure while running, 2 bad usage (nothing was written).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nope::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;  // stopped by Ctrl-C; the same command continues

using Args = std::vector<std::string>;

// The help of --check (analyze, probe, train): the sweep checks every command this way before it
// runs any.
inline constexpr const char* kCheckHelp =
    "parse and check every flag, then exit (status 0, or 2 with the problem) without training, "
    "analysing or writing anything";

int runInfo(const Args& args);
int runAnalyze(const Args& args);
int runTrain(const Args& args);
int runBench(const Args& args);
int runProbe(const Args& args);
int runReproduce(const Args& args);
int runMechanism(const Args& args);
int runSweep(const Args& args);

// This executable's path (/proc/self/exe); throws std::runtime_error when it cannot be read.
std::filesystem::path thisExecutable();

// Prints "nopescope-cli <command>: <message>" to stderr and returns kExitUsage.
int usageError(const std::string& command, const std::string& message);

}  // namespace nope::cli
