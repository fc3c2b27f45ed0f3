#include "training/train_config.h"

#include "util/enum_names.h"

namespace nope {

namespace {

constexpr EnumName<Objective> kObjectives[] = {{Objective::Lm, "lm"},
                                               {Objective::Answer, "answer"},
                                               {Objective::Masked, "masked"},
                                               {Objective::Next, "next"}};
constexpr EnumName<Precision> kPrecisions[] = {{Precision::Fp32, "fp32"},
                                               {Precision::Bf16, "bf16"}};
constexpr EnumName<DeviceKind> kDevices[] = {{DeviceKind::Cpu, "cpu"}, {DeviceKind::Cuda, "cuda"}};

}  // namespace

std::string toString(Objective objective) {
    return nameOf(kObjectives, objective);
}
std::string toString(Precision precision) {
    return nameOf(kPrecisions, precision);
}
std::string toString(DeviceKind device) {
    return nameOf(kDevices, device);
}
std::optional<Objective> parseObjective(std::string_view s) {
    return parseName(kObjectives, s);
}
std::optional<Precision> parsePrecision(std::string_view s) {
    return parseName(kPrecisions, s);
}
std::optional<DeviceKind> parseDevice(std::string_view s) {
    return parseName(kDevices, s);
}

}  // namespace nope
