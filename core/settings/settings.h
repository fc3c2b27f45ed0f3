// The table of settings (settings/setting.h) and what reads it: validation of a run spec, JSON
// reading and writing, and the rendering of messages for a front end. Adding a setting means
// adding one row to the table in settings.cpp (CONTRIBUTING.md, "Adding a setting").
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "run/run_spec.h"
#include "settings/setting.h"
#include "util/field_error.h"

namespace nope {

// Every setting, grouped by section in the form's order.
const std::vector<Setting>& allSettings();
// The settings of the given sections, in table order (internal ones excluded).
std::vector<const Setting*> settingsIn(std::initializer_list<SettingSection> sections);
// By canonical name or alias; nullptr when there is none.
const Setting* findSetting(std::string_view name);

// The rules of single settings (ranges, characters) over the given sections.
FieldErrors checkSettings(const RunSpec& spec, std::initializer_list<SettingSection> sections);

// Writes the given sections at their JSON paths under `root` (an object).
void writeSettings(nlohmann::json& root, const RunSpec& spec,
                   std::initializer_list<SettingSection> sections);
// Reads the keys present under `root` over `spec`; throws std::invalid_argument naming the key
// and what is allowed.
void readSettings(const nlohmann::json& root, RunSpec& spec,
                  std::initializer_list<SettingSection> sections);

// Sets the step count; the end of the cosine decay follows when it ended at the last step.
void setSteps(TrainConfig& train, int steps);

// A message with "{name}" references, rendered for the command line ("--heads") or the form
// (the setting's label).
std::string renderForCli(const std::string& message);
std::string renderForForm(const std::string& message);
// "--dim: 100 is not divisible by --heads (6)"
std::string describeForCli(const FieldError& error);
// "dim: 100 is not divisible by heads (6)"
std::string describeForForm(const FieldError& error);

}  // namespace nope
