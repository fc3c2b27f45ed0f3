// The trainer and its parts: schedule, optimizer, batches, checkpoints, determinism, control.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <thread>

#include "analysis/analyzer.h"
#include "model/fast_ops.h"
#include "model/init.h"
#include "tasks/batch.h"
#include "tasks/task.h"
#include "tasks/vocab.h"
#include "training/run_recorder.h"
#include "training/trainer.h"
#include "util/stopwatch.h"

namespace nope {
namespace {

namespace fs = std::filesystem;

// A model and run small enough for a few seconds on two cores.
ModelConfig tinyModel() {
    ModelConfig m;
    m.nLayer = 2;
    m.nHead = 2;
    m.nEmbd = 32;
    m.blockSize = 64;
    m.dropout = 0.1;
    return m;
}

TrainConfig tinyTrain(Objective objective = Objective::Answer) {
    TrainConfig t;
    t.objective = objective;
    t.batchSize = 16;
    t.windowLength = 48;
    t.steps = 20;
    t.learningRate = 1e-3;
    t.warmupSteps = 2;
    t.decaySteps = 20;
    t.evalEvery = 10;
    t.evalSamples = 40;
    t.snapshotEvery = 10;
    t.analysisSamples = 8;
    t.keepPrompts = 2;
    t.threads = 1;
    t.data = {300, 200, 5};
    return t;
}

fs::path tempPath(const std::string& name) {
    return fs::temp_directory_path() /
           ("nopescope-training-" + std::to_string(::getpid()) + "-" + name);
}

TEST(Optimizer, WeightDecayOnlyOnLinearWeights) {
    ModelConfig m = tinyModel();
    m.bias = true;
    m.positional = PositionalEncoding::Learned;
    const Gpt model(m);
    std::vector<std::string> decayed;
    for (const auto& item : model->named_parameters()) {
        if (decaysWeight(item.key())) {
            decayed.push_back(item.key());
        }
    }
    EXPECT_EQ(decayed.size(), 2u * 4u);  // c_attn, attn.c_proj, c_fc, mlp.c_proj per block
    for (const auto& name : decayed) {
        EXPECT_EQ(name.substr(name.size() - 7), ".weight") << name;
    }
    for (const char* name : {"transformer.wte.weight", "transformer.wpe.weight",
                             "transformer.h.0.ln_1.weight", "transformer.ln_f.weight",
                             "transformer.h.0.attn.c_attn.bias", "transformer.h.1.mlp.c_fc.bias"}) {
        EXPECT_FALSE(decaysWeight(name)) << name;
    }
}

TEST(Optimizer, MatchesLibTorchAdamW) {
    torch::manual_seed(3);
    const auto a0 = torch::randn({5, 7}), b0 = torch::randn({7});
    auto a = a0.clone().requires_grad_(), b = b0.clone().requires_grad_();
    auto ra = a0.clone().requires_grad_(), rb = b0.clone().requires_grad_();
    AdamW ours({{"a", a, true}, {"b", b, false}}, 0.9, 0.99, 0.1);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<torch::Tensor>{ra},
                        std::make_unique<torch::optim::AdamWOptions>(
                            torch::optim::AdamWOptions(0.01).betas({0.9, 0.99}).weight_decay(0.1)));
    groups.emplace_back(std::vector<torch::Tensor>{rb},
                        std::make_unique<torch::optim::AdamWOptions>(
                            torch::optim::AdamWOptions(0.01).betas({0.9, 0.99}).weight_decay(0.0)));
    torch::optim::AdamW reference(std::move(groups));
    for (int step = 0; step < 6; ++step) {
        const auto x = torch::randn({3, 5});
        ((x.matmul(a) + b).pow(2).sum()).backward();
        ((x.matmul(ra) + rb).pow(2).sum()).backward();
        ours.step(0.01, /*maxNorm=*/0.0);
        reference.step();
        reference.zero_grad();
    }
    EXPECT_TRUE(torch::allclose(a, ra, 1e-5, 1e-6));
    EXPECT_TRUE(torch::allclose(b, rb, 1e-5, 1e-6));
    EXPECT_EQ(ours.stepCount(), 6);
}

TEST(Optimizer, ClipsTheGlobalGradientNorm) {
    auto a = torch::zeros({2}, torch::requires_grad());
    auto b = torch::zeros({1}, torch::requires_grad());
    a.mutable_grad() = torch::tensor({3.0f, 0.0f});
    b.mutable_grad() = torch::tensor({4.0f});  // global norm 5
    AdamW optimizer({{"a", a, false}, {"b", b, false}}, 0.9, 0.99, 0.0);
    const double norm = optimizer.step(0.1, /*maxNorm=*/1.0);
    EXPECT_NEAR(norm, 5.0, 1e-6);
    // the first moment holds (1 - beta1) times the clipped gradient g / 5
    EXPECT_NEAR(optimizer.firstMoments()[0][0].item<float>(), 0.1f * 3.0f / 5.0f, 1e-6);
    EXPECT_NEAR(optimizer.firstMoments()[1][0].item<float>(), 0.1f * 4.0f / 5.0f, 1e-6);
    EXPECT_FALSE(a.grad().defined());  // cleared

    a.mutable_grad() = torch::tensor({0.3f, 0.0f});  // under the limit: unchanged
    b.mutable_grad() = torch::tensor({0.4f});
    EXPECT_NEAR(optimizer.step(0.1, 1.0), 0.5, 1e-6);
    EXPECT_NEAR(optimizer.firstMoments()[0][0].item<float>(), 0.9f * 0.06f + 0.1f * 0.3f, 1e-6);
}

TEST(Optimizer, NonFiniteGradientsUpdateNothing) {
    auto a = torch::ones({2}, torch::requires_grad());
    a.mutable_grad() = torch::tensor({NAN, 1.0f});
    AdamW optimizer({{"a", a, true}}, 0.9, 0.99, 0.1);
    EXPECT_TRUE(std::isnan(optimizer.step(0.1, 1.0)));
    EXPECT_TRUE(torch::equal(a, torch::ones({2})));
}

TEST(Batches, LmWindowsAreShiftedByOne) {
    const TaskData data = makeTaskData(TaskKind::Reversal, DataConfig{50, 10, 1});
    BatchSource source(TaskKind::Reversal, data.train, Objective::Lm, 40, 9);
    const Batch batch = source.next(4);
    ASSERT_EQ(batch.inputs.sizes(), torch::IntArrayRef({4, 40}));
    using torch::indexing::Slice;
    EXPECT_TRUE(torch::equal(batch.inputs.index({Slice(), Slice(1)}),
                             batch.targets.index({Slice(), Slice(0, 39)})));
}

TEST(Batches, AnswerTargetsCoverOnlyTheAnswer) {
    const TaskData data = makeTaskData(TaskKind::Ordering, DataConfig{50, 10, 1});
    BatchSource source(TaskKind::Ordering, data.train, Objective::Answer, 40, 9);
    const std::vector<Example> examples = {data.train[0], data.train[1]};
    const Batch batch = source.answerBatch(examples);
    const int P = longestPrompt(TaskKind::Ordering);
    for (size_t b = 0; b < examples.size(); ++b) {
        std::string prompt, targets;
        for (int64_t t = 0; t < batch.inputs.size(1); ++t) {
            const int64_t y = batch.targets[b][t].item<int64_t>();
            if (t < P) {
                prompt += vocab::decode(batch.inputs[b][t].item<int64_t>());
            }
            if (y != kIgnoreIndex) {
                targets += vocab::decode(y);
            }
        }
        EXPECT_EQ(prompt, leftPad(examples[b].prompt, P));  // where decoding puts it
        EXPECT_EQ(targets, examples[b].answer + "\n");      // the answer and its terminator
    }
}

TEST(Batches, MaskedObjectiveMarksTheLeftPadding) {
    const TaskData data = makeTaskData(TaskKind::Addition, DataConfig{200, 10, 1});
    BatchSource masked(TaskKind::Addition, data.train, Objective::Masked, 40, 9);
    BatchSource answer(TaskKind::Addition, data.train, Objective::Answer, 40, 9);
    const std::vector<Example> examples = {data.train[0], data.train[1], data.train[2]};
    const Batch a = answer.answerBatch(examples);
    const Batch m = masked.answerBatch(examples);
    EXPECT_FALSE(a.padding.defined());
    ASSERT_TRUE(m.padding.defined());
    EXPECT_TRUE(torch::equal(a.inputs, m.inputs));  // the same sequences and targets
    EXPECT_TRUE(torch::equal(a.targets, m.targets));
    const int P = longestPrompt(TaskKind::Addition);
    for (size_t b = 0; b < examples.size(); ++b) {
        const int64_t pad = P - static_cast<int64_t>(examples[b].prompt.size());
        EXPECT_EQ(m.padding[b].sum().item<int64_t>(), pad);
        EXPECT_TRUE(m.padding[b].slice(0, 0, pad).all().item<bool>());
    }
}

// The authors' per-example rows: an example cut at a uniform point of its answer, right-aligned
// behind space padding that is marked, the next answer token the one target, never the
// terminator.
TEST(Batches, NextCutsEachExampleInItsAnswerAndScoresTheNextToken) {
    for (TaskKind task : {TaskKind::Reversal, TaskKind::Addition}) {
        SCOPED_TRACE(taskName(task));
        const TaskData data = makeTaskData(task, DataConfig{200, 10, 1});
        std::map<std::string, std::string> answerOf;  // prompt -> answer without terminator
        size_t longestAnswer = 0;
        for (const Example& e : data.train) {
            answerOf[e.prompt] = trainedAnswer(task, e);
            longestAnswer = std::max(longestAnswer, answerOf[e.prompt].size());
        }
        BatchSource source(task, data.train, Objective::Next, 40, 9);
        std::map<size_t, int> cuts;  // answer tokens given -> rows
        for (int draw = 0; draw < 20; ++draw) {
            const Batch batch = source.next(64);
            const int64_t T = batch.inputs.size(1);
            ASSERT_TRUE(batch.padding.defined());
            EXPECT_EQ(batch.padding.select(1, 0).logical_not().any().item<bool>(), true)
                << "the longest row has no padding";
            for (int64_t b = 0; b < 64; ++b) {
                const int64_t pad = batch.padding[b].sum().item<int64_t>();
                ASSERT_TRUE(batch.padding[b].slice(0, 0, pad).all().item<bool>());  // a prefix
                std::string row;
                for (int64_t t = 0; t < T; ++t) {
                    const char c = vocab::decode(batch.inputs[b][t].item<int64_t>());
                    if (t < pad) {
                        EXPECT_EQ(c, ' ');
                    } else {
                        row += c;
                    }
                }
                // one target, at the last position
                EXPECT_EQ(targetTokens(rowsOf(batch, b, 1)), 1);
                const int64_t target = batch.targets[b][T - 1].item<int64_t>();
                const std::string prompt = row.substr(0, row.find('=') + 1);
                ASSERT_EQ(answerOf.count(prompt), 1u) << row;
                const std::string& answer = answerOf[prompt];
                const size_t given = row.size() - prompt.size();
                ASSERT_LT(given, answer.size());  // at most all but the last answer token
                EXPECT_EQ(row.substr(prompt.size()), answer.substr(0, given));
                EXPECT_EQ(vocab::decode(target), answer[given]);  // never '$' or '\n'
                ++cuts[given];
            }
        }
        // every cut point is drawn, about equally (1,280 rows)
        if (task == TaskKind::Reversal) {
            for (size_t k = 0; k < longestAnswer; ++k) {
                EXPECT_GT(cuts[k], 40) << "cut " << k;
            }
        }
        // the test loss's batch: every cut point at once, the terminator left out
        const std::vector<Example> examples = {data.train[0], data.train[1]};
        const Batch all = source.answerBatch(examples);
        ASSERT_TRUE(all.padding.defined());
        for (size_t b = 0; b < examples.size(); ++b) {
            std::string targets;
            for (int64_t t = 0; t < all.targets.size(1); ++t) {
                const int64_t y = all.targets[b][t].item<int64_t>();
                if (y != kIgnoreIndex) {
                    targets += vocab::decode(y);
                }
            }
            EXPECT_EQ(targets, trainedAnswer(task, examples[b]));
        }
    }
}

// A next model never learned the terminator: its answer is its first characters, as many as
// the expected one has; the other objectives' answers end at the terminator.
TEST(Evaluation, NextReadsAsManyCharactersAsTheAnswerHas) {
    EXPECT_EQ(answerRead(TaskKind::Reversal, Objective::Next, "4321789", "4321"), "4321");
    EXPECT_EQ(answerRead(TaskKind::Reversal, Objective::Next, "43", "4321"), "43");
    EXPECT_EQ(answerRead(TaskKind::Reversal, Objective::Answer, "4321789", "4321"), "4321789");
    EXPECT_EQ(answerRead(TaskKind::Reversal, Objective::Masked, "4321\n89", "4321"), "4321");
    EXPECT_EQ(answerRead(TaskKind::Addition, Objective::Lm, "975$12", "975"), "975");
    EXPECT_EQ(answerRead(TaskKind::Addition, Objective::Next, "975$12", "975"), "975");
}

// The test loss of next reads every cut point from one teacher-forced pass: with causal
// attention and the padding masked, the logits at an answer token are those of the row cut there.
TEST(Batches, NextTestLossIsTheLossOfEveryCut) {
    torch::manual_seed(3);
    Gpt model(tinyModel());
    initializeWeights(*model);
    model->eval();
    torch::NoGradGuard noGrad;
    const TaskKind task = TaskKind::Reversal;
    const TaskData data = makeTaskData(task, DataConfig{50, 10, 1});
    BatchSource source(task, data.train, Objective::Next, 40, 9);
    const Example& e = data.train[0];
    const Batch whole = source.answerBatch({e});
    const auto wholeLogits =
        model->forward(whole.inputs, nullptr, Head::AllPositions, nullptr, whole.padding);
    const std::string answer = trainedAnswer(task, e);
    const int P = longestPrompt(task);
    for (size_t given = 0; given < answer.size(); ++given) {
        const std::string row = std::string(3, ' ') + e.prompt + answer.substr(0, given);
        auto padding = torch::zeros({1, static_cast<int64_t>(row.size())}, torch::kBool);
        padding[0].slice(0, 0, 3).fill_(true);
        const auto cut =
            model->forward(encodeBatch({row}), nullptr, Head::AllPositions, nullptr, padding);
        const auto atCut = cut[0][static_cast<int64_t>(row.size()) - 1];
        const auto inWhole = wholeLogits[0][P - 1 + static_cast<int64_t>(given)];
        EXPECT_TRUE(torch::allclose(atCut, inWhole, 1e-4, 1e-5)) << "cut " << given;
        EXPECT_EQ(whole.targets[0][P - 1 + static_cast<int64_t>(given)].item<int64_t>(),
                  vocab::encode(answer[given]));
    }
}

// With the padding masked, what stands in the padding cannot change any other position: the
// logits after the padding, and the decoded answers, are the same whatever the padding holds.
TEST(Decoding, MaskedPaddingIsInvisible) {
    torch::manual_seed(4);
    Gpt model(tinyModel());
    initializeWeights(*model);
    model->eval();
    torch::NoGradGuard noGrad;
    auto tokens = torch::randint(0, 96, {2, 12}, torch::kLong);
    auto padding = torch::zeros({2, 12}, torch::kBool);
    padding[0].slice(0, 0, 5).fill_(true);
    padding[1].slice(0, 0, 2).fill_(true);
    auto other = tokens.clone();
    other.masked_scatter_(padding, torch::randint(0, 96, {7}, torch::kLong));
    const auto x = model->forward(tokens, nullptr, Head::AllPositions, nullptr, padding);
    const auto y = model->forward(other, nullptr, Head::AllPositions, nullptr, padding);
    const auto real = padding.logical_not().unsqueeze(-1).expand_as(x);
    EXPECT_TRUE(torch::allclose(x.masked_select(real), y.masked_select(real), 1e-4, 1e-5));
    const auto unmasked = model->forward(other, nullptr, Head::AllPositions);
    EXPECT_FALSE(torch::allclose(x.masked_select(real), unmasked.masked_select(real), 1e-4, 1e-5));
    // decoding with a cache keeps the mask for the generated tokens
    EXPECT_TRUE(torch::equal(greedyDecode(*model, tokens, 5, padding),
                             greedyDecode(*model, other, 5, padding)));
    ModelConfig bidirectional = tinyModel();
    bidirectional.attention = AttentionKind::Bidirectional;
    Gpt both(bidirectional);
    initializeWeights(*both);
    both->eval();
    EXPECT_TRUE(torch::equal(greedyDecode(*both, tokens, 3, padding),
                             greedyDecode(*both, other, 3, padding)));
}

TEST(Decoding, CachedStepsMatchFullRecomputation) {
    torch::manual_seed(2);
    Gpt model(tinyModel());
    initializeWeights(*model);
    model->eval();
    torch::NoGradGuard noGrad;
    const auto prompt = torch::randint(0, 96, {3, 9}, torch::kLong);
    const auto next = torch::randint(0, 96, {3, 1}, torch::kLong);
    KvCache cache;
    model->forward(prompt, nullptr, Head::LastPosition, &cache);
    const auto cached = model->forward(next, nullptr, Head::LastPosition, &cache);
    const auto full = model->forward(torch::cat({prompt, next}, 1), nullptr, Head::LastPosition);
    EXPECT_TRUE(torch::allclose(cached, full, 1e-4, 1e-5));
    EXPECT_EQ(cache.length, 10);
    EXPECT_EQ(greedyDecode(*model, prompt, 4).sizes(), torch::IntArrayRef({3, 4}));
}

TEST(Trainer, TinyModelLearnsATinyTask) {
    // 48 addition examples, learned by heart: the training loss falls and greedy decoding then
    // reproduces the answers of the examples it was trained on.
    ModelConfig m = tinyModel();
    m.nEmbd = 64;
    m.nHead = 4;
    m.dropout = 0.0;
    TrainConfig t = tinyTrain();
    t.batchSize = 48;
    t.steps = 500;
    t.decaySteps = t.steps;
    t.warmupSteps = 10;
    t.learningRate = 1e-2;
    t.weightDecay = 0.0;
    t.evalEvery = t.steps;
    t.snapshotEvery = t.steps;
    t.evalSamples = 20;
    t.threads = 1;
    t.data = {48, 20, 5};
    Trainer trainer(TaskKind::Addition, m, t);
    std::vector<double> losses;
    TrainerCallbacks callbacks;
    callbacks.snapshot = [&](const Snapshot& s) { losses.push_back(s.trainLoss); };
    const auto start = std::chrono::steady_clock::now();
    trainer.run(callbacks);
    Evaluator onTraining(TaskKind::Addition, trainer.data().train, trainer.data().train,
                         Objective::Answer, 48, false, torch::kCPU);
    const EvalResult result = onTraining.evaluate(trainer.model());
    std::cout << "learned: loss " << result.testLoss << ", accuracy " << result.accuracy << "% in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
              << " s" << std::endl;
    ASSERT_EQ(losses.size(), 2u);
    EXPECT_LT(losses.back(), 2.0);     // mean training loss over the run
    EXPECT_LT(result.testLoss, 0.3);   // from about 4.6 (ln 96) at init
    EXPECT_GT(result.accuracy, 80.0);  // exact match; an untrained model gets 0
}

TEST(Trainer, MaskedObjectiveTrains) {
    const ModelConfig m = tinyModel();
    for (Objective objective : {Objective::Masked, Objective::Next}) {
        SCOPED_TRACE(toString(objective));
        Trainer trainer(TaskKind::Addition, m, tinyTrain(objective));
        const double first = trainer.stepOnce();
        double last = first;
        for (int i = 0; i < 15; ++i) {
            last = trainer.stepOnce();
        }
        EXPECT_TRUE(std::isfinite(last));
        EXPECT_LT(last, first);
    }
}

// bf16 steps with the products emulated (fp32 kernels on bf16-rounded operands, as on CPUs
// without bf16 instructions) follow LibTorch's bf16 products' loss curve within bf16's rounding,
// and move away from the fp32 curve no further than LibTorch's do.
TEST(Trainer, EmulatedBf16ProductsFollowTheBf16LossCurve) {
    const ModelConfig m = tinyModel();
    TrainConfig t = tinyTrain(Objective::Lm);
    auto curve = [&](Precision precision, Bf16Products mode) {
        Bf16ProductsScope products(mode);
        t.precision = precision;
        Trainer trainer(TaskKind::Addition, m, t);
        std::vector<double> losses;
        for (int i = 0; i < 12; ++i) {
            losses.push_back(trainer.stepOnce());
        }
        return losses;
    };
    const auto native = curve(Precision::Bf16, Bf16Products::Native);
    const auto emulated = curve(Precision::Bf16, Bf16Products::Emulated);
    const auto fp32 = curve(Precision::Fp32, Bf16Products::Auto);
    double nativeFromFp32 = 0.0;
    for (size_t i = 0; i < native.size(); ++i) {
        EXPECT_NEAR(emulated[i], native[i], 0.02 * native[i]) << "step " << i;
        nativeFromFp32 = std::max(nativeFromFp32, std::abs(native[i] - fp32[i]));
    }
    EXPECT_LT(emulated.back(), emulated.front());
    for (size_t i = 0; i < native.size(); ++i) {
        EXPECT_LE(std::abs(emulated[i] - fp32[i]), 2 * nativeFromFp32 + 1e-3) << "step " << i;
    }
}

// The fast kernels (attention in one pass with its dropout, GELU, LayerNorm, the products)
// follow the plain LibTorch operations' loss curve on a short run with dropout, in fp32 within
// fp32's rounding and in bf16 within bf16's.
TEST(Trainer, FastKernelsFollowThePlainLossCurve) {
    const ModelConfig m = tinyModel();
    TrainConfig t = tinyTrain(Objective::Lm);
    for (const Precision precision : {Precision::Fp32, Precision::Bf16}) {
        t.precision = precision;
        auto curve = [&](bool fast) {
            FastKernelsScope kernels(fast);
            Trainer trainer(TaskKind::Addition, m, t);
            std::vector<double> losses;
            for (int i = 0; i < 10; ++i) {
                losses.push_back(trainer.stepOnce());
            }
            return losses;
        };
        const auto plain = curve(false);
        const auto fast = curve(true);
        const double tol = precision == Precision::Fp32 ? 1e-4 : 0.02;
        for (size_t i = 0; i < plain.size(); ++i) {
            EXPECT_NEAR(fast[i], plain[i], tol * plain[i])
                << (precision == Precision::Fp32 ? "fp32" : "bf16") << " step " << i;
        }
        EXPECT_LT(fast.back(), fast.front());
    }
}

TEST(Trainer, SameSeedSameLossCurve) {
    const ModelConfig m = tinyModel();
    const TrainConfig t = tinyTrain(Objective::Lm);
    Trainer a(TaskKind::Addition, m, t), b(TaskKind::Addition, m, t);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(a.stepOnce(), b.stepOnce()) << "step " << i;
    }
    TrainConfig other = t;
    other.seed = 99;
    Trainer c(TaskKind::Addition, m, other), d(TaskKind::Addition, m, t);
    EXPECT_NE(c.stepOnce(), d.stepOnce());  // the first step of each: only the seed differs
}

