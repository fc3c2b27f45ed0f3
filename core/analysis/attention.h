// What the attention weights of a model do on a set of prompts, per layer and head: the mean
// attention matrix over prompts, its entropy and the mean distance it reaches back. Value types
// (no LibTorch), for the CLI's files and the window's panels.
//   entropy            mean over prompts and query positions of -sum_j w_ij ln w_ij (nats):
//                      ln(i + 1) for uniform causal weights at position i, 0 for one token each
//   mean distance      mean over prompts and query positions of sum_j w_ij (i - j): i / 2 for
//                      uniform causal weights, 0 for attention to the token itself
#pragma once

#include <vector>

namespace nope {

struct HeadAttention {
    int layer = 1;  // 1..L
    int head = 0;   // 0..nh-1
    double entropy = 0.0;
    double meanDistance = 0.0;
    std::vector<float> meanMatrix;  // T x T, row i the weights of query i over keys j
    std::vector<std::vector<float>> promptMatrices;  // T x T of each kept prompt (for display)
};

struct AttentionAnalysis {
    int samples = 0;
    int seqLen = 0;
    std::vector<HeadAttention> heads;  // layer-major, then head

    bool empty() const { return heads.empty(); }
    int layerCount() const { return heads.empty() ? 0 : heads.back().layer; }
    int headCount() const;  // heads per layer
    const HeadAttention* find(int layer, int head) const;
};

}  // namespace nope
