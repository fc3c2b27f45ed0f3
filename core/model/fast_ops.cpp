#include "model/fast_ops.h"

#include "kernels/kernels.h"
#include "util/enum_names.h"
#include "util/profile_scope.h"

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace nope {

namespace {

constexpr int64_t kGrain = 32768;

thread_local bool t_fastKernels = true;
thread_local const SharedBf16Weights* t_sharedBf16Weights = nullptr;

constexpr EnumName<Bf16Products> kBf16ProductsNames[] = {{Bf16Products::Auto, "auto"},
                                                         {Bf16Products::Native, "native"},
                                                         {Bf16Products::Emulated, "emulated"}};

std::atomic<Bf16Products>& bf16ProductsSetting() {
    static std::atomic<Bf16Products> setting{
        environmentChoice(kBf16ProductsNames, "NOPESCOPE_BF16_PRODUCTS", Bf16Products::Auto)};
    return setting;
}

template <typename F>
void forChunks(int64_t n, F f) {
    at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) { f(begin, end - begin); });
}

torch::Tensor geluForward(const torch::Tensor& x) {
    const kernels::Kernels& k = kernels::selected();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (x.scalar_type() == torch::kFloat) {
        const float* in = x.data_ptr<float>();
        float* out = y.data_ptr<float>();
        forChunks(n, [&](int64_t at, int64_t len) { k.geluForward(in + at, out + at, len); });
    } else {
        const auto* in = reinterpret_cast<const uint16_t*>(x.data_ptr<at::BFloat16>());
        auto* out = reinterpret_cast<uint16_t*>(y.data_ptr<at::BFloat16>());
        const uint16_t* values = kernels::geluBf16Tables().values;
        forChunks(n, [&](int64_t at, int64_t len) {
            k.geluForwardBf16Lookup(values, in + at, out + at, len);
        });
    }
    return y;
}

torch::Tensor geluBackward(const torch::Tensor& x, const torch::Tensor& grad) {
    const kernels::Kernels& k = kernels::selected();
    const auto g = grad.to(x.scalar_type()).contiguous();
    auto dx = torch::empty_like(x);
    const int64_t n = x.numel();
    if (x.scalar_type() == torch::kFloat) {
        const float* in = x.data_ptr<float>();
        const float* gi = g.data_ptr<float>();
        float* out = dx.data_ptr<float>();
        forChunks(
            n, [&](int64_t at, int64_t len) { k.geluBackward(in + at, gi + at, out + at, len); });
    } else {
        const auto* in = reinterpret_cast<const uint16_t*>(x.data_ptr<at::BFloat16>());
        const auto* gi = reinterpret_cast<const uint16_t*>(g.data_ptr<at::BFloat16>());
        auto* out = reinterpret_cast<uint16_t*>(dx.data_ptr<at::BFloat16>());
        const float* slopes = kernels::geluBf16Tables().slopes;
        forChunks(n, [&](int64_t at, int64_t len) {
            k.geluBackwardBf16Lookup(slopes, in + at, gi + at, out + at, len);
        });
    }
    return dx;
}

struct GeluTanh : torch::autograd::Function<GeluTanh> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
        NOPE_PROFILE_SCOPE("nope::gelu");
        const auto input = x.contiguous();
        ctx->save_for_backward({input});
        return geluForward(input);
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::gelu_backward");
        return {geluBackward(ctx->get_saved_variables()[0], grads[0])};
    }
};