TEST(Trainer, CheckpointRoundTripAndResumedCurve) {
    const ModelConfig m = tinyModel();
    const TrainConfig t = tinyTrain(Objective::Lm);
    std::vector<double> straight;
    {
        Trainer trainer(TaskKind::Reversal, m, t);
        for (int i = 0; i < 8; ++i) {
            straight.push_back(trainer.stepOnce());
        }
    }
    const fs::path path = tempPath("resume.pt");
    torch::Tensor logitsBefore;
    const auto probe = torch::randint(0, 96, {2, 12}, torch::kLong);
    {
        Trainer trainer(TaskKind::Reversal, m, t);
        for (int i = 0; i < 4; ++i) {
            EXPECT_EQ(trainer.stepOnce(), straight[i]);
        }
        trainer.saveCheckpoint(path);
        trainer.model().eval();
        torch::NoGradGuard noGrad;
        logitsBefore = trainer.model().forward(probe);
    }
    torch::manual_seed(12345);  // the global generator must not matter to the resumed run
    auto resumed = Trainer::resume(path);
    EXPECT_EQ(resumed->step(), 4);
    {
        resumed->model().eval();
        torch::NoGradGuard noGrad;
        EXPECT_TRUE(torch::equal(resumed->model().forward(probe), logitsBefore));
        resumed->model().train();
    }
    for (int i = 4; i < 8; ++i) {
        EXPECT_EQ(resumed->stepOnce(), straight[i]) << "step " << i;
    }
    fs::remove(path);
}

