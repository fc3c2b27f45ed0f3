// A small command-line flag parser: typed flags bound to variables, "--name value" or
// "--name=value", and one-line errors that name the flag and the allowed values.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "settings/settings.h"

namespace nope::cli {

// How help() prints: plain text for a terminal, or Markdown (docs/cli.md) and roff (the man
// pages) for the generated documentation (`nopescope-cli help --markdown | --man`). Set for the
// whole program, by the help command or by the hidden flag --help-format=text|markdown|roff,
// which also asks for the help.
enum class HelpFormat { Text, Markdown, Roff };
void setHelpFormat(HelpFormat format);
HelpFormat helpFormat();

class FlagSet {
public:
    FlagSet(std::string usage, std::string summary);

    void addInt(const std::string& name, int* target, const std::string& help, int min, int max);
    void addUint64(const std::string& name, uint64_t* target, const std::string& help);
    // A real number; `min`/`max` bound it inclusively when given.
    void addDouble(const std::string& name, double* target, const std::string& help,
                   std::optional<double> min = std::nullopt,
                   std::optional<double> max = std::nullopt);
    void addChoice(const std::string& name, std::string* target, const std::string& help,
                   const std::vector<std::string>& allowed);
    // Comma-separated values from `allowed` ("all" selects every one).
    void addList(const std::string& name, std::vector<std::string>* target, const std::string& help,
                 const std::vector<std::string>& allowed);
    void addString(const std::string& name, std::string* target, const std::string& help,
                   const std::string& valueName);
    // A value that may be given many times; each is appended to `target`.
    void addRepeated(const std::string& name, std::vector<std::string>* target,
                     const std::string& help, const std::string& valueName);
    void addSwitch(const std::string& name, bool* target, const std::string& help);
    // A flag per setting of the sections (settings/settings.h), bound to `spec`: --name VALUE,
    // or --name / --no-name for a switch; a setting's older names are accepted too. Values are
    // parsed here; ranges and the rules between settings are checked by validate() afterwards.
    void addSettings(RunSpec* spec, std::initializer_list<SettingSection> sections);

    // Parses the arguments after the command name. Returns the first error as one line
    // ("--samples: 'x' is not an integer (allowed: 1 to 10000)"), or nothing on success.
    std::optional<std::string> parse(const std::vector<std::string>& args);

    bool helpRequested() const { return m_help; }
    const std::string& usage() const { return m_usage; }
    // Whether the flag (by canonical name or alias; "--no-x" counts as x) was on the line.
    bool given(const std::string& name) const;
    // The usage line, the summary and every flag with its help, allowed values and default, in
    // helpFormat(): a page of its own as text, a fragment without a heading in Markdown or roff.
    std::string help() const;

private:
    struct Flag {
        std::string name;
        std::string valueName;  // empty for switches
        std::string help;
        std::string allowed;  // shown in errors and help
        std::string defaultValue;
        std::function<std::optional<std::string>(const std::string&)> set;  // returns an error
        std::string key = {};  // what given() answers to: the name, or the setting's name
        std::vector<std::string> aliases = {};
        bool hidden = false;  // accepted, not listed in the help (the "--no-" half of a switch)
    };
    void add(Flag flag);

    std::string m_usage;
    std::string m_summary;
    std::vector<Flag> m_flags;
    std::map<std::string, size_t> m_index;
    std::map<std::string, bool> m_given;
    bool m_help = false;
};

// "a, b, c"
std::string joined(const std::vector<std::string>& items);

// The allowed values of the flags that name a task or a capture point.
std::vector<std::string> taskNames();
std::vector<std::string> pointNames();

}  // namespace nope::cli
