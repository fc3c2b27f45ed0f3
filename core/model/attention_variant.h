// Inference-time switches of the attention, for the ablations of the mechanism lab
// (mechanism/ablation.h): how the scores become weights, and what stands in for the query, key
// and value. Never used in training. The default is the model's own attention.
// The normalisations other than softmax apply a function f to the scaled scores and divide by the
// row sum. Causal by default: future tokens get weight 0 whatever f(0) is, `uniform` averages the
// earlier tokens and the token itself, and a row whose sum is 0 gets weight 0 everywhere.
// `asAuthors` reproduces the research code the paper's ablations came from instead: future scores
// are set to 0 before f (so `sigmoid` weighs every future token by sigmoid(0) = 0.5), `uniform`
// averages all T tokens, future included, and the division is plain (NaN on a zero sum).
#pragma once

namespace nope {

enum class AttentionNorm { Softmax, NoDiv, DivSum, Abs, Relu, Gelu, Sigmoid, Uniform };

struct AttentionVariant {
    AttentionNorm norm = AttentionNorm::Softmax;
    bool noQ = false;       // the query is the attention's input x, not its projection
    bool noK = false;       // the key likewise
    bool noV = false;       // the value likewise
    double shrinkX = 0.0;   // above 0: q = k = v = x / shrinkX (no projections)
    bool inputOut = false;  // the attention returns its input x (no weights, no c_proj)
    bool asAuthors = false;

    bool isModelOwn() const {
        return norm == AttentionNorm::Softmax && !noQ && !noK && !noV && !(shrinkX > 0.0) &&
               !inputOut;
    }
};

}  // namespace nope