// A run stopped between evaluations and resumed reports, at its next evaluation, the training
// loss over the same steps as an uninterrupted run (evaluations.csv's train_loss).
TEST(Trainer, AResumedRunsFirstEvaluationAveragesTheStepsBeforeTheStopToo) {
    TrainConfig t = tinyTrain();
    t.steps = t.decaySteps = 8;
    t.evalEvery = 4;
    t.snapshotEvery = 8;
    t.evalSamples = 10;
    std::map<int, double> straight, resumed;
    auto recordInto = [](std::map<int, double>& losses) {
        TrainerCallbacks callbacks;
        callbacks.evaluated = [&losses](const Snapshot& progress, bool) {
            losses[progress.step] = progress.trainLoss;
        };
        return callbacks;
    };
    Trainer(TaskKind::Addition, tinyModel(), t).run(recordInto(straight));
    const fs::path path = tempPath("between-evaluations.pt");
    {
        Trainer trainer(TaskKind::Addition, tinyModel(), t);
        TrainerCallbacks callbacks = recordInto(resumed);
        callbacks.stepEnded = [&trainer](int step) {
            if (step == 6) {
                trainer.control().requestStop();
            }
        };
        EXPECT_EQ(trainer.run(callbacks).reason, StopReason::Stopped);
        EXPECT_EQ(trainer.step(), 6);
        trainer.saveCheckpoint(path);
    }
    Trainer::resume(path)->run(recordInto(resumed));
    fs::remove(path);
    ASSERT_EQ(straight.size(), 3u);  // steps 0 (no training loss yet), 4 and 8
    ASSERT_EQ(resumed.size(), 3u);
    EXPECT_TRUE(std::isnan(resumed[0]));
    EXPECT_EQ(resumed[4], straight[4]);
    EXPECT_EQ(resumed[8], straight[8]);  // steps 5 to 8, two of them before the stop
}

