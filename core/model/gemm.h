// The fp32 matrix products under the model's fast Linear and attention (model/fast_ops.h), and
// which library runs each. Torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace nope {

// C (M x N, row-major) = op(A) op(B) through oneDNN's sgemm, op = transpose where the flag is 'T'.
// oneDNN running out of memory (its packing buffers) throws std::bad_alloc, as LibTorch's
// allocator does, so that a user reads "out of memory"; any other failure a runtime_error.
void sgemm(char transA, char transB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
           const float* B, int64_t ldb, float* C);

// Small products through sgemm, of each transposition and of the shapes that need code of their
// own, so that oneDNN writes its sgemm code (generated at the first call that needs it, once per
// process) while memory is plentiful: generated where the process's memory had run out, it
// crashed instead of reporting it. Where weight gradients go through OpenBLAS, one product on each
// thread as well, for OpenBLAS's work buffers (configureRuntime calls it).
void prepareSgemm();

// A Linear's weight gradient, dW (N x K) = dY^T X for dY (M x N) and X (M x K), all row-major and
// contiguous. Where weightGradientsThroughOpenBlas(), on one thread (inside a parallel region, as
// the split training step's shares run, or with one intra-op thread) it runs through OpenBLAS:
// with thousands of rows oneDNN's sgemm ran this transposed product at 40 to 70% of its rate on
// one Zen 3 core, OpenBLAS near its full rate (docs/performance.md). Elsewhere through sgemm.
void weightGradient(int64_t M, int64_t N, int64_t K, const float* dY, const float* X, float* dW);
// The same product through OpenBLAS alone, with the threads OpenBLAS takes where it is called;
// false, nothing written, where OpenBLAS is not loaded or a size is 0 (or past int) (tests check
// it on every CPU).
bool openBlasWeightGradient(int64_t M, int64_t N, int64_t K, const float* dY, const float* X,
                            float* dW);

// Whether LibTorch's BLAS (libblas.so.3) is OpenBLAS built sequential or with OpenMP (the
// libopenblas0-openmp package), so that a call inside ATen's OpenMP region stays on its thread.
bool openBlasLoaded();
// Whether weightGradient takes OpenBLAS on one thread: OpenBLAS loaded, on a CPU without AVX-512
// (on those oneDNN and OpenBLAS both run AVX2 kernels, and OpenBLAS won; with AVX-512 oneDNN ran
// every Linear product at about twice OpenBLAS's rate on a Zen 5, docs/performance.md).
bool weightGradientsThroughOpenBlas();
// Which library runs the weight gradients, and why, for `bench`.
std::string weightGradientLibrary();

}  // namespace nope
