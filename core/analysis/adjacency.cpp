#include "analysis/adjacency.h"

#include <cmath>

namespace nope {

uint64_t tripleTotal(int T) {
    if (T < 3) {
        return 0;
    }
    const uint64_t t = T;
    return t * (t - 1) * (t - 2) / 6;
}

TripleCount countAdjacencyTriples(const float* matrix, int T) {
    TripleCount count;
    count.total = tripleTotal(T);
    for (int k = 2; k < T; ++k) {
        const float* row = matrix + static_cast<size_t>(k) * T;
        for (int j = 1; j < k; ++j) {
            const float near = row[j];
            uint64_t hits = 0;
            for (int i = 0; i < j; ++i) {
                hits += row[i] < near ? 1 : 0;  // strictly: a tie (or NaN) fails
            }
            count.hits += hits;
        }
    }
    return count;
}

TripleCount countShrinkTriples(const float* s, int T) {
    // A pair i < j that counts (s[i] > s[j]) counts once for every later row k > j,
    // that is T - 1 - j times.
    TripleCount count;
    count.total = tripleTotal(T);
    for (int j = 1; j < T - 1; ++j) {
        uint64_t pairs = 0;
        for (int i = 0; i < j; ++i) {
            pairs += s[i] > s[j] ? 1 : 0;
        }
        count.hits += pairs * static_cast<uint64_t>(T - 1 - j);
    }
    return count;
}

MeanStd meanStd(const std::vector<double>& values) {
    MeanStd out;
    if (values.empty()) {
        return out;
    }
    double sum = 0.0;
    for (double v : values) {
        sum += v;
    }
    out.mean = sum / double(values.size());
    double squares = 0.0;
    for (double v : values) {
        squares += (v - out.mean) * (v - out.mean);
    }
    out.std = std::sqrt(squares / double(values.size()));
    return out;
}

}  // namespace nope