TEST(Trainer, RejectsCorruptCheckpoints) {
    const ModelConfig m = tinyModel();
    Trainer trainer(TaskKind::Addition, m, tinyTrain());
    const fs::path good = tempPath("good.pt");
    trainer.saveCheckpoint(good);
    const auto bytes = fs::file_size(good);

    const fs::path truncated = tempPath("truncated.pt");
    fs::copy_file(good, truncated, fs::copy_options::overwrite_existing);
    fs::resize_file(truncated, bytes / 2);
    const fs::path garbage = tempPath("garbage.pt");
    std::ofstream(garbage) << "this is not a checkpoint at all";
    const fs::path foreign = tempPath("weights.pt");
    trainer.saveBestWeightsForPython(foreign);  // a valid torch file, but not a checkpoint
    const fs::path missing = tempPath("missing.pt");

    for (const auto& path : {truncated, garbage, foreign, missing}) {
        try {
            Trainer::resume(path);
            ADD_FAILURE() << path << " was accepted";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
        }
    }
    // a checkpoint of another model shape: names the weight
    ModelConfig wider = m;
    wider.nEmbd = 64;
    Gpt other(wider);
    try {
        loadWeights(good, *other);
        ADD_FAILURE() << "shape mismatch accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("has shape"), std::string::npos) << e.what();
    }
    for (const auto& path : {good, truncated, garbage, foreign}) {
        fs::remove(path);
    }
}

