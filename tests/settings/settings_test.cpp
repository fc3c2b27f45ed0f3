// The table of settings: every row is well formed, round-trips through text and JSON, and its
// range is enforced by validate() under its own name. The CLI's and the form's use of the same
// rows is tested in test_cli.cpp and test_widgets.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "settings/settings.h"
#include "training/presets.h"
#include "util/enum_names.h"

namespace nope {
namespace {

bool isCanonical(const std::string& name) {
    for (char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
            return false;
        }
    }
    return !name.empty() && name.front() != '-' && name.back() != '-';
}

TEST(Settings, RowsAreWellFormedAndUnique) {
    std::set<std::string> names;
    std::set<std::string> paths;
    for (const Setting& s : allSettings()) {
        EXPECT_TRUE(isCanonical(s.name)) << s.name;
        EXPECT_TRUE(names.insert(s.name).second) << "name twice: " << s.name;
        for (const auto& alias : s.aliases) {
            EXPECT_TRUE(names.insert(alias).second) << "alias twice: " << alias;
        }
        EXPECT_TRUE(paths.insert(s.jsonPath).second) << "JSON path twice: " << s.jsonPath;
        EXPECT_FALSE(s.label.empty()) << s.name;
        EXPECT_FALSE(s.help.empty()) << s.name;
        EXPECT_FALSE(s.allowed.empty()) << s.name;
        EXPECT_TRUE(s.get && s.set && s.check) << s.name;
        EXPECT_EQ(findSetting(s.name), &s);
        if (s.type == SettingType::Choice || s.type == SettingType::ChoiceList) {
            EXPECT_FALSE(s.choices.empty()) << s.name;
        }
    }
}

TEST(Settings, HelpAndMessagesReferToSettingsThatExist) {
    for (const Setting& s : allSettings()) {
        renderSettingRefs(s.help + " " + s.allowed, [&](const std::string& name) {
            EXPECT_NE(findSetting(name), nullptr) << s.name << " refers to {" << name << "}";
            return name;
        });
    }
}

TEST(Settings, EveryDefaultIsValidAndRoundTripsThroughText) {
    for (const std::string& preset : presetNames()) {
        for (TaskKind task : allTasks()) {
            const Preset p = *makePreset(preset, task);
            RunSpec spec{task, p.model, p.train, p.name};
            EXPECT_TRUE(validate(spec).empty()) << preset << " " << taskName(task);
            for (const Setting& s : allSettings()) {
                RunSpec copy = spec;
                const std::string text = s.get(spec);
                ASSERT_FALSE(s.set(copy, text).has_value()) << s.name << " = " << text;
                EXPECT_EQ(s.get(copy), text) << s.name;
            }
        }
    }
}

TEST(Settings, JsonWritesEveryRowAtItsPathAndReadsItBack) {
    RunSpec spec{TaskKind::Reversal, ModelConfig{}, TrainConfig{}, "custom"};
    spec.model.nEmbd = 96;
    spec.model.dropout = 0.125;
    spec.model.positional = PositionalEncoding::Learned;
    spec.train.learningRate = 2.6441e-4;
    spec.train.seed = 18446744073709551615ull;
    spec.train.probe.points = {CapturePoint::Resid, CapturePoint::Attn};
    spec.train.probe.hidden = {};
    spec.train.probe.activations = {};
    spec.train.probe.controls = false;
    const nlohmann::json j = toJson(spec);
    for (const Setting& s : allSettings()) {
        EXPECT_TRUE(j.contains(nlohmann::json::json_pointer("/" + s.jsonPath))) << s.jsonPath;
    }
    EXPECT_EQ(j.at("model").at("n_embd"), 96);  // nanoGPT's key names for the model
    EXPECT_EQ(j.at("train").at("learning_rate").get<double>(), 2.6441e-4);
    EXPECT_EQ(j.at("train").at("probe").at("points"), nlohmann::json({"resid", "attn"}));
    const RunSpec back = runSpecFromJson(j);
    EXPECT_EQ(toJson(back), j);
    for (const Setting& s : allSettings()) {
        EXPECT_EQ(s.get(back), s.get(spec)) << s.name;
    }
}

TEST(Settings, JsonErrorsNameTheKeyAndTheAllowedValues) {
    auto error = [](const nlohmann::json& j) {
        try {
            runSpecFromJson(j);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_EQ(error({{"task", "reversal"}, {"model", {{"positional", "rope"}}}}),
              "model/positional: 'rope' is not allowed (allowed: none, learned, sinusoidal)");
    EXPECT_EQ(error({{"task", "reversal"}, {"model", {{"n_layer", "six"}}}}),
              "model/n_layer: \"six\" has the wrong type (allowed: 1 to 48)");
    EXPECT_EQ(error({{"task", "reversal"}, {"train", {{"probe", {{"hidden", 5}}}}}}),
              "train/probe/hidden: 5 is not a list (allowed: up to 8 integers, each 1 to 8192; "
              "comma-separated)");
    EXPECT_EQ(error({{"task", "sorting"}}),
              "task: 'sorting' is not one of addition, reversal, indexing, ordering");
    // Keys left out keep their defaults; unknown keys are ignored (files from newer versions).
    const RunSpec spec = runSpecFromJson({{"task", "reversal"}, {"model", {{"later", 1}}}});
    EXPECT_EQ(spec.model.nLayer, ModelConfig{}.nLayer);
    EXPECT_EQ(spec.train.data.addition, AdditionData::Balanced);
}

// A run written before a setting existed resumes as it began: an addition run folder whose data
// settings have no `addition` key drew its pairs by operand-size buckets, the only scheme then.
TEST(Settings, OlderFilesMeanWhatTheyMeantThen) {
    const nlohmann::json older = {{"task", "addition"},
                                  {"train", {{"data", {{"train_size", 500}, {"seed", 7}}}}}};
    EXPECT_EQ(runSpecFromJson(older).train.data.addition, AdditionData::Buckets);
    EXPECT_EQ(runSpecFromJson(older).train.data.trainSize, 500);
    const nlohmann::json newer = toJson(runSpecFromJson({{"task", "addition"}}));
    EXPECT_EQ(newer.at("train").at("data").at("addition"), "balanced");
    EXPECT_EQ(runSpecFromJson(newer).train.data.addition, AdditionData::Balanced);
}

// For each number setting with a finite range: a value just outside it is refused by
// validate(), under the setting's name.
TEST(Settings, ValidateEnforcesEveryRange) {
    int checked = 0;
    for (const Setting& s : allSettings()) {
        if (s.type != SettingType::Integer && s.type != SettingType::Real) {
            continue;
        }
        for (const std::string bad : {"-1e12", "1e12"}) {
            RunSpec spec;
            const std::string text = s.type == SettingType::Integer
                                         ? (bad[0] == '-' ? "-2000000000" : "2000000000")
                                         : bad;
            ASSERT_FALSE(s.set(spec, text).has_value()) << s.name;
            const bool noUpperBound = s.allowed.find("greater than") != std::string::npos ||
                                      s.allowed.find("or more") != std::string::npos;
            if (s.name == "init-mean" || (noUpperBound && bad[0] != '-')) {
                continue;  // any finite number, or no upper bound
            }
            const FieldErrors errors = s.section == SettingSection::Probe
                                           ? validate(spec.train.probe, spec.model.blockSize)
                                           : validate(spec);
            bool named = false;
            for (const auto& e : errors) {
                named = named || e.field == s.name;
            }
            EXPECT_TRUE(named) << s.name << " = " << text << " passed validation";
            ++checked;
        }
    }
    EXPECT_GT(checked, 50);
}

TEST(Settings, TextErrorsNameTheAllowedValues) {
    RunSpec spec;
    EXPECT_EQ(*findSetting("layers")->set(spec, "six"),
              "'six' is not an integer (allowed: 1 to 48)");
    EXPECT_EQ(*findSetting("lr")->set(spec, "fast"), "'fast' is not a number (allowed: (0, 1])");
    EXPECT_EQ(*findSetting("probe-points")->set(spec, "attn,atn"),
              "'atn' is not allowed (allowed: embedding, attn_in, attn, resid, all; "
              "comma-separated)");
    EXPECT_FALSE(findSetting("probe-points")->set(spec, "all").has_value());
    EXPECT_EQ(spec.train.probe.points.size(), 4u);
    EXPECT_FALSE(findSetting("pe")->set(spec, "sinusoidal").has_value());  // an older name
    EXPECT_EQ(spec.model.positional, PositionalEncoding::Sinusoidal);
}

TEST(Settings, RulesBetweenSettingsNameBoth) {
    RunSpec spec;
    spec.model.nEmbd = 100;
    const FieldErrors errors = validate(spec);
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors.front().field, "dim");
    EXPECT_EQ(describeForCli(errors.front()),
              "--dim: 100 is not divisible by --heads (6); allowed: multiples of the head count");
    EXPECT_EQ(describeForForm(errors.front()),
              "dim: 100 is not divisible by heads (6); allowed: multiples of the head count");
}

TEST(Settings, CurriculumNeedsWholeExamples) {
    RunSpec spec;
    spec.task = TaskKind::Ordering;
    spec.train.objective = Objective::Lm;
    spec.train.curriculumSteps = 500;
    const FieldErrors errors = validate(spec);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(describeForCli(errors.front()),
              "--curriculum-steps: 500 with the lm objective, whose windows cut across examples "
              "(allowed: 0, or the answer, masked or next --objective)");
    spec.train.objective = Objective::Masked;
    EXPECT_TRUE(validate(spec).empty());
    const RunSpec back = runSpecFromJson(toJson(spec));
    EXPECT_EQ(back.train.curriculumSteps, 500);
}

TEST(Settings, DecayFollowsTheStepsWhileItEndedThere) {
    TrainConfig t;
    t.steps = t.decaySteps = 1000;
    setSteps(t, 300);
    EXPECT_EQ(t.decaySteps, 300);
    t.decaySteps = 200;
    setSteps(t, 500);
    EXPECT_EQ(t.decaySteps, 200);
}

enum class Switch { On, Off };
constexpr EnumName<Switch> kSwitchNames[] = {{Switch::On, "on"}, {Switch::Off, "off"}};

TEST(Settings, EnvironmentChoiceFallsBackAndNamesTheAllowedValues) {
    const char* variable = "NOPESCOPE_TEST_SWITCH";
    unsetenv(variable);
    EXPECT_EQ(environmentChoice(kSwitchNames, variable, Switch::On), Switch::On);
    setenv(variable, "", 1);
    EXPECT_EQ(environmentChoice(kSwitchNames, variable, Switch::Off), Switch::Off);
    setenv(variable, "off", 1);
    EXPECT_EQ(environmentChoice(kSwitchNames, variable, Switch::On), Switch::Off);
    setenv(variable, "sideways", 1);
    testing::internal::CaptureStderr();
    EXPECT_EQ(environmentChoice(kSwitchNames, variable, Switch::On), Switch::On);
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              "NOPESCOPE_TEST_SWITCH: 'sideways' is not one of on, off; using on\n");
    unsetenv(variable);
}

}  // namespace
}  // namespace nope
