// nopescope-cli: the headless front end. Each command drives the same core objects as the window.
#include <cctype>
#include <exception>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help_pages.h"
#include "settings/settings.h"
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
    out << "  help      this list; help --markdown: docs/cli.md; help --man: the man page\n";
}

// The commands in the order the generated pages list them: the command line, its heading.
const std::vector<std::vector<std::string>>& documentedCommands() {
    static const std::vector<std::vector<std::string>> kOrder = {{"train"},
                                                                 {"analyze"},
                                                                 {"probe"},
                                                                 {"sweep"},
                                                                 {"reproduce"},
                                                                 {"mechanism", "simulate"},
                                                                 {"mechanism", "ablate"},
                                                                 {"bench"},
                                                                 {"info"}};
    return kOrder;
}

std::string joinedWords(const std::vector<std::string>& words, const std::string& separator) {
    std::string out;
    for (const auto& w : words) {
        out += (out.empty() ? "" : separator) + w;
    }
    return out;
}

// What a command prints for --help in the current help format; throws when the command fails or
// prints nothing (a page with an empty section would pass for a whole one).
std::string commandHelp(const std::vector<std::string>& line) {
    nope::cli::Args args(line.begin() + 1, line.end());
    args.push_back("--help");
    std::ostringstream captured;
    std::streambuf* const previous = std::cout.rdbuf(captured.rdbuf());
    int status = nope::cli::kExitFailure;
    try {
        status = commands().at(line[0]).run(args);
    } catch (...) {
        std::cout.rdbuf(previous);
        throw;
    }
    std::cout.rdbuf(previous);
    if (status != nope::cli::kExitOk || captured.str().empty()) {
        throw std::runtime_error("the help of '" + joinedWords(line, " ") + "' failed (status " +
                                 std::to_string(status) + ")");
    }
    return captured.str();
}

// The table of settings: where each lives as a flag, in the form and in a run's JSON.
std::string settingsTable(nope::cli::HelpFormat format) {
    using nope::cli::markdownText;
    using nope::cli::roffText;
    nope::RunSpec defaults;
    std::string out;
    for (const nope::Setting& s : nope::allSettings()) {
        if (s.internal) {
            continue;
        }
        const std::string flag =
            "--" + (s.type == nope::SettingType::Switch ? "[no-]" + s.name : s.name);
        const std::string value = s.get(defaults);
        const std::string allowed = nope::renderForCli(s.allowed);
        if (format == nope::cli::HelpFormat::Markdown) {
            out += "| `" + flag + "` | " + markdownText(nope::sectionTitle(s.section)) + " | " +
                   markdownText(s.label) + " | `" + s.jsonPath + "` | " + markdownText(allowed) +
                   " | " + (value.empty() ? "" : "`" + value + "`") + " |\n";
        } else {
            out += ".TP\n.B " + roffText(flag) + "\n" + roffText(s.label) + "; in a run's JSON " +
                   roffText(s.jsonPath) + (allowed.empty() ? "" : " (" + roffText(allowed) + ")") +
                   (value.empty() ? "" : " [default " + roffText(value) + "]") + "\n";
        }
    }
    return out;
}

constexpr const char* kDescription =
    "nopescope-cli trains small nanoGPT-style causal transformers without positional encodings on "
    "synthetic tasks (addition, reversal, indexing, ordering) and measures what the paper "
    "\"Position Information Emerges in Causal Transformers Without Positional Encodings via "
    "Similarity of Nearby Embeddings\" (Zuo, Guerzhoy, Guerzhoy, COLING 2025) is about: the "
    "self-cosine-similarity of each layer's hidden states, the adjacency probability score per "
    "layer, and position probes, for a fresh model, one it trains or any saved one. It does the "
    "window's work (nopescope) without a screen, for scripts, sweeps and clusters.";

constexpr const char* kExitStatus =
    "0 success; 1 failure while running; 2 bad usage (the message names the flag and the "
    "allowed values; nothing was written); 130 stopped by Ctrl-C (the same command continues a "
    "run or a sweep).";

