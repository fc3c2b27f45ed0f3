// Seeded random numbers that give the same sequence on every platform and standard library.
// std::uniform_int_distribution and std::shuffle are implementation-defined, so the task
// generators use these instead: the datasets must be reproducible from a seed alone.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace nope {

using Rng = std::mt19937_64;

// Uniform integer in [lo, hi], both inclusive, by rejection sampling (no modulo bias).
inline uint64_t uniformInt(Rng& rng, uint64_t lo, uint64_t hi) {
    const uint64_t span = hi - lo;
    if (span == UINT64_MAX) {
        return rng();
    }
    const uint64_t range = span + 1;
    const uint64_t limit = UINT64_MAX - (UINT64_MAX % range);
    uint64_t x = rng();
    while (x >= limit) {
        x = rng();
    }
    return lo + x % range;
}

// Fisher-Yates shuffle driven by uniformInt.
template <typename T>
void shuffleInPlace(std::vector<T>& items, Rng& rng) {
    for (size_t i = items.size(); i > 1; --i) {
        const size_t j = uniformInt(rng, 0, i - 1);
        std::swap(items[i - 1], items[j]);
    }
}

// Derives an independent stream seed from a base seed and a label (splitmix64 mixing).
inline uint64_t deriveSeed(uint64_t seed, uint64_t label) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (label + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

}  // namespace nope