// LayerNorm of fp32 rows, written as E: uint16_t (bf16 under bf16 autocast: the Linear after it
// takes bf16) or float. LibTorch's fp32 layer_norm takes about three times as long forward.
template <typename E>
struct LayerNormRows : torch::autograd::Function<LayerNormRows<E>> {
    static constexpr bool kBf16 = std::is_same_v<E, uint16_t>;
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& weight, const torch::Tensor& bias,
                                 double eps) {
        NOPE_PROFILE_SCOPE("nope::layer_norm");
        const kernels::Kernels& k = kernels::selected();
        const auto input = x.contiguous(), w = weight.contiguous();
        const auto b = bias.numel() > 0 ? bias.contiguous() : torch::Tensor();
        const int64_t n = w.numel(), rows = n > 0 ? input.numel() / n : 0;
        auto y = torch::empty(input.sizes(),
                              input.options().dtype(kBf16 ? torch::kBFloat16 : torch::kFloat));
        auto mean = torch::empty({rows}, input.options()),
             rstd = torch::empty({rows}, input.options());
        const float* in = input.data_ptr<float>();
        const float* wp = w.data_ptr<float>();
        const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
        E* out = elementsOf<E>(y);
        float* mp = mean.data_ptr<float>();
        float* rp = rstd.data_ptr<float>();
        at::parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)),
                         [&](int64_t begin, int64_t end) {
                             if constexpr (kBf16) {
                                 k.layerNormForwardBf16(in + begin * n, wp, bp, float(eps),
                                                        end - begin, n, out + begin * n, mp + begin,
                                                        rp + begin);
                             } else {
                                 k.layerNormForward(in + begin * n, wp, bp, float(eps), end - begin,
                                                    n, out + begin * n, mp + begin, rp + begin);
                             }
                         });
        ctx->save_for_backward({input, w, mean, rstd});
        ctx->saved_data["bias"] = b.defined();
        return y;
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::layer_norm_backward");
        const kernels::Kernels& k = kernels::selected();
        const auto saved = ctx->get_saved_variables();
        const auto& input = saved[0];
        const auto& w = saved[1];
        const auto gy = grads[0].to(kBf16 ? torch::kBFloat16 : torch::kFloat).contiguous();
        const int64_t n = w.numel(), rows = n > 0 ? input.numel() / n : 0;
        auto gx = torch::empty_like(input);
        // the rows split in a fixed number of parts, each summing its own share of gw and gb
        const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), rows));
        auto partial = torch::zeros({parts, 2, n}, w.options());
        const float* in = input.data_ptr<float>();
        const float* mp = saved[2].data_ptr<float>();
        const float* rp = saved[3].data_ptr<float>();
        const E* g = elementsOf<E>(gy);
        const float* wp = w.data_ptr<float>();
        float* dx = gx.data_ptr<float>();
        float* sums = partial.data_ptr<float>();
        at::parallel_for(0, parts, 1, [&](int64_t first, int64_t last) {
            for (int64_t p = first; p < last; ++p) {
                const int64_t begin = rows * p / parts, end = rows * (p + 1) / parts;
                float* gw = sums + p * 2 * n;
                if constexpr (kBf16) {
                    k.layerNormBackwardBf16(in + begin * n, mp + begin, rp + begin, g + begin * n,
                                            wp, end - begin, n, dx + begin * n, gw, gw + n);
                } else {
                    k.layerNormBackward(in + begin * n, mp + begin, rp + begin, g + begin * n, wp,
                                        end - begin, n, dx + begin * n, gw, gw + n);
                }
            }
        });
        const auto total = partial.sum(0);  // (2, n)
        const bool withBias = ctx->saved_data["bias"].toBool();
        return {gx, total[0], withBias ? total[1] : torch::Tensor(), torch::Tensor()};
    }
};

// x (fp32) + branch (bf16) in one pass: LibTorch widens the branch into a tensor of its own
// first and adds through its mixed-type loop (about 1 ms for a share's 1.3M values at the quick
// shape, against 0.2 ms for an fp32 add).
struct ResidualAddBf16 : torch::autograd::Function<ResidualAddBf16> {
    static torch::Tensor forward(torch::autograd::AutogradContext*, const torch::Tensor& x,
                                 const torch::Tensor& branch) {
        NOPE_PROFILE_SCOPE("nope::residual_add");
        const kernels::Kernels& k = kernels::selected();
        const auto xc = x.contiguous(), bc = branch.contiguous();
        auto y = torch::empty_like(xc);
        const float* in = xc.data_ptr<float>();
        const auto* b = reinterpret_cast<const uint16_t*>(bc.data_ptr<at::BFloat16>());
        float* out = y.data_ptr<float>();
        forChunks(xc.numel(), [&](int64_t begin, int64_t count) {
            k.residualAddBf16(in + begin, b + begin, out + begin, count);
        });
        return y;
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::tensor_list grads) {
        // the branch's gradient narrowed first: the engine may add into the stream's in place
        auto branch = grads[0].to(torch::kBFloat16);
        return {grads[0], branch};
    }
};

