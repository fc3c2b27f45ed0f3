#include "cli/flags.h"

#include <cmath>
#include <sstream>

#include "cli/help_pages.h"
#include "model/capture_point.h"
#include "tasks/task.h"
#include "util/parse_number.h"

namespace nope::cli {

namespace {

std::string inQuotes(const std::string& s) {
    return "'" + s + "'";
}

std::string numberText(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

HelpFormat g_helpFormat = HelpFormat::Text;

}  // namespace

void setHelpFormat(HelpFormat format) {
    g_helpFormat = format;
}

HelpFormat helpFormat() {
    return g_helpFormat;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out;
}

FlagSet::FlagSet(std::string usage, std::string summary)
    : m_usage(std::move(usage)), m_summary(std::move(summary)) {}

void FlagSet::add(Flag flag) {
    if (flag.key.empty()) {
        flag.key = flag.name;
    }
    m_index[flag.name] = m_flags.size();
    for (const auto& alias : flag.aliases) {
        m_index[alias] = m_flags.size();
    }
    m_flags.push_back(std::move(flag));
}

bool FlagSet::given(const std::string& name) const {
    const auto it = m_index.find(name);
    return it != m_index.end() && m_given.count(m_flags[it->second].key) > 0;
}

void FlagSet::addSettings(RunSpec* spec, std::initializer_list<SettingSection> sections) {
    for (const Setting* s : settingsIn(sections)) {
        const std::string help = renderForCli(s->help);
        if (s->type == SettingType::Switch) {
            std::vector<std::string> negated;
            for (const auto& alias : s->aliases) {
                negated.push_back("no-" + alias);
            }
            auto setTo = [spec, s](const char* value) {
                return [spec, s, value](const std::string&) { return s->set(*spec, value); };
            };
            add({s->name, "", help, "", s->get(*spec), setTo("true"), s->name, s->aliases});
            add({"no-" + s->name, "", "", "", "", setTo("false"), s->name, negated, true});
            continue;
        }
        const bool list = s->type == SettingType::ChoiceList || s->type == SettingType::IntegerList;
        const std::string valueName = s->type == SettingType::Choice ? "NAME"
                                      : list                         ? "A,B"
                                      : s->type == SettingType::Real ? "X"
                                      : s->type == SettingType::Text ? "TEXT"
                                                                     : "N";
        add({s->name, valueName, help, renderForCli(s->allowed), s->get(*spec),
             [spec, s](const std::string& text) { return s->set(*spec, text); }, s->name,
             s->aliases});
    }
}

void FlagSet::addInt(const std::string& name, int* target, const std::string& help, int min,
                     int max) {
    const std::string allowed = std::to_string(min) + " to " + std::to_string(max);
    add({name, "N", help, allowed, std::to_string(*target),
         [=](const std::string& text) -> std::optional<std::string> {
             const auto v = parseInteger<int>(text);
             if (!v) {
                 return inQuotes(text) + " is not an integer (allowed: " + allowed + ")";
             }
             if (*v < min || *v > max) {
                 return text + " is outside the allowed " + allowed;
             }
             *target = *v;
             return std::nullopt;
         }});
}

void FlagSet::addUint64(const std::string& name, uint64_t* target, const std::string& help) {
    const std::string allowed = "0 to 18446744073709551615";
    add({name, "N", help, allowed, std::to_string(*target),
         [=](const std::string& text) -> std::optional<std::string> {
             const auto v = parseInteger<uint64_t>(text);
             if (!v) {
                 return inQuotes(text) + " is not a non-negative integer (allowed: " + allowed +
                        ")";
             }
             *target = *v;
             return std::nullopt;
         }});
}

void FlagSet::addDouble(const std::string& name, double* target, const std::string& help,
                        std::optional<double> min, std::optional<double> max) {
    std::string allowed = "a number";
    if (min && max) {
        allowed = numberText(*min) + " to " + numberText(*max);
    } else if (min) {
        allowed = "at least " + numberText(*min);
    } else if (max) {
        allowed = "at most " + numberText(*max);
    }
    add({name, "X", help, allowed, numberText(*target),
         [=](const std::string& text) -> std::optional<std::string> {
             const auto v = parseReal(text);
             if (!v) {
                 return inQuotes(text) + " is not a number (allowed: " + allowed + ")";
             }
             if ((min && *v < *min) || (max && *v > *max)) {
                 return text + " is outside the allowed " + allowed;
             }
             *target = *v;
             return std::nullopt;
         }});
}

void FlagSet::addChoice(const std::string& name, std::string* target, const std::string& help,
                        const std::vector<std::string>& allowedValues) {
    const std::string allowed = joined(allowedValues);
    add({name, "NAME", help, allowed, *target,
         [=](const std::string& text) -> std::optional<std::string> {
             for (const auto& a : allowedValues) {
                 if (a == text) {
                     *target = text;
                     return std::nullopt;
                 }
             }
             return inQuotes(text) + " is not allowed (allowed: " + allowed + ")";
         }});
}

void FlagSet::addList(const std::string& name, std::vector<std::string>* target,
                      const std::string& help, const std::vector<std::string>& allowedValues) {
    const std::string allowed = joined(allowedValues) + ", all; comma-separated";
    std::string current;
    for (const auto& v : *target) {
        current += (current.empty() ? "" : ",") + v;
    }
    add({name, "A,B", help, allowed, current,
         [=](const std::string& text) -> std::optional<std::string> {
             if (text == "all") {
                 *target = allowedValues;
                 return std::nullopt;
             }
             std::vector<std::string> values;
             std::stringstream in(text);
             std::string item;
             while (std::getline(in, item, ',')) {
                 bool known = false;
                 for (const auto& a : allowedValues) {
                     known = known || a == item;
                 }
                 if (!known) {
                     return inQuotes(item) + " is not allowed (allowed: " + allowed + ")";
                 }
                 values.push_back(item);
             }
             if (values.empty()) {
                 return "needs at least one value (allowed: " + allowed + ")";
             }
             *target = values;
             return std::nullopt;
         }});
}

void FlagSet::addString(const std::string& name, std::string* target, const std::string& help,
                        const std::string& valueName) {
    add({name, valueName, help, "", *target,
         [=](const std::string& text) -> std::optional<std::string> {
             if (text.empty()) {
                 return "needs a non-empty " + valueName;
             }
             *target = text;
             return std::nullopt;
         }});
}

void FlagSet::addRepeated(const std::string& name, std::vector<std::string>* target,
                          const std::string& help, const std::string& valueName) {
    add({name, valueName, help + " (repeatable)", "", "",
         [=](const std::string& text) -> std::optional<std::string> {
             if (text.empty()) {
                 return "needs a non-empty " + valueName;
             }
             target->push_back(text);
             return std::nullopt;
         }});
}

void FlagSet::addSwitch(const std::string& name, bool* target, const std::string& help) {
    add({name, "", help, "", "", [=](const std::string&) -> std::optional<std::string> {
             *target = true;
             return std::nullopt;
         }});
}

std::optional<std::string> FlagSet::parse(const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--help" || arg == "-h") {
            m_help = true;
            continue;
        }
        if (arg.rfind("--help-format", 0) == 0) {  // hidden: for the generated documentation
            const bool inline_ = arg.rfind("--help-format=", 0) == 0;
            if (!inline_ && (arg != "--help-format" || i + 1 >= args.size())) {
                return "--help-format: needs a value (allowed: text, markdown, roff)";
            }
            const std::string format = inline_ ? arg.substr(14) : args[++i];
            if (format == "text") {
                setHelpFormat(HelpFormat::Text);
            } else if (format == "markdown") {
                setHelpFormat(HelpFormat::Markdown);
            } else if (format == "roff") {
                setHelpFormat(HelpFormat::Roff);
            } else {
                return "--help-format: " + inQuotes(format) +
                       " is not allowed (allowed: text, markdown, roff)";
            }
            m_help = true;
            continue;
        }
        if (arg.rfind("--", 0) != 0) {
            return "unexpected argument " + inQuotes(arg) + " (flags start with --; see --help)";
        }
        std::string name = arg.substr(2);
        std::optional<std::string> value;
        if (const size_t eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const auto it = m_index.find(name);
        if (it == m_index.end()) {
            return "unknown flag --" + name + " (see --help for the flags of this command)";
        }
        const Flag& flag = m_flags[it->second];
        if (flag.valueName.empty()) {
            if (value) {
                return "--" + name + ": takes no value";
            }
            value = "";
        } else if (!value) {
            if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
                return "--" + name + ": needs a value" +
                       (flag.allowed.empty() ? "" : " (allowed: " + flag.allowed + ")");
            }
            value = args[++i];
        }
        if (auto error = flag.set(*value)) {
            return "--" + flag.key + ": " + *error;  // the setting's canonical name
        }
        m_given[flag.key] = true;
    }
    return std::nullopt;
}