TEST(Trainer, PythonWeightsHaveNanoGptNames) {
    Trainer trainer(TaskKind::Addition, tinyModel(), tinyTrain());
    const fs::path path = tempPath("python.pt");
    trainer.saveBestWeightsForPython(path);
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    const auto dict = torch::pickle_load(bytes).toGenericDict();
    EXPECT_TRUE(dict.contains("transformer.h.1.attn.c_attn.weight"));
    EXPECT_TRUE(dict.contains("lm_head.weight"));
    EXPECT_TRUE(torch::equal(dict.at("lm_head.weight").toTensor(),
                             dict.at("transformer.wte.weight").toTensor()));
    fs::remove(path);
}

// A run far longer than any test waits for, with no evaluation or snapshot after step 0.
TrainConfig endlessTrain() {
    TrainConfig t = tinyTrain();
    t.steps = t.decaySteps = t.evalEvery = t.snapshotEvery = 100000;
    return t;
}

// Pause, resume and stop from another thread, observed through tasks the training thread runs
// between steps (RunControl::post): no sleeps, no timings.
TEST(Trainer, StopAndPauseFromAnotherThread) {
    Trainer trainer(TaskKind::Addition, tinyModel(), endlessTrain());
    RunControl& control = trainer.control();
    // The step at which the training thread runs a posted task.
    auto stepAtNextTask = [&] {
        auto seen = std::make_shared<std::promise<int>>();
        std::future<int> step = seen->get_future();
        control.post([&trainer, seen] { seen->set_value(trainer.step()); });
        return step;
    };
    std::promise<void> started;
    TrainerCallbacks callbacks;
    callbacks.snapshot = [&](const Snapshot& s) {
        if (s.step == 0) {
            started.set_value();
        }
    };
    TrainOutcome outcome;
    std::thread worker([&] { outcome = trainer.run(callbacks); });
    started.get_future().wait();

    control.setPaused(true);
    std::future<int> first = stepAtNextTask();
    const int pausedAt = first.get();
    std::future<int> second = stepAtNextTask();
    EXPECT_EQ(second.get(), pausedAt);  // no step while paused; tasks still run
    EXPECT_TRUE(control.paused());

    control.setPaused(false);
    for (int i = 0; i < 100000 && trainer.step() <= pausedAt + 1; ++i) {
        stepAtNextTask().get();  // waits for the loop's next stop between steps
    }
    EXPECT_GT(trainer.step(), pausedAt + 1);  // resumed

    control.setPaused(true);
    const int stoppedAt = stepAtNextTask().get();
    control.requestStop();  // wakes the paused loop, which ends without another step
    worker.join();
    EXPECT_EQ(outcome.reason, StopReason::Stopped);
    EXPECT_EQ(outcome.step, stoppedAt);
    EXPECT_FALSE(control.stopRequested());  // a stop ends one run and is cleared
}

