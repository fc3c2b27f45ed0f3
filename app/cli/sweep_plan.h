// What `nopescope-cli sweep` runs: the child commands of every run (analyze and probe at init, or
// train), built from the manifest's grid, seeds and fixed flags, and checked before anything runs.
// Which command takes which flag is asked of the commands themselves (their --check, called in
// this process), so that a flag only probe knows (--probe-epochs) goes to probe alone and one only
// analyze knows (--samples) to analyze alone.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "study/manifest.h"

namespace nope::cli {

// One flag on the command line with its value, if any: "--name value", "--name=value", "--name".
struct FlagGroup {
    std::string name;  // without the dashes and the "=value"
    Args tokens;       // as given
};

// Splits arguments into flags. This CLI's grammar makes it unambiguous: a value never starts with
// "--" and every other argument starts with it. Returns the first stray argument as an error.
std::optional<std::string> groupFlags(const Args& args, std::vector<FlagGroup>& out);

// The setting a flag names ("pe" and "no-bias" name positional and bias), else the name itself.
std::string canonicalFlag(const std::string& name);

class SweepPlan {
public:
    // `manifest` holds the mode, preset, probes, grid and fixed flags; `sweepDir` the folder.
    SweepPlan(const study::Manifest& manifest, std::filesystem::path sweepDir);

    // Decides which command takes which fixed flag and axis, then checks the commands of every
    // cell with --check. Prints the problem (a command's own message, or the sweep's) and returns
    // the exit status on failure; nothing is run or written.
    std::optional<int> prepare();

    // The commands of a run, in order: absolute paths, this executable.
    std::vector<study::Command> commandsFor(const study::SweepRun& run) const;

private:
    enum class Kind { Analyze, Probe, Train };
    struct Part {
        Kind kind;
        std::vector<FlagGroup> fixed;  // the fixed flags this command takes
        std::vector<bool> takesAxis;   // per axis
    };
    Args argsFor(const Part& part, const study::SweepRun& run, bool forCheck) const;
    // Which of `groups` the command takes: asks its --check, drops the flag it calls unknown,
    // and asks again.
    std::vector<bool> takenBy(Kind kind, const std::vector<FlagGroup>& groups) const;
    // Gives each command of the mode the fixed flags and axes it takes; a flag no command takes
    // is a usage error (printed; its exit status returned).
    std::optional<int> assignFlags(std::vector<FlagGroup> fixed);

    const study::Manifest& m_manifest;
    std::filesystem::path m_dir;
    std::string m_exe;
    std::vector<Part> m_parts;
};

}  // namespace nope::cli
