// The best evaluation of a run so far and a copy of the weights it was made with: higher test
// accuracy wins and a lower test loss breaks ties. Used on the training thread only.
#pragma once

#include <torch/torch.h>

#include <limits>
#include <vector>

#include "model/gpt.h"

namespace nope {

class BestWeights {
public:
    struct Record {
        double accuracy = -1.0;
        double loss = std::numeric_limits<double>::infinity();  // breaks accuracy ties
        int step = -1;
    };

    // An evaluation of `model` at `step`: when it beats the record it becomes the record and the
    // weights are copied. Returns whether it did. A non-finite loss counts as infinite.
    bool offer(double accuracy, double testLoss, int step, const GptImpl& model);
    const Record& record() const { return m_record; }
    void setRecord(const Record& record) { m_record = record; }  // a resumed run's

    // Whether weights are kept (a record without weights is a resumed run before loadFrom()).
    bool hasWeights() const { return !m_weights.empty(); }
    // Keeps copies of `model`'s weights (a resumed run's best.pt), on `device`.
    void loadFrom(const GptImpl& model, const torch::Device& device);
    // Writes the kept weights into `model` (same config); nothing when none are kept.
    void copyInto(GptImpl& model) const;

    // Runs `work` with the kept weights in `model` and puts the current ones back after, also
    // when `work` throws. Without kept weights it runs on the current ones.
    template <typename Work>
    auto withBestIn(GptImpl& model, Work work) -> decltype(work()) {
        if (!hasWeights()) {
            return work();
        }
        const std::vector<torch::Tensor> current = copyOf(model);
        copyInto(model);
        struct Restore {
            GptImpl& model;
            const std::vector<torch::Tensor>& weights;
            ~Restore() { write(model, weights); }
        } restore{model, current};
        return work();
    }

private:
    static std::vector<torch::Tensor> copyOf(const GptImpl& model);
    static void write(GptImpl& model, const std::vector<torch::Tensor>& weights);

    std::vector<torch::Tensor> m_weights;
    Record m_record;
};

}  // namespace nope
