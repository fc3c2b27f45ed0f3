// One setting of a run, described once: its canonical name (the CLI's --name, the form field's
// name, the name in every error message), its label and one-line help, its type and allowed
// values, its default (whatever the RunSpec it reads holds) and where it lives in JSON. The CLI's
// flags, the window's form, validation, JSON reading and writing and the presets all go through
// these descriptions (settings/settings.h holds the table). No LibTorch and no JSON library here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nope {

struct RunSpec;

// The groups of settings, in the order the form shows them. A command picks the sections it
// takes (info: model and init; train: all; probe: model, init and probe).
enum class SettingSection { Model, Init, Training, Data, Analysis, Probe };

enum class SettingType {
    Integer,      // int within [min, max]
    Unsigned,     // uint64 (seeds)
    Real,         // finite double within the range
    Switch,       // bool: --name / --no-name on the command line, a check box in the form
    Choice,       // one of `choices`
    ChoiceList,   // comma-separated values from `choices` ("all" selects every one)
    IntegerList,  // comma-separated integers within [min, max]
    Text,         // a string, checked by the setting's own rule
};

struct Setting {
    std::string name;   // canonical: "dim", "probe-lr" (lower case, words joined by '-')
    std::string label;  // the form's label
    std::string help;   // one line; "{heads}" names another setting
    SettingSection section = SettingSection::Model;
    SettingType type = SettingType::Integer;
    std::string jsonPath;              // within a run spec's JSON: "model/n_embd"
    std::vector<std::string> aliases;  // older names still read on the command line
    std::string allowed;               // "1 to 48", "none, learned, sinusoidal", "(0, 1]"
    std::vector<std::string> choices;  // Choice and ChoiceList
    bool primary = false;              // among the form's first rows (the rest sit under "more")
    bool internal = false;  // fixed by the tasks: in JSON only, neither a flag nor a form field
    // What a file written before this setting existed means, when it has the setting's JSON
    // object but not its key (empty: the default): older runs resume as they began.
    std::string whenMissing;

    // The current value as text, in the form `set` reads back ("0.0002", "attn,resid", "true").
    std::function<std::string(const RunSpec&)> get;
    // Parses `text` into the spec; returns what is wrong with it (without the name) on failure,
    // leaving the spec unchanged.
    std::function<std::optional<std::string>(RunSpec&, const std::string&)> set;
    // The setting's own rule on its current value (range, allowed characters); empty when fine.
    std::function<std::optional<std::string>(const RunSpec&)> check;
};

// Title of a section for the form and the help ("Model", "Initialization", ...).
std::string sectionTitle(SettingSection section);

}  // namespace nope