// docs/cli.md: every command's flags and the table of settings, from this binary.
std::string markdownPage() {
    using nope::cli::markdownText;
    std::string out =
        "# Command-line reference\n\n"
        "<!-- Generated by `nopescope-cli help --markdown > docs/cli.md` (or `cmake --build build "
        "--target cli-docs`); do not edit: the test Docs.CliPageIsTheBinarysHelp fails when "
        "this page and the binary differ. -->\n\n"
        "Every command of `nopescope-cli` with every flag, as `nopescope-cli COMMAND --help` "
        "prints them, and the table of settings behind the training, model and probe flags. "
        "What the commands are for and how to read what they write: [training](training.md), "
        "[analysis](analysis.md), [studies](studies.md), [distributed](distributed.md).\n\n" +
        markdownText(kDescription) + "\n\nExit status: " + markdownText(kExitStatus) +
        "\n\n## Commands\n\n| command | what it does |\n| --- | --- |\n";
    for (const auto& [name, entry] : commands()) {
        out += "| [`" + name + "`](#nopescope-cli-" + name +
               (name == "mechanism" ? "-simulate" : "") + ") | " + markdownText(entry.summary) +
               " |\n";
    }
    for (const auto& line : documentedCommands()) {
        out += "\n## `nopescope-cli " + joinedWords(line, " ") + "`\n\n" + commandHelp(line);
    }
    out +=
        "\n## Settings\n\nThe settings of a run, each one flag (on `train`, and on the "
        "commands that take its section), one field of the window's form and one key of a "
        "run's `run.json` (`spec`), with the default of a run without a preset.\n\n"
        "| flag | section | form field | JSON key | allowed | default |\n"
        "| --- | --- | --- | --- | --- | --- |\n" +
        settingsTable(nope::cli::HelpFormat::Markdown);
    return out;
}

// nopescope-cli(1).
std::string manPage() {
    using nope::cli::roffText;
    nope::cli::ManPage page;
    page.name = "nopescope-cli";
    page.summary = "train and analyse transformers without positional encodings, headless";
    page.synopsis =
        ".B nopescope\\-cli\n\\fICOMMAND\\fR [\\fIflags\\fR]\n.br\n"
        ".B nopescope\\-cli\n\\fICOMMAND\\fR \\-\\-help\n";
    page.description = roffText(kDescription) + "\n";
    page.body = ".SH COMMANDS\n";
    for (const auto& [name, entry] : commands()) {
        page.body += ".TP\n.B " + roffText(name) + "\n" + roffText(entry.summary) + "\n";
    }
    for (const auto& line : documentedCommands()) {
        std::string heading = "NOPESCOPE-CLI " + joinedWords(line, " ");
        for (char& c : heading) {
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        page.body += ".SH \"" + roffText(heading) + "\"\n" + commandHelp(line);
    }
    page.body +=
        ".SH SETTINGS\nThe settings of a run: one flag each, one field of the "
        "window's form and one key of a run's run.json.\n" +
        settingsTable(nope::cli::HelpFormat::Roff);
    page.body += ".SH \"EXIT STATUS\"\n" + roffText(kExitStatus) + "\n";
    page.seeAlso =
        ".BR nopescope (1);\nthe user guide in /usr/share/doc/nopescope/ or the "
        "repository's docs/ folder.\n";
    return nope::cli::renderManPage(page, NOPESCOPE_VERSION);
}

// nopescope-cli help [--markdown | --man]
int runHelp(const nope::cli::Args& args) {
    if (args.empty()) {
        printUsage(std::cout);
        return nope::cli::kExitOk;
    }
    if (args.size() == 1 && (args[0] == "--markdown" || args[0] == "--man")) {
        const bool markdown = args[0] == "--markdown";
        nope::cli::setHelpFormat(markdown ? nope::cli::HelpFormat::Markdown
                                          : nope::cli::HelpFormat::Roff);
        std::cout << (markdown ? markdownPage() : manPage());
        return nope::cli::kExitOk;
    }
    return nope::cli::usageError(
        "help", "unexpected '" + args[0] +
                    "' (allowed: nothing, --markdown for docs/cli.md, --man for the man page)");
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
    if (name == "--help" || name == "-h") {
        printUsage(std::cout);
        return nope::cli::kExitOk;
    }
    if (name == "help") {
        try {
            return runHelp(nope::cli::Args(argv + 2, argv + argc));
        } catch (const std::exception& e) {
            std::cerr << "nopescope-cli help: error: " << nope::errorText(e) << "\n";
            return nope::cli::kExitFailure;
        }
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