// A time limit that ends the run before its steps do: the run stops with that reason, and every
// evaluation's estimate counts to the limit and names a step short of the run's last.
TEST(Trainer, TimeLimitEndsTheRunAndTheEstimateCountsToIt) {
    TrainConfig t = endlessTrain();
    t.evalEvery = 2;
    t.evalSamples = 8;
    t.timeLimitMinutes = 0.05;  // 3 s: dozens of tiny steps
    Trainer trainer(TaskKind::Addition, tinyModel(), t);
    std::vector<Snapshot> seen;
    TrainerCallbacks callbacks;
    callbacks.evaluated = [&](const Snapshot& s, bool) { seen.push_back(s); };
    const TrainOutcome outcome = trainer.run(callbacks);
    EXPECT_EQ(outcome.reason, StopReason::TimeLimit);
    EXPECT_LT(outcome.step, t.steps);
    ASSERT_GE(seen.size(), 3u);
    for (const Snapshot& s : seen) {
        if (s.step == 0) {
            continue;  // no speed yet
        }
        EXPECT_LE(s.etaSeconds, 3.0 + 1e-9) << s.step;
        EXPECT_GE(s.limitStep, s.step) << s.step;
        EXPECT_LT(s.limitStep, t.steps) << s.step;
    }
    // without a limit, the estimate is the steps' and no limit step is named
    TrainConfig open = tinyTrain();
    open.timeLimitMinutes = 0;
    Trainer unlimited(TaskKind::Addition, tinyModel(), open);
    std::vector<Snapshot> all;
    callbacks.evaluated = [&](const Snapshot& s, bool) { all.push_back(s); };
    unlimited.run(callbacks);
    ASSERT_FALSE(all.empty());
    for (const Snapshot& s : all) {
        EXPECT_EQ(s.limitStep, 0);
    }
}

// A stop asked while a step is in flight ends the run before the next one.
TEST(Trainer, StopAskedBetweenStepsEndsTheRunThere) {
    Trainer trainer(TaskKind::Addition, tinyModel(), endlessTrain());
    int askedAt = -1;
    trainer.control().post([&] {
        askedAt = trainer.step();
        trainer.control().requestStop();
    });
    const TrainOutcome outcome = trainer.run({});
    EXPECT_EQ(outcome.reason, StopReason::Stopped);
    EXPECT_EQ(outcome.step, askedAt);
}

// A stop between snapshots ends the run with a snapshot of the step it stopped at, whose training
// loss averages the steps since the last snapshot; a stop right at a snapshot adds none.
TEST(Trainer, AStopBetweenSnapshotsSnapshotsTheStepItStoppedAt) {
    Trainer trainer(TaskKind::Addition, tinyModel(), endlessTrain());
    std::vector<Snapshot> snapshots;
    TrainerCallbacks callbacks;
    callbacks.snapshot = [&](const Snapshot& s) { snapshots.push_back(s); };
    callbacks.stepEnded = [&](int step) {
        if (step == 3) {
            trainer.control().requestStop();
        }
    };
    const TrainOutcome outcome = trainer.run(callbacks);
    EXPECT_EQ(outcome.reason, StopReason::Stopped);
    ASSERT_EQ(snapshots.size(), 2u);  // step 0, then the stop's
    EXPECT_EQ(snapshots[1].step, 3);
    EXPECT_EQ(snapshots[1].analysis.samples, trainer.trainConfig().analysisSamples);
    EXPECT_TRUE(std::isfinite(snapshots[1].trainLoss));
    EXPECT_EQ(trainer.analyze().find(CapturePoint::Attn, 1)->adjacencyMean,
              snapshots[1].analysis.find(CapturePoint::Attn, 1)->adjacencyMean);

    // stopped at step 0 right after its snapshot: nothing new to show
    Trainer atInit(TaskKind::Addition, tinyModel(), endlessTrain());
    std::vector<int> steps;
    callbacks.snapshot = [&](const Snapshot& s) { steps.push_back(s.step); };
    callbacks.stepEnded = [&](int) { atInit.control().requestStop(); };
    atInit.run(callbacks);
    EXPECT_EQ(steps, std::vector<int>{0});
}

// Between evaluations the run says where it is: after its first step, then about once a second,
// and when it pauses (the step its weights are at while paused).
TEST(Trainer, TicksSayTheStepBetweenEvaluationsAndAtAPause) {
    Trainer trainer(TaskKind::Addition, tinyModel(), endlessTrain());
    std::vector<Snapshot> ticks;
    TrainerCallbacks callbacks;
    callbacks.ticked = [&](const Snapshot& p) {
        ticks.push_back(p);
        if (trainer.control().paused()) {  // the pause's tick: then a stop while paused
            trainer.control().post([&] { trainer.control().requestStop(); });
        }
    };
    int pausedAt = -1;
    callbacks.stepEnded = [&](int step) {
        if (step == 4) {
            trainer.control().setPaused(true);
            pausedAt = step;
        }
    };
    trainer.run(callbacks);
    ASSERT_GE(ticks.size(), 2u);
    EXPECT_EQ(ticks.front().step, 1);  // the first step, at once
    EXPECT_TRUE(std::isfinite(ticks.front().trainLoss));
    EXPECT_GT(ticks.front().tokensPerSecond, 0.0);
    EXPECT_EQ(ticks.front().totalSteps, endlessTrain().steps);
    EXPECT_EQ(ticks.back().step, pausedAt);  // the pause's own
    EXPECT_TRUE(ticks.back().analysis.rows.empty());
}