// x (fp32) + branch (bf16) and the sum's LayerNorm written as bf16, by blocks of rows that stay
// in cache between the add and the normalization; backward, LayerNorm's gradient and the
// stream's are added and narrowed for the branch in the same blocks. The same values and
// gradients, bit for bit, as residualAdd followed by layerNorm, where the sum crossed memory
// once more forward and the gradients' sum (autograd's) and the branch's narrowing (residualAdd's
// backward) took a pass each.
struct ResidualAddLayerNormBf16 : torch::autograd::Function<ResidualAddLayerNormBf16> {
    // 16 rows of 256 floats: 16 KB a block, in the first-level cache with its bf16 output
    static constexpr int64_t kBlockFloats = 4096;

    static int64_t blockRows(int64_t n) {
        return std::max<int64_t>(1, kBlockFloats / std::max<int64_t>(n, 1));
    }

    static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& x, const torch::Tensor& branch,
                                                const torch::Tensor& weight,
                                                const torch::Tensor& bias, double eps) {
        NOPE_PROFILE_SCOPE("nope::residual_add_layer_norm");
        const kernels::Kernels& k = kernels::selected();
        const auto xc = x.contiguous(), bc = branch.contiguous(), w = weight.contiguous();
        const auto b = bias.numel() > 0 ? bias.contiguous() : torch::Tensor();
        const int64_t n = w.numel(), rows = n > 0 ? xc.numel() / n : 0, step = blockRows(n);
        auto sum = torch::empty_like(xc);
        auto y = torch::empty(xc.sizes(), xc.options().dtype(torch::kBFloat16));
        auto mean = torch::empty({rows}, xc.options()), rstd = torch::empty({rows}, xc.options());
        const float* in = xc.data_ptr<float>();
        const uint16_t* br = elementsOf<uint16_t>(bc);
        const float* wp = w.data_ptr<float>();
        const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
        float* s = sum.data_ptr<float>();
        uint16_t* out = elementsOf<uint16_t>(y);
        float* mp = mean.data_ptr<float>();
        float* rp = rstd.data_ptr<float>();
        at::parallel_for(0, rows, std::max<int64_t>(step, kGrain / std::max<int64_t>(n, 1)),
                         [&](int64_t begin, int64_t end) {
                             for (int64_t r = begin; r < end; r += step) {
                                 const int64_t count = std::min(step, end - r), at = r * n;
                                 k.residualAddBf16(in + at, br + at, s + at, count * n);
                                 k.layerNormForwardBf16(s + at, wp, bp, float(eps), count, n,
                                                        out + at, mp + r, rp + r);
                             }
                         });
        ctx->save_for_backward({sum, w, mean, rstd});
        ctx->saved_data["bias"] = b.defined();
        return {sum, y};
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::residual_add_layer_norm_backward");
        const kernels::Kernels& k = kernels::selected();
        const auto saved = ctx->get_saved_variables();
        const auto& sum = saved[0];
        const auto& w = saved[1];
        // undefined gradients arrive as zeros (the function materializes them)
        const auto gs = grads[0].to(torch::kFloat).contiguous();
        const auto gy = grads[1].to(torch::kBFloat16).contiguous();
        const int64_t n = w.numel(), rows = n > 0 ? sum.numel() / n : 0, step = blockRows(n);
        auto gx = torch::empty_like(sum);
        auto gb = torch::empty(sum.sizes(), sum.options().dtype(torch::kBFloat16));
        const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), rows));
        auto partial = torch::zeros({parts, 2, n}, w.options());
        const float* in = sum.data_ptr<float>();
        const float* mp = saved[2].data_ptr<float>();
        const float* rp = saved[3].data_ptr<float>();
        const float* stream = gs.data_ptr<float>();
        const uint16_t* g = elementsOf<uint16_t>(gy);
        const float* wp = w.data_ptr<float>();
        float* dx = gx.data_ptr<float>();
        uint16_t* db = elementsOf<uint16_t>(gb);
        float* sums = partial.data_ptr<float>();
        at::parallel_for(0, parts, 1, [&](int64_t first, int64_t last) {
            for (int64_t p = first; p < last; ++p) {
                const int64_t begin = rows * p / parts, end = rows * (p + 1) / parts;
                float* gw = sums + p * 2 * n;
                for (int64_t r = begin; r < end; r += step) {
                    const int64_t count = std::min(step, end - r), at = r * n;
                    k.layerNormBackwardBf16(in + at, mp + r, rp + r, g + at, wp, count, n, dx + at,
                                            gw, gw + n);
                    k.addNarrowBf16(dx + at, stream + at, dx + at, db + at, count * n);
                }
            }
        });
        const auto total = partial.sum(0);  // (2, n)
        const bool withBias = ctx->saved_data["bias"].toBool();
        return {gx, gb, total[0], withBias ? total[1] : torch::Tensor(), torch::Tensor()};
    }
};

