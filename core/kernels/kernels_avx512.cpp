// Built with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mprefer-vector-width=512 on top of the
// library's AVX2 + FMA flags (see core/CMakeLists.txt): the loops of gelu_body.inc and
// dropout_body.inc vectorized 16 floats (or 8 64-bit hashes) wide. Measured on the Zen 5 EPYC,
// one thread: GELU forward 3.9 ms and backward 4.7 ms on 9.45M bf16 values (AVX2 build: 7.6 and
// 8.9 ms); the dropout mask of 13M values 1.6 ms (AVX2 build 10.8 ms, baseline x86-64 25.6 ms).
// Nothing else here: the CPU check (kernels_avx2.cpp) must run on CPUs without AVX-512.
#include "kernels/kernels.h"

#define NOPE_KERNEL_ISA avx512
#include "kernels/dropout_body.inc"
#include "kernels/gelu_body.inc"
#include "kernels/layer_norm_body.inc"
#include "kernels/round_body.inc"
