// Wall time on the steady clock, in seconds, for every timing the project records.
#pragma once

#include <chrono>

namespace nope {

using SteadyClock = std::chrono::steady_clock;

inline double secondsSince(SteadyClock::time_point start) {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace nope