// C[n] (M x P) = op(A[n]) op(B[n]) over the batch, for contiguous 3-D tensors. A is stored
// (M x K), or (K x M) when transA; B is stored (K x P), or (P x K) when transB.
void sgemmBatch(const torch::Tensor& a, bool transA, const torch::Tensor& b, bool transB,
                torch::Tensor& c) {
    const int64_t N = a.size(0);
    const int64_t M = transA ? a.size(2) : a.size(1);
    const int64_t K = transA ? a.size(1) : a.size(2);
    const int64_t P = transB ? b.size(1) : b.size(2);
    const int64_t strideA = a.size(1) * a.size(2), strideB = b.size(1) * b.size(2);
    const float* A = a.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    float* C = c.data_ptr<float>();
    at::parallel_for(0, N, 1, [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
            sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, P, K, A + n * strideA, a.size(2),
                  B + n * strideB, b.size(2), C + n * M * P);
        }
    });
}

struct BatchedMatmul : torch::autograd::Function<BatchedMatmul> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a,
                                 const torch::Tensor& b, bool transB) {
        NOPE_PROFILE_SCOPE("nope::batched_matmul");
        const auto ac = a.contiguous(), bc = b.contiguous();
        auto c =
            torch::empty({ac.size(0), ac.size(1), transB ? bc.size(1) : bc.size(2)}, ac.options());
        sgemmBatch(ac, false, bc, transB, c);
        ctx->save_for_backward({ac, bc});
        ctx->saved_data["transB"] = transB;
        return c;
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::batched_matmul_backward");
        const auto saved = ctx->get_saved_variables();
        const auto& a = saved[0];
        const auto& b = saved[1];
        const bool transB = ctx->saved_data["transB"].toBool();
        const auto dc = grads[0].contiguous();  // (N, M, P)
        torch::Tensor da, db;
        if (ctx->needs_input_grad(0)) {  // dA = dC op(B)^T
            da = torch::empty_like(a);
            sgemmBatch(dc, false, b, !transB, da);
        }
        if (ctx->needs_input_grad(1)) {
            db = torch::empty_like(b);
            if (transB) {  // C = A B^T: dB = dC^T A
                sgemmBatch(dc, true, a, false, db);
            } else {  // C = A B: dB = A^T dC
                sgemmBatch(a, true, dc, false, db);
            }
        }
        return {da, db, torch::Tensor()};
    }
};

