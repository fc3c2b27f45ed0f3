#include "model/linear.h"

#include "model/fast_ops.h"
#include "util/profile_scope.h"

#include <ATen/autocast_mode.h>

#include <utility>

namespace nope {

namespace {

// y = x W^T for 2-D x (M x K) and W (N x K), with the gradients of both.
struct DnnlLinear : torch::autograd::Function<DnnlLinear> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& w) {
        NOPE_PROFILE_SCOPE("nope::linear");
        const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
        auto y = torch::empty({M, N}, x.options());
        sgemm('N', 'T', M, N, K, x.data_ptr<float>(), K, w.data_ptr<float>(), K,
              y.data_ptr<float>());
        ctx->save_for_backward({x, w});
        return y;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::linear_backward");
        const auto saved = ctx->get_saved_variables();
        const auto& x = saved[0];
        const auto& w = saved[1];
        const auto dy = grads[0].contiguous();  // (M, N)
        const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
        torch::Tensor dx, dw;
        if (ctx->needs_input_grad(0)) {
            dx = torch::empty({M, K}, x.options());  // dy W
            sgemm('N', 'N', M, K, N, dy.data_ptr<float>(), N, w.data_ptr<float>(), K,
                  dx.data_ptr<float>());
        }
        if (ctx->needs_input_grad(1)) {
            dw = torch::empty({N, K}, w.options());  // dy^T x
            weightGradient(M, N, K, dy.data_ptr<float>(), x.data_ptr<float>(),
                           dw.data_ptr<float>());
        }
        return {dx, dw};
    }
};

// autocast's cast of a weight, with its bf16 copy made beforehand: forward the copy, backward the
// gradient widened to fp32, as the backward of autocast's cast (a `to`) gives it.
struct SharedCast : torch::autograd::Function<SharedCast> {
    static torch::Tensor forward(torch::autograd::AutogradContext*, const torch::Tensor&,
                                 const torch::Tensor& copy) {
        return copy;
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::tensor_list grads) {
        return {grads[0].to(torch::kFloat), torch::Tensor()};
    }
};

bool useDnnl(const torch::Tensor& x, const torch::Tensor& w) {
    return fastKernelsEnabled() && x.device().is_cpu() && x.scalar_type() == torch::kFloat &&
           w.scalar_type() == torch::kFloat && x.dim() >= 2 && !at::autocast::is_cpu_enabled();
}

}  // namespace

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias) {
    auto shape = x.sizes().vec();
    const int64_t K = shape.back();
    shape.back() = weight.size(0);
    if (x.dim() >= 2 && emulateBf16Product(x, weight)) {
        // autocast's bf16 linear on a CPU without bf16 instructions: the rounded operands through
        // the fp32 kernel, bias added in fp32, one rounding of the sum (model/fast_ops.h)
        auto y = DnnlLinear::apply(bf16Rounded(x).reshape({-1, K}).contiguous(),
                                   bf16Rounded(weight).contiguous());
        if (bias.defined()) {
            y = y + bf16Rounded(bias);
        }
        return y.to(torch::kBFloat16).view(shape);
    }
    if (!useDnnl(x, weight)) {
        const SharedBf16Weights* shared = sharedBf16Weights();
        const torch::Tensor* copy = shared != nullptr && fastKernelsEnabled() &&
                                            at::autocast::is_cpu_enabled() &&
                                            at::autocast::get_autocast_cpu_dtype() == at::kBFloat16
                                        ? shared->copyOf(weight)
                                        : nullptr;
        if (copy != nullptr) {
            return torch::linear(x, SharedCast::apply(weight, *copy), bias);
        }
        return torch::linear(x, weight, bias);
    }
    auto y = DnnlLinear::apply(x.reshape({-1, K}).contiguous(), weight.contiguous()).view(shape);
    return bias.defined() ? y + bias : y;
}

SharedBf16Weights::SharedBf16Weights(const std::vector<torch::Tensor>& params, int64_t threads)
    : m_previous(sharedBf16Weights()) {
    std::vector<std::pair<torch::Tensor, torch::Tensor>> casts;  // (weight flat, copy flat)
    for (const auto& p : params) {
        if (p.defined() && p.dim() == 2 && p.device().is_cpu() &&
            p.scalar_type() == torch::kFloat && p.is_contiguous()) {
            auto copy = torch::empty(p.sizes(), p.options().dtype(torch::kBFloat16));
            casts.emplace_back(p.detach().view(-1), copy.view(-1));
            m_copies.emplace(p.unsafeGetTensorImpl(), std::move(copy));
        }
    }
    // each thread casts its slice of every weight
    onEachThread(threads, [&](int64_t t) {
        torch::NoGradGuard noGrad;
        for (auto& [from, to] : casts) {
            const int64_t n = from.numel(), begin = n * t / threads, end = n * (t + 1) / threads;
            to.narrow(0, begin, end - begin).copy_(from.narrow(0, begin, end - begin));
        }
    });
    setSharedBf16Weights(this);
}

SharedBf16Weights::~SharedBf16Weights() {
    setSharedBf16Weights(m_previous);
}

const torch::Tensor* SharedBf16Weights::copyOf(const torch::Tensor& weight) const {
    const auto found = m_copies.find(weight.unsafeGetTensorImpl());
    return found == m_copies.end() ? nullptr : &found->second;
}

LinearImpl::LinearImpl(int64_t inFeatures, int64_t outFeatures, bool withBias) {
    weight = register_parameter("weight", torch::empty({outFeatures, inFeatures}));
    if (withBias) {
        bias = register_parameter("bias", torch::zeros({outFeatures}));
    }
}

}  // namespace nope
