// AdamW (decoupled weight decay, PyTorch's update rule) with the global-norm gradient clip folded
// in: one fused pass over each parameter instead of LibTorch's dozen tensor operations, so the
// optimizer stays a small part of a training step. Weight decay is set per parameter.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

namespace nope {

struct OptimizerParam {
    std::string name;     // state-dict name, also the key of its state in checkpoints
    torch::Tensor param;  // fp32, requires grad
    bool decay = false;   // apply weight decay
};

class AdamW {
public:
    AdamW(std::vector<OptimizerParam> params, double beta1, double beta2, double weightDecay,
          double eps = 1e-8);

    // Clips the gradients' global L2 norm to maxNorm (0: no clip), then updates every parameter
    // that has a gradient and clears the gradients. Returns the norm before clipping; when it is
    // not finite nothing is updated.
    double step(double lr, double maxNorm);
    void zeroGrad();

    int64_t stepCount() const { return m_step; }
    const std::vector<torch::Tensor>& firstMoments() const { return m_exp_avg; }
    const std::vector<OptimizerParam>& params() const { return m_params; }

    // State for checkpoints: the step count and the first and second moments by name.
    void save(torch::serialize::OutputArchive& archive) const;
    void load(torch::serialize::InputArchive& archive);  // throws std::runtime_error

private:
    std::vector<OptimizerParam> m_params;
    std::vector<torch::Tensor> m_exp_avg;
    std::vector<torch::Tensor> m_exp_avg_sq;
    double m_beta1, m_beta2, m_weightDecay, m_eps;
    int64_t m_step = 0;
};

// The global L2 norm of the gradients (undefined gradients count as zero).
double gradientNorm(const std::vector<OptimizerParam>& params);

}  // namespace nope