// t (float) rounded to bf16 and kept in fp32, in one pass (.to(kBFloat16).to(kFloat) takes two
// and a bf16 buffer).
torch::Tensor roundedToBf16(const torch::Tensor& t) {
    const auto in = t.contiguous();
    auto out = torch::empty_like(in);
    const kernels::Kernels& k = kernels::selected();
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    forChunks(in.numel(), [&](int64_t at, int64_t len) { k.roundToBf16(src + at, dst + at, len); });
    return out;
}

// The rounding as a differentiable operation: the gradient is rounded the same way, as the two
// casts' gradients round it.
struct Bf16Round : torch::autograd::Function<Bf16Round> {
    static torch::Tensor forward(torch::autograd::AutogradContext*, const torch::Tensor& t) {
        NOPE_PROFILE_SCOPE("nope::round_bf16");
        return roundedToBf16(t);
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::round_bf16_backward");
        if (!grads[0].defined()) {
            return {torch::Tensor()};
        }
        return {roundedToBf16(grads[0].to(torch::kFloat))};
    }
};

}  // namespace

void setBf16Products(Bf16Products mode) {
    bf16ProductsSetting().store(mode);
}

Bf16Products bf16Products() {
    return bf16ProductsSetting().load();
}

bool emulatingBf16Products() {
    static const bool kHardware = kernels::cpuHasBf16Products();
    const Bf16Products mode = bf16Products();
    return mode == Bf16Products::Emulated || (mode == Bf16Products::Auto && !kHardware);
}

std::string bf16EmulationReason() {
    if (!emulatingBf16Products()) {
        return {};
    }
    return bf16Products() == Bf16Products::Emulated ? "NOPESCOPE_BF16_PRODUCTS=emulated"
                                                    : "this CPU has neither AVX-512 BF16 nor AMX";
}

bool emulateBf16Product(const torch::Tensor& a, const torch::Tensor& b) {
    const auto floatOrBf16 = [](const torch::Tensor& t) {
        return t.device().is_cpu() &&
               (t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kBFloat16);
    };
    return t_fastKernels && floatOrBf16(a) && floatOrBf16(b) && at::autocast::is_cpu_enabled() &&
           at::autocast::get_autocast_cpu_dtype() == at::kBFloat16 && emulatingBf16Products();
}

torch::Tensor bf16Rounded(const torch::Tensor& t) {
    static const bool kAvx2 = kernels::cpuHasAvx2Fma();
    if (kAvx2 && t_fastKernels && t.device().is_cpu() && t.scalar_type() == torch::kFloat) {
        return Bf16Round::apply(t);
    }
    return t.to(torch::kBFloat16).to(torch::kFloat);
}

bool fastKernelsEnabled() {
    return t_fastKernels;
}

void setFastKernels(bool enabled) {
    t_fastKernels = enabled;
}

const SharedBf16Weights* sharedBf16Weights() {
    return t_sharedBf16Weights;
}

void setSharedBf16Weights(const SharedBf16Weights* weights) {
    t_sharedBf16Weights = weights;
}

void onEachThread(int64_t count, const std::function<void(int64_t)>& work) {
    if (count <= 1 || at::in_parallel_region()) {
        for (int64_t i = 0; i < count; ++i) {
            work(i);
        }
        return;
    }
    const at::ThreadLocalState caller;
    const bool fast = fastKernelsEnabled();
    const SharedBf16Weights* const shared = sharedBf16Weights();
    at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
        at::ThreadLocalStateGuard guard(caller);
        FastKernelsScope kernels(fast);
        ScopedSetting<const SharedBf16Weights*, sharedBf16Weights, setSharedBf16Weights> weights(
            shared);
        for (int64_t i = begin; i < end; ++i) {
            work(i);
        }
    });
}

