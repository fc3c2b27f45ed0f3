// What the machine is, for the lines that name it beside a figure (the study report, About).
// No LibTorch here.
#pragma once

#include <string>

namespace nope {

// The CPU as /proc/cpuinfo's first "model name" names it ("AMD EPYC"), or "unknown CPU".
std::string cpuModelName();

}  // namespace nope
