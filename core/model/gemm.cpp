#include "model/gemm.h"

#include "kernels/kernels.h"

#include <dlfcn.h>
#include <dnnl.h>

#include <ATen/Parallel.h>

#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <vector>

namespace nope {

namespace {

// The Fortran BLAS product, column-major: C = alpha op(A) op(B) + beta C.
using FortranSgemm = void (*)(const char* transA, const char* transB, const int* m, const int* n,
                              const int* k, const float* alpha, const float* a, const int* lda,
                              const float* b, const int* ldb, const float* beta, float* c,
                              const int* ldc);

// sgemm_ of OpenBLAS where the process has already loaded it (as LibTorch's libblas.so.3, the
// libopenblas0-openmp package) built sequential or with OpenMP: inside ATen's OpenMP parallel
// region such a build runs single-threaded, where a pthreads build would start threads of its own
// in every share. Taken from the library that defines openblas_get_config, so that a reference
// BLAS loaded first is never called by mistake; null where there is none.
FortranSgemm openBlasSgemm() {
    static const FortranSgemm kSgemm = []() -> FortranSgemm {
        void* config = dlsym(RTLD_DEFAULT, "openblas_get_config");
        Dl_info info{};
        if (config == nullptr || dladdr(config, &info) == 0 || info.dli_fname == nullptr) {
            return nullptr;
        }
        void* library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (library == nullptr) {
            return nullptr;
        }
        using Parallel = int (*)();
        const auto parallel = reinterpret_cast<Parallel>(dlsym(library, "openblas_get_parallel"));
        constexpr int kSequential = 0, kOpenMp = 2;
        if (parallel == nullptr || (parallel() != kSequential && parallel() != kOpenMp)) {
            return nullptr;
        }
        return reinterpret_cast<FortranSgemm>(dlsym(library, "sgemm_"));
    }();
    return kSgemm;
}

}  // namespace

void sgemm(char transA, char transB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
           const float* B, int64_t ldb, float* C) {
    const dnnl_status_t status =
        dnnl_sgemm(transA, transB, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, N);
    if (status == dnnl_out_of_memory) {
        throw std::bad_alloc();
    }
    if (status != dnnl_success) {
        throw std::runtime_error("oneDNN sgemm failed with status " +
                                 std::to_string(static_cast<int>(status)));
    }
}

void prepareSgemm() {
    // oneDNN 2.6 generates three groups of code, each at the first product that needs it: the
    // 64 x 64 products need two, and the tiny ones (a row or a column of 2) the third, which the
    // analysis's cosine products of short prompts first needed (found with gdb on pthread_once;
    // after these no shape from 1 to 2048 generated more).
    struct Shape {
        int64_t m, n, k;
    };
    constexpr int64_t kLargest = 64 * 64;
    std::vector<float> a(kLargest, 1.0f), b(kLargest, 1.0f), c(kLargest);
    for (const Shape s : {Shape{64, 64, 64}, Shape{2, 2, 2}, Shape{2, 1, 2}, Shape{1, 2, 2}}) {
        for (const char transA : {'N', 'T'}) {
            for (const char transB : {'N', 'T'}) {
                sgemm(transA, transB, s.m, s.n, s.k, a.data(), transA == 'N' ? s.k : s.m, b.data(),
                      transB == 'N' ? s.n : s.k, c.data());
            }
        }
    }
    if (!weightGradientsThroughOpenBlas()) {
        return;
    }
    // OpenBLAS maps a work buffer for each thread that is in a product at the same time, at its
    // first such product, and crashes where that mapping fails. Each thread of the pool runs one
    // product, started together, so that the buffers of the split step's shares exist early.
    const int threads = at::get_num_threads();
    std::atomic<int> arrived{0};
    at::parallel_for(0, threads, 1, [&](int64_t, int64_t) {
        constexpr int64_t n = 64;
        std::vector<float> x(n * n, 1.0f), dy(n * n, 1.0f), dw(n * n);
        ++arrived;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) {
        }
        openBlasWeightGradient(n, n, n, dy.data(), x.data(), dw.data());
    });
}

bool openBlasWeightGradient(int64_t M, int64_t N, int64_t K, const float* dY, const float* X,
                            float* dW) {
    const FortranSgemm blas = openBlasSgemm();
    constexpr int64_t kIntMax = 2147483647;
    if (blas == nullptr || M < 1 || N < 1 || K < 1 || M > kIntMax || N > kIntMax || K > kIntMax) {
        return false;
    }
    // Row-major dW (N x K) is column-major dW^T (K x N) = X^T dY: row-major X (M x K) read
    // column-major is X^T (K x M), taken as is; row-major dY (M x N) is dY^T (N x M), transposed.
    const int m = int(K), n = int(N), k = int(M);
    const float one = 1.0f, zero = 0.0f;
    blas("N", "T", &m, &n, &k, &one, X, &m, dY, &n, &zero, dW, &m);
    return true;
}

void weightGradient(int64_t M, int64_t N, int64_t K, const float* dY, const float* X, float* dW) {
    static const bool kOpenBlas = weightGradientsThroughOpenBlas();
    const bool oneThread = at::in_parallel_region() || at::get_num_threads() == 1;
    if (!(kOpenBlas && oneThread && openBlasWeightGradient(M, N, K, dY, X, dW))) {
        sgemm('T', 'N', N, K, M, dY, N, X, K, dW);
    }
}

bool openBlasLoaded() {
    return openBlasSgemm() != nullptr;
}

bool weightGradientsThroughOpenBlas() {
    return openBlasLoaded() && !kernels::cpuHasAvx512();
}

std::string weightGradientLibrary() {
    if (weightGradientsThroughOpenBlas()) {
        return "OpenBLAS on one thread (a share of the split step), oneDNN on several";
    }
    return openBlasLoaded() ? "oneDNN (with AVX-512 it runs them at twice OpenBLAS's rate)"
                            : "oneDNN (LibTorch's BLAS is not OpenBLAS built sequential or with "
                              "OpenMP)";
}

}  // namespace nope