namespace {

// "--[no-]name VALUE"
std::string flagLabel(const std::string& name, const std::string& valueName, bool negatable) {
    return std::string("--") + (negatable ? "[no-]" : "") + name +
           (valueName.empty() ? "" : " " + valueName);
}

}  // namespace

std::string FlagSet::help() const {
    std::ostringstream out;
    const HelpFormat format = helpFormat();
    if (format == HelpFormat::Markdown) {
        out << "```text\n"
            << m_usage << "\n```\n\n"
            << markdownText(m_summary) << "\n\n"
            << "| flag | what it sets | allowed | default |\n| --- | --- | --- | --- |\n";
    } else if (format == HelpFormat::Roff) {
        out << ".PP\n.nf\n" << roffText(m_usage) << "\n.fi\n.PP\n" << roffText(m_summary) << "\n";
    } else {
        out << "usage: " << m_usage << "\n\n" << m_summary << "\n\nflags:\n";
    }
    for (const auto& f : m_flags) {
        if (f.hidden) {
            continue;
        }
        const bool negatable = m_index.count("no-" + f.name) > 0 && f.valueName.empty();
        if (format == HelpFormat::Markdown) {
            out << "| `" << flagLabel(f.name, f.valueName, negatable) << "` | "
                << markdownText(f.help) << " | " << markdownText(f.allowed) << " | "
                << (f.defaultValue.empty() ? "" : "`" + f.defaultValue + "`") << " |\n";
            continue;
        }
        if (format == HelpFormat::Roff) {
            out << ".TP\n.B " << roffText(flagLabel(f.name, "", negatable))
                << (f.valueName.empty() ? "" : " \\fI" + roffText(f.valueName) + "\\fR") << "\n"
                << roffText(f.help);
            if (!f.allowed.empty()) {
                out << " (" << roffText(f.allowed) << ")";
            }
            if (!f.defaultValue.empty()) {
                out << " [default " << roffText(f.defaultValue) << "]";
            }
            out << "\n";
            continue;
        }
        std::string left = "  " + flagLabel(f.name, f.valueName, negatable);
        if (left.size() < 26) {
            left.resize(26, ' ');
        } else {
            left += "\n" + std::string(26, ' ');
        }
        out << left << f.help;
        if (!f.allowed.empty()) {
            out << " (" << f.allowed << ")";
        }
        if (!f.defaultValue.empty()) {
            out << " [default " << f.defaultValue << "]";
        }
        out << "\n";
    }
    if (format == HelpFormat::Markdown) {
        out << "| `--help` | this text |  |  |\n";
    } else if (format == HelpFormat::Roff) {
        out << ".TP\n.B \\-\\-help\nthis text\n";
    } else {
        out << "  --help                  this text\n";
    }
    return out.str();
}

std::vector<std::string> taskNames() {
    std::vector<std::string> names;
    for (TaskKind t : allTasks()) {
        names.push_back(taskName(t));
    }
    return names;
}

std::vector<std::string> pointNames() {
    std::vector<std::string> names;
    for (CapturePoint p : allCapturePoints()) {
        names.push_back(toString(p));
    }
    return names;
}

}  // namespace nope::cli
