#include "cli/sweep_plan.h"

#include <iostream>
#include <set>
#include <sstream>

#include "settings/settings.h"
#include "util/error_text.h"

namespace nope::cli {

namespace fs = std::filesystem;
using study::SweepMode;

namespace {

using CommandFn = int (*)(const Args&);

// What a command's --check says, its message captured instead of printed.
struct Checked {
    int status = kExitFailure;
    std::string message;
};

// Restores std::cerr's buffer however the call ends.
class CerrCapture {
public:
    explicit CerrCapture(std::ostringstream& into) : m_old(std::cerr.rdbuf(into.rdbuf())) {}
    ~CerrCapture() { std::cerr.rdbuf(m_old); }
    CerrCapture(const CerrCapture&) = delete;
    CerrCapture& operator=(const CerrCapture&) = delete;

private:
    std::streambuf* m_old;
};

Checked checkQuietly(CommandFn run, const Args& args) {
    std::ostringstream captured;
    Checked out;
    {
        CerrCapture capture(captured);
        try {
            out.status = run(args);
        } catch (const std::exception& e) {
            captured << nope::errorText(e) << "\n";
            out.status = kExitFailure;
        }
    }
    out.message = captured.str();
    return out;
}

// As main() runs a command: its message printed, an exception a failure.
int checkAloud(const char* name, CommandFn run, const Args& args) {
    try {
        return run(args);
    } catch (const std::exception& e) {
        std::cerr << "nopescope-cli " << name << ": error: " << nope::errorText(e) << "\n";
        return kExitFailure;
    }
}

// The flag an "unknown flag --x" message names, when that is the message.
std::optional<std::string> unknownFlag(const std::string& message) {
    const std::string marker = "unknown flag --";
    const size_t at = message.find(marker);
    if (at == std::string::npos) {
        return std::nullopt;
    }
    const size_t from = at + marker.size();
    return message.substr(from, message.find_first_of(" \n", from) - from);
}

// An axis value as flags: a switch is --name or --no-name, anything else --name VALUE.
Args axisTokens(const std::string& name, const std::string& value) {
    const Setting* s = findSetting(name);
    if (s && s->type == SettingType::Switch) {
        return {value == "true" ? "--" + name : "--no-" + name};
    }
    return {"--" + name, value};
}

}  // namespace

std::optional<std::string> groupFlags(const Args& args, std::vector<FlagGroup>& out) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string arg = args[i] == "-h" ? "--help" : args[i];
        if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
            return "unexpected argument '" + arg + "' (flags start with --; see --help)";
        }
        FlagGroup group{arg.substr(2), {arg}};
        if (const size_t eq = group.name.find('='); eq != std::string::npos) {
            group.name.resize(eq);
        } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0 && args[i + 1] != "-h") {
            group.tokens.push_back(args[++i]);
        }
        out.push_back(std::move(group));
    }
    return std::nullopt;
}

std::string canonicalFlag(const std::string& name) {
    if (const Setting* s = findSetting(name)) {
        return s->name;
    }
    if (name.rfind("no-", 0) == 0) {
        const Setting* s = findSetting(name.substr(3));
        if (s && s->type == SettingType::Switch) {
            return s->name;
        }
    }
    return name;
}

SweepPlan::SweepPlan(const study::Manifest& manifest, fs::path sweepDir)
    : m_manifest(manifest), m_dir(std::move(sweepDir)), m_exe(thisExecutable().string()) {}

namespace {

const char* kindName(int kind) {
    static const char* kNames[] = {"analyze", "probe", "train"};
    return kNames[kind];
}

CommandFn kindRun(int kind) {
    static const CommandFn kRuns[] = {runAnalyze, runProbe, runTrain};
    return kRuns[kind];
}

}  // namespace

Args SweepPlan::argsFor(const Part& part, const study::SweepRun& run, bool forCheck) const {
    Args args;
    if (part.kind == Kind::Train) {
        args = {"--preset", m_manifest.preset.value_or("quick")};
    }
    for (const auto& group : part.fixed) {
        args.insert(args.end(), group.tokens.begin(), group.tokens.end());
    }
    for (size_t a = 0; a < run.settings.size() && a < part.takesAxis.size(); ++a) {
        if (part.takesAxis[a]) {
            const Args tokens = axisTokens(run.settings[a].first, run.settings[a].second);
            args.insert(args.end(), tokens.begin(), tokens.end());
        }
    }
    args.insert(args.end(), {"--seed", std::to_string(run.seed)});
    if (m_manifest.threadsPerRun) {
        args.insert(args.end(), {"--threads", std::to_string(*m_manifest.threadsPerRun)});
    }
    fs::path out = study::runFolder(m_dir, run);
    if (part.kind != Kind::Train) {
        out /= part.kind == Kind::Analyze ? "analysis" : "probes";
    }
    // A check never writes; a path that does not exist keeps a resumed run's partial folder
    // (which train would call an existing run) out of it.
    args.insert(args.end(), {"--out", forCheck ? out.string() + ".check" : out.string()});
    if (forCheck) {
        args.push_back("--check");
        if (part.kind == Kind::Train) {
            args.insert(args.end(), {"--check-time", "0"});  // checked, not timed
        }
    }
    return args;
}

