// The tool's training step against the authors' own, step by step: tests/data/authors_step.pt
// holds a small NoPE GPT's initial weights and 20 batches of the authors' objective as this test
// draws them (`next`: each row an example cut in its answer, left-padded, the padding masked), and
// what tools/authors_step/authors_step.py computed from them with the authors' training step in
// PyTorch fp32 (their forward with logits at the last position, AdamW with their parameter groups,
// their warm-up and cosine schedule, gradient clipping at 1.0): each step's learning rate, loss
// and gradient norm, and the final weights. The trainer, given the same config, must draw the
// same batches and end at the same weights, in one piece and in micro-batches.
//
// To write the fixture again (after a change to the batches or the initial weights):
//   tools/authors_step/run.sh   (builds this test, exports the input, runs PyTorch)
// With NOPESCOPE_AUTHORS_STEP_INPUT=FILE this test writes the input there instead of checking.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/model_config.h"
#include "run/torch_pickle.h"
#include "tasks/vocab.h"
#include "training/batches.h"
#include "training/lr_schedule.h"
#include "training/trainer.h"
#include "util/files.h"
#include "util/rng.h"
#include "util/runtime.h"

namespace nope {
namespace {

namespace fs = std::filesystem;

const fs::path kFixture = fs::path(NOPESCOPE_TEST_DATA) / "authors_step.pt";
constexpr int kSteps = 20;

ModelConfig authorsModel() {
    ModelConfig m = test::smallModelConfig(2, 2, 32, 64);
    m.dropout = 0.0;  // the comparison is of the step; dropout draws differ between the two
    m.bias = false;
    return m;
}

TrainConfig authorsTrain(int microBatches) {
    TrainConfig t;
    t.objective = Objective::Next;
    t.precision = Precision::Fp32;
    t.batchSize = 16;
    t.microBatches = microBatches;
    t.steps = kSteps;
    t.learningRate = 3e-3;  // large enough that 20 steps move every weight
    t.warmupSteps = 4;
    t.decaySteps = kSteps;
    t.minLrRatio = 0.1;
    t.weightDecay = 0.1;
    t.beta1 = 0.9;
    t.beta2 = 0.99;
    t.gradClip = 1.0;
    t.threads = 1;
    t.seed = 4242;
    t.data = {2000, 200, 7};
    return t;
}

// The batches the trainer draws: a BatchSource seeded as the trainer seeds its own.
std::vector<Batch> trainerBatches(const Trainer& trainer) {
    const TrainConfig& t = trainer.trainConfig();
    BatchSource source(trainer.task(), trainer.data().train, t.objective, t.windowLength,
                       deriveSeed(t.seed, 1), Curriculum{t.curriculumSteps, t.batchSize});
    std::vector<Batch> batches;
    for (int i = 0; i < kSteps; ++i) {
        batches.push_back(source.next(t.batchSize, i));
    }
    return batches;
}

// The one target of each row: the token at the last position.
torch::Tensor lastTargets(const Batch& b) {
    return b.targets.select(1, b.targets.size(1) - 1).contiguous();
}

void writeInput(const fs::path& path) {
    Trainer trainer(TaskKind::Reversal, authorsModel(), authorsTrain(1));
    const ModelConfig& m = trainer.modelConfig();
    const TrainConfig& t = trainer.trainConfig();
    c10::Dict<std::string, at::Tensor> input;
    auto integer = [&](const char* key, int64_t v) { input.insert(key, torch::tensor(v)); };
    auto real = [&](const char* key, double v) {
        input.insert(key, torch::tensor(v, torch::kDouble));
    };
    integer("n_layer", m.nLayer);
    integer("n_head", m.nHead);
    integer("n_embd", m.nEmbd);
    integer("vocab_size", m.vocabSize);
    integer("block_size", m.blockSize);
    integer("steps", kSteps);
    integer("warmup_iters", t.warmupSteps);
    integer("lr_decay_iters", t.decaySteps);
    integer("pad_token", vocab::encode(' '));
    real("learning_rate", t.learningRate);
    real("min_lr", t.learningRate * t.minLrRatio);
    real("weight_decay", t.weightDecay);
    real("beta1", t.beta1);
    real("beta2", t.beta2);
    real("grad_clip", t.gradClip);
    for (const auto& item : trainer.model().named_parameters()) {
        input.insert("weights." + item.key(), item.value().detach().clone());
    }
    input.insert("weights.lm_head.weight",
                 trainer.model().transformer->wte->weight.detach().clone());
    const std::vector<Batch> batches = trainerBatches(trainer);
    for (int i = 0; i < kSteps; ++i) {
        const std::string key = "batch." + std::to_string(i) + ".";
        input.insert(key + "inputs", batches[i].inputs);
        input.insert(key + "padding", batches[i].padding);
        input.insert(key + "target", lastTargets(batches[i]));
    }
    const std::vector<char> bytes = torch::pickle_save(c10::IValue(input));
    writeFileAtomic(path, std::string_view(bytes.data(), bytes.size()));
}

struct Fixture {
    PickledFile file;
    const torch::Tensor& at(const std::string& key) const {
        const PickleValue* v = file.root->find(key);
        if (!v || v->kind != PickleValue::Kind::Tensor) {
            throw std::runtime_error(kFixture.string() + ": no tensor '" + key + "'");
        }
        return v->tensor;
    }
};

class AuthorsStep : public ::testing::Test {
protected:
    void SetUp() override {
        if (const char* out = std::getenv("NOPESCOPE_AUTHORS_STEP_INPUT"); out && *out) {
            writeInput(out);
            GTEST_SKIP() << "wrote the input for tools/authors_step/authors_step.py to " << out;
        }
        m_before = at::get_num_threads();
    }
    void TearDown() override {
        if (m_before > 0) {
            applyThreadCount(m_before);
        }
    }
    int m_before = 0;
};

// The fixture's input is what this test draws: the same initial weights and batches (when not,
// the batches or the initialization changed and the fixture must be written again).
TEST_F(AuthorsStep, TheFixtureHoldsTheTrainersWeightsAndBatches) {
    const Fixture f{readPickledFile(kFixture)};
    Trainer trainer(TaskKind::Reversal, authorsModel(), authorsTrain(1));
    for (const auto& item : trainer.model().named_parameters()) {
        EXPECT_TRUE(torch::equal(item.value(), f.at("weights." + item.key())))
            << item.key() << ": the initial weights differ from the fixture's; run "
            << "tools/authors_step/run.sh to write it again";
    }
    const std::vector<Batch> batches = trainerBatches(trainer);
    for (int i = 0; i < kSteps; ++i) {
        const std::string key = "batch." + std::to_string(i) + ".";
        ASSERT_TRUE(torch::equal(batches[i].inputs, f.at(key + "inputs")) &&
                    torch::equal(batches[i].padding, f.at(key + "padding")) &&
                    torch::equal(lastTargets(batches[i]), f.at(key + "target")))
            << "batch " << i << " differs from the fixture's; run tools/authors_step/run.sh";
    }
    // what the batches are: left padding of spaces, rows cut at different points
    const auto& padding = f.at("batch.0.padding");
    EXPECT_GT(padding.sum().item<int64_t>(), 0);
    EXPECT_FALSE(padding.select(1, padding.size(1) - 1).any().item<bool>());
}

// 20 steps of the trainer against PyTorch's 20 steps of the authors' code.
TEST_F(AuthorsStep, TwentyStepsFollowTheAuthorsStep) {
    const Fixture f{readPickledFile(kFixture)};
    const auto pythonLr = f.at("python.lr");
    const auto pythonLoss = f.at("python.loss");
    const auto pythonNorm = f.at("python.grad_norm");
    for (const int microBatches : {1, 3}) {
        Trainer trainer(TaskKind::Reversal, authorsModel(), authorsTrain(microBatches));
        ASSERT_EQ(trainer.microBatches(), microBatches);
        applyThreadCount(1);
        double worstLoss = 0.0;
        for (int i = 0; i < kSteps; ++i) {
            EXPECT_NEAR(learningRateAt(i, trainer.trainConfig()), pythonLr[i].item<double>(), 1e-12)
                << "step " << i;
            const StepGradients step = trainer.gradients(i);
            const double norm = [&] {
                double sum = 0.0;
                for (const auto& [name, g] : step.gradients) {
                    sum += g.square().sum().item<double>();
                }
                return std::sqrt(sum);
            }();
            // fp32 sums in another order: a few units in the 6th digit
            EXPECT_NEAR(step.loss, pythonLoss[i].item<double>(),
                        2e-5 * pythonLoss[i].item<double>())
                << "step " << i << ", " << microBatches << " micro-batch(es)";
            EXPECT_NEAR(norm, pythonNorm[i].item<double>(), 1e-4 * pythonNorm[i].item<double>())
                << "step " << i << ", " << microBatches << " micro-batch(es)";
            worstLoss = std::max(worstLoss, std::abs(step.loss - pythonLoss[i].item<double>()));
            const double loss = trainer.stepOnce();
            EXPECT_NEAR(loss, step.loss, 1e-6 * step.loss) << "step " << i;
        }
        EXPECT_LT(pythonLoss[kSteps - 1].item<double>(), 0.8 * pythonLoss[0].item<double>())
            << "the 20 steps should learn something for the comparison to mean anything";
        double worstWeights = 0.0;
        // The final weights: each tensor's distance from PyTorch's, against how far the 20 steps
        // moved it (Adam's steps are about the learning rate whatever the gradient's size, so
        // rounding differences in a near-zero gradient move a weight by up to a step).
        for (const auto& item : trainer.model().named_parameters()) {
            const auto& expected = f.at("final." + item.key());
            const auto& initial = f.at("weights." + item.key());
            const double moved = (expected - initial).norm().item<double>();
            const double off = (item.value() - expected).norm().item<double>();
            EXPECT_GT(moved, 0.0) << item.key();
            worstWeights = std::max(worstWeights, off / moved);
            EXPECT_LE(off, 1e-4 * moved)
                << item.key() << ": " << off << " from PyTorch's, which moved " << moved << "; "
                << microBatches << " micro-batch(es)";
        }
        std::printf(
            "%d micro-batch(es): worst loss difference %.3g over %d steps; final weights "
            "at most %.3g of their movement from PyTorch's\n",
            microBatches, worstLoss, kSteps, worstWeights);
    }
}

}  // namespace
}  // namespace nope