// After the first, the ticks come a second apart or more, however fast the steps are.
TEST(Trainer, TicksComeAboutOnceASecond) {
    Trainer trainer(TaskKind::Addition, tinyModel(), endlessTrain());
    std::vector<SteadyClock::time_point> at;
    TrainerCallbacks callbacks;
    callbacks.ticked = [&](const Snapshot&) { at.push_back(SteadyClock::now()); };
    const auto start = SteadyClock::now();
    callbacks.stepEnded = [&](int) {
        if (secondsSince(start) > 2.5) {
            trainer.control().requestStop();
        }
    };
    trainer.run(callbacks);
    ASSERT_GE(at.size(), 2u);
    EXPECT_LE(at.size(), 4u);  // the first step's, then at most one a second
    for (size_t k = 1; k < at.size(); ++k) {
        EXPECT_GE(std::chrono::duration<double>(at[k] - at[k - 1]).count(), kTickSeconds * 0.99);
    }
}

TEST(RunControl, TasksRunInOrderAndPauseBlocksUntilResumed) {
    RunControl control;
    std::vector<int> order;
    control.post([&] { order.push_back(1); });
    control.post([&] { order.push_back(2); });
    EXPECT_TRUE(control.proceed());
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    control.setPaused(true);
    std::thread resumer([&] {
        control.post([&] {
            order.push_back(3);
            control.setPaused(false);  // run on the blocked thread, then it proceeds
        });
    });
    EXPECT_TRUE(control.proceed());
    resumer.join();
    EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
    control.requestStop();
    EXPECT_FALSE(control.proceed());
    control.clearStop();
    EXPECT_TRUE(control.proceed());
}

TEST(BestWeights, KeepsTheBestEvaluationAndRestoresTheCurrentWeights) {
    torch::manual_seed(0);
    Gpt model(tinyModel());
    BestWeights best;
    EXPECT_FALSE(best.hasWeights());
    EXPECT_TRUE(best.offer(50.0, 1.0, 10, *model));
    const torch::Tensor kept = model->parameters()[0].detach().clone();
    EXPECT_FALSE(best.offer(40.0, 0.5, 20, *model));  // lower accuracy
    EXPECT_FALSE(best.offer(50.0, 1.5, 30, *model));  // same accuracy, higher loss
    {
        torch::NoGradGuard noGrad;
        model->parameters()[0].add_(1.0);
    }
    EXPECT_TRUE(best.offer(50.0, std::nan(""), 40, *model) == false);  // NaN loss: infinite
    EXPECT_EQ(best.record().step, 10);
    const torch::Tensor current = model->parameters()[0].detach().clone();
    const bool sawBest =
        best.withBestIn(*model, [&] { return torch::equal(model->parameters()[0], kept); });
    EXPECT_TRUE(sawBest);
    EXPECT_TRUE(torch::equal(model->parameters()[0], current));  // put back
    EXPECT_THROW(best.withBestIn(*model, []() -> int { throw std::runtime_error("x"); }),
                 std::runtime_error);
    EXPECT_TRUE(torch::equal(model->parameters()[0], current));  // also after a throw
    EXPECT_TRUE(best.offer(50.0, 0.9, 50, *model));              // same accuracy, lower loss
    EXPECT_EQ(best.record().step, 50);
}

TEST(Trainer, NonFiniteLossStopsWithAReason) {
    Trainer trainer(TaskKind::Addition, tinyModel(), tinyTrain());
    {
        torch::NoGradGuard noGrad;
        trainer.model().named_parameters()["transformer.h.0.mlp.c_fc.weight"].fill_(NAN);
    }
    const TrainOutcome outcome = trainer.run({});
    EXPECT_EQ(outcome.reason, StopReason::NonFinite);
    EXPECT_EQ(outcome.step, 0);
    EXPECT_NE(outcome.message.find("NaN"), std::string::npos) << outcome.message;
}

TEST(Trainer, EvaluationAndAnalysisStopWhenAsked) {
    Trainer trainer(TaskKind::Addition, tinyModel(), tinyTrain());
    std::atomic<bool> cancel{true};
    Evaluator evaluator(TaskKind::Addition, trainer.data().test, trainer.data().test,
                        Objective::Answer, 48, false, torch::kCPU);
    EXPECT_TRUE(evaluator.evaluate(trainer.model(), &cancel).cancelled);
    cancel = false;
    const EvalResult full = evaluator.evaluate(trainer.model(), &cancel);
    EXPECT_FALSE(full.cancelled);
    EXPECT_EQ(full.total, 200);
    AnalysisOptions options;
    std::atomic<bool> stop{true};
    options.cancel = &stop;
    const Analysis none = analyze(trainer.model(), trainer.prompts().tokens, options);
    EXPECT_TRUE(none.cancelled);
    EXPECT_EQ(none.samples, 0);
}

TEST(Trainer, NonFiniteStopKeepsTheLastGoodCheckpoint) {
    const fs::path dir = tempPath("nonfinite");
    fs::remove_all(dir);
    {
        Trainer trainer(TaskKind::Addition, tinyModel(), tinyTrain());
        RunRecorder recorder(trainer, dir, trainer.configJson(), false);
        recorder.finish(trainer.run(recorder.wrap({})));
    }
    ASSERT_EQ(readCheckpointState(dir / "checkpoint.pt").step, 20);
    auto resumed = Trainer::resume(dir / "checkpoint.pt", /*steps=*/40);
    {
        torch::NoGradGuard noGrad;
        resumed->model().named_parameters()["transformer.h.1.mlp.c_fc.weight"].fill_(NAN);
    }
    RunRecorder recorder(*resumed, dir, resumed->configJson(), /*continuing=*/true);
    const TrainOutcome bad = resumed->run(recorder.wrap({}));
    EXPECT_EQ(bad.reason, StopReason::NonFinite);
    const RunRecorder::Final final = recorder.finish(bad);
    EXPECT_EQ(readCheckpointState(dir / "checkpoint.pt").step, 20);  // not overwritten
    EXPECT_NO_THROW(Trainer::resume(dir / "checkpoint.pt"));
    EXPECT_FALSE(final.init.rows.empty());  // read back from init_analysis.json
    EXPECT_EQ(final.init.samples, 200);     // finalSamples (256), capped by the test set
    fs::remove_all(dir);
}

