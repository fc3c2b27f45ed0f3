// Differentiable CPU kernels for the operations that dominated a LibTorch training step of this
// model after the Linear layers (measured with the autograd profiler, see docs/performance.md):
//   - GELU with the tanh approximation, forward and backward, in one pass each (float, bf16), on
//     CPUs with AVX2 and FMA (kernels/kernels_avx2.cpp, or kernels_avx512.cpp where the CPU has
//     AVX-512);
//   - LayerNorm: under bf16 autocast its bf16 output written directly (no separate cast pass
//     forward, nor a widening of its gradient backward), in fp32 outside it (a third of
//     LibTorch's time forward), on the same CPUs;
//   - the residual add of a bf16 block output to the fp32 stream, in one pass;
//   - the batched matrix products of attention in fp32, which LibTorch runs one small BLAS call
//     per (batch, head) with a tensor slice each, here oneDNN's sgemm over a parallel loop.
//   - bf16 matrix products (autocast's) on CPUs without bf16 instructions (AVX-512 BF16 or
//     AMX), where LibTorch's run 20 to 40 times slower than its fp32 ones: emulated, the operands
//     rounded to bf16 as autocast rounds them, multiplied by the fp32 kernels above and the
//     product rounded to bf16, the same rounding points as a bf16 product (which accumulates in
//     fp32); see Bf16Products.
// Anything else (other dtypes, other devices) falls back to the LibTorch operation, and so does
// everything, nope::linear's oneDNN path (model/linear.h) included, while fast kernels are turned
// off on the calling thread: the plain LibTorch twin that tests/model/model_fixture_test.cpp checks
// the whole model against, alongside the fast one.
#pragma once

#include "model/gemm.h"

#include <torch/torch.h>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>

namespace nope {

// A float tensor's elements, or a bf16 tensor's as their 16 bits (E = uint16_t), as the kernels
// (kernels/kernels.h) take them.
template <typename E>
E* elementsOf(const torch::Tensor& t) {
    if constexpr (std::is_same_v<E, uint16_t>) {
        return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>());
    } else {
        return t.data_ptr<float>();
    }
}

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
torch::Tensor geluTanh(const torch::Tensor& x);

// LayerNorm over the last dimension (weight.size(0) values; bias may be undefined). With fast
// kernels on, an fp32 x on an AVX2 CPU is normalized by kernels::layerNormForward: under CPU bf16
// autocast written as bf16 in the same pass, the values the Linear after it would round it to
// (its backward takes that bf16 gradient without widening it first), outside autocast in fp32.
// Elsewhere LibTorch's layer_norm (fp32 out for fp32 in).
torch::Tensor layerNorm(const torch::Tensor& x, const torch::Tensor& weight,
                        const torch::Tensor& bias, double eps);

// x + branch. For an fp32 x and a bf16 branch of its shape (the residual stream and a block's
// output under bf16 autocast), with fast kernels on, in one pass (kernels::residualAddBf16)
// with the same result; the branch's gradient is the sum's narrowed to bf16, as LibTorch's.
torch::Tensor residualAdd(const torch::Tensor& x, const torch::Tensor& branch);

// {x + branch, layerNorm(x + branch, weight, bias, eps)}: a residual add and the LayerNorm that
// reads the stream next. Under CPU bf16 autocast with fast kernels on (an fp32 x, a bf16 branch)
// in one pass by blocks of rows that stay in cache, with the values and gradients of the two
// calls bit for bit (the stream's gradient and LayerNorm's added and narrowed for the branch in
// the same pass); elsewhere the two calls.
std::pair<torch::Tensor, torch::Tensor> residualAddLayerNorm(const torch::Tensor& x,
                                                             const torch::Tensor& branch,
                                                             const torch::Tensor& weight,
                                                             const torch::Tensor& bias, double eps);

// a (N, M, K) times b: (N, K, P) when !transposeB, or b^T with b (N, P, K) when transposeB.
torch::Tensor batchedMatmul(const torch::Tensor& a, const torch::Tensor& b, bool transposeB);

// How autocast's bf16 matrix products (nope::linear, batchedMatmul) run on the CPU: Auto emulates
// them where the CPU has no bf16 instructions (kernels::cpuHasBf16Products()) and leaves them to
// LibTorch elsewhere; Native and Emulated force one way (tests, bench). The environment variable
// NOPESCOPE_BF16_PRODUCTS=native|emulated sets the starting value (read once); process-wide.
enum class Bf16Products { Auto, Native, Emulated };
void setBf16Products(Bf16Products mode);
Bf16Products bf16Products();
// Whether bf16 products are emulated now: Emulated, or Auto on a CPU without bf16 instructions.
bool emulatingBf16Products();
// Why bf16 products are emulated, for a status line ("this CPU has neither AVX-512 BF16 nor AMX"
// or "NOPESCOPE_BF16_PRODUCTS=emulated"); empty where they are not.
std::string bf16EmulationReason();

// Whether autocast's bf16 product of a and b takes the emulated path on this thread: fast kernels
// on, CPU tensors of float or bf16, CPU autocast on in bf16, and emulatingBf16Products().
bool emulateBf16Product(const torch::Tensor& a, const torch::Tensor& b);
// t rounded to bf16 and back to float (differentiable: its gradient is rounded the same way).
torch::Tensor bf16Rounded(const torch::Tensor& t);

// Whether geluTanh, batchedMatmul and nope::linear may take their fast kernels on this thread (on
// by default). The choice is made in the forward pass; its backward follows it.
bool fastKernelsEnabled();
void setFastKernels(bool enabled);

// Sets a setting (read with Get, written with Set) while it lives, then restores the previous
// value.
template <typename T, T (*Get)(), void (*Set)(T)>
class ScopedSetting {
public:
    explicit ScopedSetting(T value) : m_previous(Get()) { Set(value); }
    ~ScopedSetting() { Set(m_previous); }
    ScopedSetting(const ScopedSetting&) = delete;
    ScopedSetting& operator=(const ScopedSetting&) = delete;

private:
    T m_previous;
};

// Turns the fast kernels on or off on this thread while it lives.
using FastKernelsScope = ScopedSetting<bool, fastKernelsEnabled, setFastKernels>;

// The bf16 weight copies nope::linear reads on this thread (model/linear.h), null where none:
// set by SharedBf16Weights on the thread that makes them, carried to the workers by onEachThread.
class SharedBf16Weights;
const SharedBf16Weights* sharedBf16Weights();
void setSharedBf16Weights(const SharedBf16Weights* weights);

// Runs work(0) .. work(count - 1) split between the intra-op threads, each thread its indices one
// after another with every operator inline (single-threaded) on its core, under the caller's
// LibTorch thread-local state (grad mode, autocast, the profiler), fast-kernel setting and shared
// bf16 weights (each worker's restored when its part ends); on the
// caller alone when count is 1 or it already runs in a parallel region. The first exception
// reaches the caller. For work on the CPU: at small sizes two cores each running half of it
// alone beat both sharing every operator (the analysis, the training step).
void onEachThread(int64_t count, const std::function<void(int64_t)>& work);
// Sets the bf16 products' mode while it lives (process-wide).
using Bf16ProductsScope = ScopedSetting<Bf16Products, bf16Products, setBf16Products>;

}  // namespace nope