std::vector<study::Command> SweepPlan::commandsFor(const study::SweepRun& run) const {
    std::vector<study::Command> commands;
    for (const auto& part : m_parts) {
        study::Command c = {m_exe, kindName(static_cast<int>(part.kind))};
        const Args args = argsFor(part, run, false);
        c.insert(c.end(), args.begin(), args.end());
        commands.push_back(std::move(c));
    }
    return commands;
}

std::vector<bool> SweepPlan::takenBy(Kind kind, const std::vector<FlagGroup>& groups) const {
    const int k = static_cast<int>(kind);
    const fs::path scratch = m_dir / study::SweepFiles::kRuns / ".check";  // never written
    std::vector<bool> takes(groups.size(), true);
    for (size_t attempt = 0; attempt <= groups.size(); ++attempt) {
        Args args;
        if (kind == Kind::Train) {
            args = {"--preset", m_manifest.preset.value_or("quick")};
        }
        for (size_t i = 0; i < groups.size(); ++i) {
            if (takes[i]) {
                args.insert(args.end(), groups[i].tokens.begin(), groups[i].tokens.end());
            }
        }
        args.insert(args.end(), {"--out", scratch.string(), "--check"});
        if (kind == Kind::Train) {
            args.insert(args.end(), {"--check-time", "0"});
        }
        const Checked checked = checkQuietly(kindRun(k), args);
        const auto unknown = unknownFlag(checked.message);
        if (checked.status != kExitUsage || !unknown) {
            break;  // accepted, or a problem that prepare()'s checks report in full
        }
        bool dropped = false;
        for (size_t i = 0; i < groups.size(); ++i) {
            if (takes[i] && groups[i].name == *unknown) {
                takes[i] = false;
                dropped = true;
            }
        }
        if (!dropped) {
            break;
        }
    }
    return takes;
}

std::optional<int> SweepPlan::assignFlags(std::vector<FlagGroup> fixed) {
    std::vector<Kind> kinds = {Kind::Train};
    if (m_manifest.mode == SweepMode::Init) {
        kinds = m_manifest.probes ? std::vector<Kind>{Kind::Analyze, Kind::Probe}
                                  : std::vector<Kind>{Kind::Analyze};
    }
    std::vector<FlagGroup> groups = fixed;  // the fixed flags, then each axis at its first value
    for (const auto& axis : m_manifest.grid.axes) {
        groups.push_back({axis.name, axisTokens(axis.name, axis.values.front())});
    }
    std::vector<bool> takenByAny(groups.size(), false);
    for (Kind kind : kinds) {
        const std::vector<bool> takes = takenBy(kind, groups);
        Part part{kind, {}, {}};
        for (size_t i = 0; i < groups.size(); ++i) {
            takenByAny[i] = takenByAny[i] || takes[i];
            if (i < fixed.size() && takes[i]) {
                part.fixed.push_back(fixed[i]);
            } else if (i >= fixed.size()) {
                part.takesAxis.push_back(takes[i]);
            }
        }
        m_parts.push_back(std::move(part));
    }
    std::string commands = kindName(static_cast<int>(kinds.front()));
    if (kinds.size() > 1) {
        commands += std::string(" or ") + kindName(static_cast<int>(kinds.back()));
    }
    const std::string takers = (kinds.size() > 1 ? "sweep, " : "sweep or ") + commands;
    for (size_t i = 0; i < groups.size(); ++i) {
        if (takenByAny[i]) {
            continue;
        }
        if (i < fixed.size()) {
            return usageError("sweep", "unknown flag --" + groups[i].name + " (not a flag of " +
                                           takers + "; see their --help)");
        }
        return usageError("sweep", "--grid: " + groups[i].name + " is not a flag of " + commands +
                                       " (allowed at init: the model and init settings, and "
                                       "with --probes the probe settings; with --trained "
                                       "PRESET, every setting)");
    }
    return std::nullopt;
}

std::optional<int> SweepPlan::prepare() {
    std::vector<FlagGroup> fixed;
    if (auto error = groupFlags(m_manifest.fixed, fixed)) {
        return usageError("sweep", *error);
    }
    if (auto exit = assignFlags(std::move(fixed))) {
        return exit;
    }
    // One check per cell: the seed does not change what a command accepts.
    std::set<std::vector<std::pair<std::string, std::string>>> checked;
    for (const auto& run : m_manifest.runs) {
        if (!checked.insert(run.settings).second) {
            continue;
        }
        for (const auto& part : m_parts) {
            const int k = static_cast<int>(part.kind);
            const int status = checkAloud(kindName(k), kindRun(k), argsFor(part, run, true));
            if (status != kExitOk) {
                std::cerr << "nopescope-cli sweep: run " << run.id << ": " << kindName(k)
                          << " refuses its flags (above); nothing was run or written\n";
                return status == kExitUsage ? kExitUsage : kExitFailure;
            }
        }
    }
    return std::nullopt;
}

}  // namespace nope::cli