TEST(Trainer, ProbesLeaveTheLossCurveUnchanged) {
    const ModelConfig m = tinyModel();
    TrainConfig t = tinyTrain();
    t.probe.hidden = {8};
    t.probe.activations = {ProbeActivation::Selu};
    t.probe.epochs = 2;
    t.probe.trainStrings = 16;
    t.probe.testStrings = 8;
    auto curve = [&](int probeEvery) {
        TrainConfig c = t;
        c.probeEvery = probeEvery;
        Trainer trainer(TaskKind::Reversal, m, c);
        std::vector<double> losses;
        TrainerCallbacks callbacks;
        callbacks.snapshot = [&](const Snapshot& s) {
            losses.push_back(s.trainLoss);
            EXPECT_EQ(s.probes.empty(), probeEvery == 0);
        };
        trainer.run(callbacks);
        return losses;
    };
    const auto plain = curve(0);
    const auto probed = curve(1);  // probes in every snapshot, dropout on
    ASSERT_EQ(plain.size(), 3u);
    for (size_t i = 1; i < plain.size(); ++i) {
        EXPECT_EQ(plain[i], probed[i]) << "snapshot " << i;
    }
}

TEST(Trainer, ProbesRunInSnapshotsAndGoToTheRunFolder) {
    TrainConfig t = tinyTrain();
    t.steps = 30;
    t.probeEvery = 2;  // at init, at step 20, and in the final snapshot (30)
    t.probe.hidden = {16};
    t.probe.activations = {ProbeActivation::Selu};
    t.probe.epochs = 2;
    t.probe.trainStrings = 32;
    t.probe.testStrings = 16;
    t.probe.keepPredictions = 2;
    const fs::path dir = tempPath("probes-run");
    fs::remove_all(dir);
    Trainer trainer(TaskKind::Reversal, tinyModel(), t);
    RunRecorder recorder(trainer, dir, trainer.configJson(), false);
    std::vector<int> probed;
    TrainerCallbacks callbacks;
    callbacks.snapshot = [&](const Snapshot& s) {
        if (!s.probes.empty()) {
            probed.push_back(s.step);
            EXPECT_EQ(s.probes.results.size(), 3u * 5u);  // embedding, attn 1, 2; five features
        }
    };
    recorder.finish(trainer.run(recorder.wrap(callbacks)));
    EXPECT_EQ(probed, (std::vector<int>{0, 20, 30}));
    const RunFolder run = readRunFolder(dir);
    ASSERT_EQ(run.snapshots.size(), 4u);
    EXPECT_TRUE(run.snapshots[1].probes.empty());
    ASSERT_EQ(run.snapshots[3].probes.results.size(), 15u);
    EXPECT_EQ(run.snapshots[3].probes.results[0].truth.size(), 2u * 16u);
    std::ifstream csv(dir / "probes.csv");
    std::string header, line;
    std::getline(csv, header);
    EXPECT_EQ(header, runProbesCsvHeader());
    int rows = 0;
    while (std::getline(csv, line)) {
        ++rows;
    }
    EXPECT_EQ(rows, 3 * 15);

    // Probes on demand, on the task's own prompts, and a bad size named.
    ProbeConfig onTask = t.probe;
    onTask.data = ProbeData::Task;
    const ProbeReport report = trainer.probe(onTask);
    EXPECT_EQ(report.sequenceLength, longestPrompt(TaskKind::Reversal));
    onTask.testStrings = 1000;
    EXPECT_THROW(trainer.probe(onTask), std::invalid_argument);
    fs::remove_all(dir);
}

// Runs the trainer to its end and returns every snapshot it sent, with the outcome's reason.
std::vector<Snapshot> runCollectingSnapshots(Trainer& trainer, StopReason& reason) {
    std::vector<Snapshot> snapshots;
    TrainerCallbacks callbacks;
    callbacks.snapshot = [&](const Snapshot& s) { snapshots.push_back(s); };
    reason = trainer.run(callbacks).reason;
    return snapshots;
}

TEST(Trainer, Bf16TrainsAndSnapshotsHaveEveryLayer) {
    TrainConfig t = tinyTrain();
    t.precision = Precision::Bf16;
    Trainer trainer(TaskKind::Addition, tinyModel(), t);
    StopReason reason{};
    const std::vector<Snapshot> snapshots = runCollectingSnapshots(trainer, reason);
    EXPECT_EQ(reason, StopReason::Completed);
    ASSERT_EQ(snapshots.size(), 3u);  // steps 0, 10, 20
    EXPECT_EQ(snapshots[0].step, 0);
    EXPECT_EQ(snapshots[2].step, 20);
    EXPECT_TRUE(std::isfinite(snapshots[2].trainLoss));
    EXPECT_GT(snapshots[2].tokensPerSecond, 0.0);
    EXPECT_EQ(snapshots[2].eval.step, 20);
    EXPECT_EQ(snapshots[1].analysis.rows.size(), 1u + 3u * 2u);
    EXPECT_EQ(snapshots[1].analysis.rows[0].promptMatrices.size(), 2u);
    EXPECT_EQ(snapshots[1].analysis.samples, 8);
}

// --snapshot-precision bf16: the snapshots' forward passes in bf16; analyze() stays fp32.
TEST(Trainer, SnapshotsInBf16WhenAsked) {
    TrainConfig t = tinyTrain();
    t.snapshotPrecision = Precision::Bf16;
    Trainer trainer(TaskKind::Addition, tinyModel(), t);
    StopReason reason{};
    const std::vector<Snapshot> snapshots = runCollectingSnapshots(trainer, reason);
    ASSERT_EQ(reason, StopReason::Completed);
    ASSERT_EQ(snapshots.size(), 3u);
    const Analysis& last = snapshots.back().analysis;  // the final weights, as now
    const Analysis bf16 = trainer.analyze(0, Precision::Bf16);
    const Analysis fp32 = trainer.analyze();
    ASSERT_EQ(last.rows.size(), fp32.rows.size());
    bool differs = false;
    for (size_t r = 0; r < last.rows.size(); ++r) {
        EXPECT_EQ(last.rows[r].meanMatrix, bf16.rows[r].meanMatrix) << r;
        EXPECT_NEAR(last.rows[r].adjacencyMean, fp32.rows[r].adjacencyMean, 0.02) << r;
        differs = differs || last.rows[r].meanMatrix != fp32.rows[r].meanMatrix;
    }
    EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace nope
