// Element-wise GELU (tanh approximation) kernels on raw buffers, compiled for AVX2 + FMA in a
// translation unit of their own (no other headers, so no inline code built for AVX2 can leak into
// the rest of the program). Call them only when cpuHasAvx2Fma() is true.
#pragma once

#include <cstdint>

namespace nope::kernels {

bool cpuHasAvx2Fma();

// y = gelu(x)
void geluForward(const float* x, float* y, int64_t n);
// dx = g * gelu'(x)
void geluBackward(const float* x, const float* g, float* dx, int64_t n);
// The same on bf16 values stored as their 16 bits; arithmetic in fp32.
void geluForwardBf16(const uint16_t* x, uint16_t* y, int64_t n);
void geluBackwardBf16(const uint16_t* x, const uint16_t* g, uint16_t* dx, int64_t n);

}  // namespace nope::kernels
