#include "training/adamw.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <stdexcept>

#include "util/profile_scope.h"

namespace nope {

namespace {

struct UpdateCoefficients {
    float gradScale;   // clip factor
    float decayScale;  // 1 - lr * wd
    float beta1, beta2;
    float stepSize;        // lr / (1 - beta1^t)
    float rootCorrection;  // 1 / sqrt(1 - beta2^t)
    float eps;
};

void fusedUpdate(float* p, const float* g, float* m, float* v, int64_t n,
                 const UpdateCoefficients& c) {
    at::parallel_for(0, n, 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const float grad = g[i] * c.gradScale;
            const float mi = c.beta1 * m[i] + (1.0f - c.beta1) * grad;
            const float vi = c.beta2 * v[i] + (1.0f - c.beta2) * grad * grad;
            m[i] = mi;
            v[i] = vi;
            const float denom = std::sqrt(vi) * c.rootCorrection + c.eps;
            p[i] = p[i] * c.decayScale - c.stepSize * mi / denom;
        }
    });
}

}  // namespace

double gradientNorm(const std::vector<OptimizerParam>& params) {
    double sumSquares = 0.0;
    for (const auto& p : params) {
        const auto& g = p.param.grad();
        if (g.defined()) {
            const double norm = g.norm(2).item<double>();
            sumSquares += norm * norm;
        }
    }
    return std::sqrt(sumSquares);
}

AdamW::AdamW(std::vector<OptimizerParam> params, double beta1, double beta2, double weightDecay,
             double eps)
    : m_params(std::move(params)),
      m_beta1(beta1),
      m_beta2(beta2),
      m_weightDecay(weightDecay),
      m_eps(eps) {
    for (const auto& p : m_params) {
        m_exp_avg.push_back(torch::zeros_like(p.param, torch::MemoryFormat::Contiguous));
        m_exp_avg_sq.push_back(torch::zeros_like(p.param, torch::MemoryFormat::Contiguous));
    }
}

void AdamW::zeroGrad() {
    for (auto& p : m_params) {
        p.param.mutable_grad() = torch::Tensor();
    }
}

double AdamW::step(double lr, double maxNorm) {
    NOPE_PROFILE_SCOPE("nope::adamw");
    torch::NoGradGuard noGrad;
    const double norm = gradientNorm(m_params);
    if (!std::isfinite(norm)) {
        zeroGrad();
        return norm;
    }
    const double gradScale = maxNorm > 0.0 ? std::min(1.0, maxNorm / (norm + 1e-6)) : 1.0;
    ++m_step;
    const double correction1 = 1.0 - std::pow(m_beta1, double(m_step));
    const double correction2 = 1.0 - std::pow(m_beta2, double(m_step));
    for (size_t i = 0; i < m_params.size(); ++i) {
        auto& param = m_params[i].param;
        const auto& grad = param.grad();
        if (!grad.defined()) {
            continue;
        }
        const double wd = m_params[i].decay ? m_weightDecay : 0.0;
        UpdateCoefficients c{static_cast<float>(gradScale),
                             static_cast<float>(1.0 - lr * wd),
                             static_cast<float>(m_beta1),
                             static_cast<float>(m_beta2),
                             static_cast<float>(lr / correction1),
                             static_cast<float>(1.0 / std::sqrt(correction2)),
                             static_cast<float>(m_eps)};
        if (param.device().is_cpu() && param.is_contiguous() &&
            param.scalar_type() == torch::kFloat) {
            const auto g = grad.to(torch::kFloat).contiguous();
            fusedUpdate(param.data_ptr<float>(), g.data_ptr<float>(),
                        m_exp_avg[i].data_ptr<float>(), m_exp_avg_sq[i].data_ptr<float>(),
                        param.numel(), c);
        } else {  // other devices: the same rule with tensor operations
            const auto g = grad * gradScale;
            param.mul_(1.0 - lr * wd);
            m_exp_avg[i].mul_(m_beta1).add_(g, 1.0 - m_beta1);
            m_exp_avg_sq[i].mul_(m_beta2).addcmul_(g, g, 1.0 - m_beta2);
            const auto denom = (m_exp_avg_sq[i].sqrt() / std::sqrt(correction2)).add_(m_eps);
            param.addcdiv_(m_exp_avg[i], denom, -lr / correction1);
        }
    }
    zeroGrad();
    return norm;
}

void AdamW::save(torch::serialize::OutputArchive& archive) const {
    archive.write("optimizer.step", torch::tensor(m_step));
    for (size_t i = 0; i < m_params.size(); ++i) {
        archive.write("optimizer.exp_avg." + m_params[i].name, m_exp_avg[i]);
        archive.write("optimizer.exp_avg_sq." + m_params[i].name, m_exp_avg_sq[i]);
    }
}

void AdamW::load(torch::serialize::InputArchive& archive) {
    torch::Tensor step;
    archive.read("optimizer.step", step);
    for (size_t i = 0; i < m_params.size(); ++i) {
        torch::Tensor m, v;
        archive.read("optimizer.exp_avg." + m_params[i].name, m);
        archive.read("optimizer.exp_avg_sq." + m_params[i].name, v);
        if (!m.sizes().equals(m_exp_avg[i].sizes()) || !v.sizes().equals(m_exp_avg_sq[i].sizes())) {
            throw std::runtime_error("optimizer state of " + m_params[i].name +
                                     " has the wrong shape");
        }
        m_exp_avg[i].copy_(m);
        m_exp_avg_sq[i].copy_(v);
    }
    m_step = step.item<int64_t>();
}

}  // namespace nope
