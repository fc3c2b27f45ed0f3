// The adjacency probability score of a self-cosine-similarity matrix, and the same triple count
// on per-token scalars. No LibTorch: inputs are row-major float buffers.
//
// For row k, every triple of strictly earlier tokens i < j < k counts when C[k][i] < C[k][j]
// (strictly: a tie fails): the nearer token j is more similar to k than the farther token i.
// The score is (triples that count) / (all triples), pooled over all rows; rows 0 and 1 have no
// triple, and there are sum_k k(k-1)/2 = T(T-1)(T-2)/6 triples in all.
#pragma once

#include <cstdint>
#include <vector>

namespace nope {

struct TripleCount {
    uint64_t hits = 0;   // triples that count
    uint64_t total = 0;  // all triples considered
    double score() const { return total == 0 ? 0.0 : double(hits) / double(total); }
};

// T(T-1)(T-2)/6.
uint64_t tripleTotal(int T);

// The triple count of a T x T matrix (row-major). Perfect decay from the diagonal gives 1,
// the reversed order 0, a constant matrix 0 (all ties), a random matrix about 1/2.
TripleCount countAdjacencyTriples(const float* matrix, int T);
inline double adjacencyScore(const float* matrix, int T) {
    return countAdjacencyTriples(matrix, T).score();
}

// The same count with C[k][i] replaced by -s[i]: a triple counts when s[i] > s[j]. Scores near 1
// mean s shrinks with position (used for per-token norm and variance).
TripleCount countShrinkTriples(const float* s, int T);
inline double shrinkScore(const float* s, int T) {
    return countShrinkTriples(s, T).score();
}

struct MeanStd {
    double mean = 0.0;
    double std = 0.0;  // population standard deviation (divides by n)
};
MeanStd meanStd(const std::vector<double>& values);

}  // namespace nope
