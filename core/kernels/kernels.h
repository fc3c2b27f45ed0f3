// Element-wise kernels on raw buffers (GELU with the tanh approximation, the dropout mask,
// LayerNorm's rows under bf16 autocast; attention of short sequences, in files of their own),
// compiled once for AVX2 + FMA (namespace avx2) and once for AVX-512 (namespace avx512), each in
// a translation unit of its own from the same loops (gelu_body.inc, dropout_body.inc), so that
// no inline code built for wider instructions can leak into the rest of the program. Call avx2's
// only when cpuHasAvx2Fma() is true and avx512's only when cpuHasAvx512() is; selected() picks
// the widest this CPU runs.
#pragma once

#include <cstdint>

namespace nope::kernels {

bool cpuHasAvx2Fma();
bool cpuHasAvx512();  // AVX-512 F, BW, VL and DQ
// bf16 dot products in hardware: AVX-512 BF16 or AMX-BF16 (the CPUID bits; without either,
// LibTorch's bf16 matrix products run far slower than its fp32 ones: model/fast_ops.h)
bool cpuHasBf16Products();
bool cpuHasAvx512Bf16();  // AVX-512 (as cpuHasAvx512) with its BF16 dot product

#define NOPE_KERNEL_DECLARATIONS                                                                   \
    /* y = gelu(x) */                                                                              \
    void geluForward(const float* x, float* y, int64_t n);                                         \
    /* dx = g * gelu'(x) */                                                                        \
    void geluBackward(const float* x, const float* g, float* dx, int64_t n);                       \
    /* the same on bf16 values stored as their 16 bits; arithmetic in fp32 */                      \
    void geluForwardBf16(const uint16_t* x, uint16_t* y, int64_t n);                               \
    void geluBackwardBf16(const uint16_t* x, const uint16_t* g, uint16_t* dx, int64_t n);          \
    /* s = gelu'(x) */                                                                             \
    void geluSlope(const float* x, float* s, int64_t n);                                           \
    /* geluForwardBf16 and geluBackwardBf16 from tables of every bf16 input's result */            \
    /* (geluBf16Tables(): the same bits) */                                                        \
    void geluForwardBf16Lookup(const uint16_t* values, const uint16_t* x, uint16_t* y, int64_t n); \
    void geluBackwardBf16Lookup(const float* slopes, const uint16_t* x, const uint16_t* g,         \
                                uint16_t* dx, int64_t n);                                          \
    /* out[2k], out[2k + 1] for pairs firstPair + k: 0 when dropped (a hash bit below */           \
    /* threshold), else scale; bf16: scale's 16 bits */                                            \
    void dropoutMask(uint64_t seed, uint32_t threshold, float scale, int64_t firstPair,            \
                     int64_t pairs, float* out);                                                   \
    void dropoutMaskBf16(uint64_t seed, uint32_t threshold, uint16_t scale, int64_t firstPair,     \
                         int64_t pairs, uint16_t* out);                                            \
    /* y = x rounded to the nearest bf16 (ties to even), kept in fp32; x == y allowed */           \
    void roundToBf16(const float* x, float* y, int64_t n);                                         \
    /* y = x + b widened to fp32 (a residual add: fp32 stream, bf16 branch); y == x allowed */     \
    void residualAddBf16(const float* x, const uint16_t* b, float* y, int64_t n);                  \
    /* y = a + b, and bits = y rounded to the nearest bf16 (a gradient summed at the stream and */ \
    /* narrowed for a bf16 branch); y == a allowed */                                              \
    void addNarrowBf16(const float* a, const float* b, float* y, uint16_t* bits, int64_t n);       \
    /* LayerNorm over rows of n values (b may be null): y as bf16, each row's mean and */          \
    /* 1 / sqrt(variance + eps) */                                                                 \
    void layerNormForwardBf16(const float* x, const float* w, const float* b, float eps,           \
                              int64_t rows, int64_t n, uint16_t* y, float* mean, float* rstd);     \
    /* its backward from gy (bf16): gx written, gw and gb (n each) added to */                     \
    void layerNormBackwardBf16(const float* x, const float* mean, const float* rstd,               \
                               const uint16_t* gy, const float* w, int64_t rows, int64_t n,        \
                               float* gx, float* gw, float* gb);                                   \
    /* the same with y and gy in fp32 (LayerNorm outside autocast) */                              \
    void layerNormForward(const float* x, const float* w, const float* b, float eps, int64_t rows, \
                          int64_t n, float* y, float* mean, float* rstd);                          \
    void layerNormBackward(const float* x, const float* mean, const float* rstd, const float* gy,  \
                           const float* w, int64_t rows, int64_t n, float* gx, float* gw,          \
                           float* gb);                                                             \
    /* attention of one head of one sequence (attention_body.inc): q, k, v rows of hs values */    \
    /* at row stride ld, t of them; p (t x t) gets the softmax weights (zeros right of the */      \
    /* diagonal when causal); mask (t x t, 0 or 1 / (1 - rate)) is the dropout on the weights */   \
    /* or null; y gets the weighted sum of the values, rows at stride ldy; work holds */           \
    /* attentionWorkFloats(t, hs) floats */                                                        \
    void attentionForward(const float* q, const float* k, const float* v, int64_t ld, int64_t t,   \
                          int64_t hs, bool causal, float scale, const float* mask, float* p,       \
                          float* y, int64_t ldy, float* work);                                     \
    void attentionForwardBf16(const uint16_t* q, const uint16_t* k, const uint16_t* v, int64_t ld, \
                              int64_t t, int64_t hs, bool causal, float scale, const float* mask,  \
                              float* p, uint16_t* y, int64_t ldy, float* work);                    \
    /* its backward from gy (rows at stride ldgy): q's, k's and v's gradients written at */        \
    /* stride ld */                                                                                \
    void attentionBackward(const float* q, const float* k, const float* v, int64_t ld, int64_t t,  \
                           int64_t hs, bool causal, float scale, const float* mask,                \
                           const float* p, const float* gy, int64_t ldgy, float* gq, float* gk,    \
                           float* gv, float* work);                                                \
    void attentionBackwardBf16(                                                                    \
        const uint16_t* q, const uint16_t* k, const uint16_t* v, int64_t ld, int64_t t,            \
        int64_t hs, bool causal, float scale, const float* mask, const float* p,                   \
        const uint16_t* gy, int64_t ldgy, uint16_t* gq, uint16_t* gk, uint16_t* gv, float* work);

// The floats of work either attention kernel needs (every build's tiles fit: rows and columns
// rounded up to 16).
inline int64_t attentionWorkFloats(int64_t t, int64_t hs) {
    const int64_t tp = (t + 15) / 16 * 16, hp = (hs + 15) / 16 * 16;
    return 5 * tp * hp + (tp > hp ? tp : hp) * tp + 3 * tp * tp;
}

namespace avx2 {
NOPE_KERNEL_DECLARATIONS
}  // namespace avx2

namespace avx512 {
NOPE_KERNEL_DECLARATIONS
// attentionForwardBf16 and attentionBackwardBf16 with AVX-512 BF16's dot product (the same values
// to the bit): only where cpuHasAvx512Bf16()
void attentionForwardBf16Dot(const uint16_t* q, const uint16_t* k, const uint16_t* v, int64_t ld,
                             int64_t t, int64_t hs, bool causal, float scale, const float* mask,
                             float* p, uint16_t* y, int64_t ldy, float* work);
void attentionBackwardBf16Dot(const uint16_t* q, const uint16_t* k, const uint16_t* v, int64_t ld,
                              int64_t t, int64_t hs, bool causal, float scale, const float* mask,
                              const float* p, const uint16_t* gy, int64_t ldgy, uint16_t* gq,
                              uint16_t* gk, uint16_t* gv, float* work);
}  // namespace avx512

#undef NOPE_KERNEL_DECLARATIONS

// The kernels of the widest instruction set this CPU runs (AVX-512, with its BF16 dot product
// where it has it, else AVX2; callers check cpuHasAvx2Fma() first).
struct Kernels {
    void (*geluForward)(const float*, float*, int64_t);
    void (*geluBackward)(const float*, const float*, float*, int64_t);
    void (*geluForwardBf16)(const uint16_t*, uint16_t*, int64_t);
    void (*geluBackwardBf16)(const uint16_t*, const uint16_t*, uint16_t*, int64_t);
    decltype(&avx2::geluSlope) geluSlope;
    decltype(&avx2::geluForwardBf16Lookup) geluForwardBf16Lookup;
    decltype(&avx2::geluBackwardBf16Lookup) geluBackwardBf16Lookup;
    void (*dropoutMask)(uint64_t, uint32_t, float, int64_t, int64_t, float*);
    void (*dropoutMaskBf16)(uint64_t, uint32_t, uint16_t, int64_t, int64_t, uint16_t*);
    void (*roundToBf16)(const float*, float*, int64_t);
    void (*residualAddBf16)(const float*, const uint16_t*, float*, int64_t);
    decltype(&avx2::addNarrowBf16) addNarrowBf16;
    void (*layerNormForwardBf16)(const float*, const float*, const float*, float, int64_t, int64_t,
                                 uint16_t*, float*, float*);
    void (*layerNormBackwardBf16)(const float*, const float*, const float*, const uint16_t*,
                                  const float*, int64_t, int64_t, float*, float*, float*);
    decltype(&avx2::layerNormForward) layerNormForward;
    decltype(&avx2::layerNormBackward) layerNormBackward;
    decltype(&avx2::attentionForward) attentionForward;
    decltype(&avx2::attentionForwardBf16) attentionForwardBf16;
    decltype(&avx2::attentionBackward) attentionBackward;
    decltype(&avx2::attentionBackwardBf16) attentionBackwardBf16;
};
const Kernels& selected();

// Subnormal floats flushed to zero on the calling thread while it lives (MXCSR's flush-to-zero
// and denormals-are-zero bits, as util/runtime.h sets on the program's threads); the thread's
// mode before it is restored after.
class FlushSubnormals {
public:
    FlushSubnormals();
    ~FlushSubnormals();
    FlushSubnormals(const FlushSubnormals&) = delete;
    FlushSubnormals& operator=(const FlushSubnormals&) = delete;

private:
    unsigned int m_saved;
};

// GELU of every bf16 input (indexed by its 16 bits) and its slope in fp32, computed once by
// selected()'s geluForwardBf16 and geluSlope with subnormal floats flushed to zero, as the
// program's threads run (util/runtime.h): the tables of the Lookup kernels, which give
// geluForwardBf16's and geluBackwardBf16's bits on such threads (tests/model/gelu_lookup_test.cpp
// checks every input). Where subnormals are not flushed, only subnormal inputs differ.
struct GeluBf16Tables {
    uint16_t values[65536];
    float slopes[65536];
};
const GeluBf16Tables& geluBf16Tables();

}  // namespace nope::kernels