torch::Tensor geluTanh(const torch::Tensor& x) {
    static const bool kAvx2 = kernels::cpuHasAvx2Fma();
    const bool supported =
        t_fastKernels && kAvx2 && x.device().is_cpu() &&
        (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kBFloat16);
    return supported ? GeluTanh::apply(x) : torch::gelu(x, "tanh");
}

namespace {

bool cpuFloat(const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat;
}

// Whether the LayerNorm kernels take x with this weight and bias: fast kernels on, an AVX2 CPU,
// fp32 CPU tensors, a 1-D weight of x's last size and a bias of its size or none.
bool layerNormKernelsTake(const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias) {
    static const bool kAvx2 = kernels::cpuHasAvx2Fma();
    return t_fastKernels && kAvx2 && cpuFloat(x) && cpuFloat(weight) && weight.dim() == 1 &&
           x.dim() >= 1 && x.size(-1) == weight.size(0) &&
           (!bias.defined() ||
            (cpuFloat(bias) && bias.dim() == 1 && bias.size(0) == weight.size(0)));
}

}  // namespace

torch::Tensor layerNorm(const torch::Tensor& x, const torch::Tensor& weight,
                        const torch::Tensor& bias, double eps) {
    const bool fused = layerNormKernelsTake(x, weight, bias);
    // an empty tensor for no bias: a custom function's inputs must be defined
    const auto b = bias.defined() ? bias : torch::empty({0});
    if (fused && !at::autocast::is_cpu_enabled()) {
        return LayerNormRows<float>::apply(x, weight, b, eps);
    }
    if (fused && at::autocast::get_autocast_cpu_dtype() == at::kBFloat16) {
        return LayerNormRows<uint16_t>::apply(x, weight, b, eps);
    }
    return torch::layer_norm(x, {weight.size(0)}, weight, bias, eps);
}

torch::Tensor residualAdd(const torch::Tensor& x, const torch::Tensor& branch) {
    static const bool kAvx2 = kernels::cpuHasAvx2Fma();
    const bool fused = t_fastKernels && kAvx2 && x.device().is_cpu() && branch.device().is_cpu() &&
                       x.scalar_type() == torch::kFloat &&
                       branch.scalar_type() == torch::kBFloat16 && x.sizes() == branch.sizes();
    return fused ? ResidualAddBf16::apply(x, branch) : x + branch;
}

std::pair<torch::Tensor, torch::Tensor> residualAddLayerNorm(const torch::Tensor& x,
                                                             const torch::Tensor& branch,
                                                             const torch::Tensor& weight,
                                                             const torch::Tensor& bias,
                                                             double eps) {
    const bool fused = layerNormKernelsTake(x, weight, bias) && at::autocast::is_cpu_enabled() &&
                       at::autocast::get_autocast_cpu_dtype() == at::kBFloat16 &&
                       branch.device().is_cpu() && branch.scalar_type() == torch::kBFloat16 &&
                       x.sizes() == branch.sizes();
    if (!fused) {
        auto sum = residualAdd(x, branch);
        auto normed = layerNorm(sum, weight, bias, eps);
        return {std::move(sum), std::move(normed)};
    }
    const auto b = bias.defined() ? bias : torch::empty({0});
    auto outputs = ResidualAddLayerNormBf16::apply(x, branch, weight, b, eps);
    return {std::move(outputs[0]), std::move(outputs[1])};
}

torch::Tensor batchedMatmul(const torch::Tensor& a, const torch::Tensor& b, bool transposeB) {
    const bool fp32 = t_fastKernels && a.device().is_cpu() && a.scalar_type() == torch::kFloat &&
                      b.scalar_type() == torch::kFloat && !at::autocast::is_cpu_enabled();
    if (!fp32) {
        if (emulateBf16Product(a, b)) {
            return BatchedMatmul::apply(bf16Rounded(a), bf16Rounded(b), transposeB)
                .to(torch::kBFloat16);
        }
        return torch::matmul(a, transposeB ? b.transpose(-2, -1) : b);
    }
    return BatchedMatmul::apply(a, b, transposeB);
}

}  // namespace nope
