// The training settings: a plain aggregate whose defaults are the authors' (the `paper` preset),
// validated once where it enters. No LibTorch here, so the window's form can use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "probe/probe_config.h"
#include "tasks/dataset.h"
#include "util/field_error.h"

namespace nope {

// lm: next-token loss on every position of windows cut from the joined training examples.
// answer: whole examples left-padded to one length, loss on the answer tokens only.
// masked: as answer, with the left padding masked out of attention (no token attends to a
// padding token but the padding itself), as the authors' per-example training does.
// next: the authors' per-example training (`causal_training=False`): each row one example cut
// at a random point of its answer, left-padded with the padding masked out of attention, the
// loss on the single next token (never the terminator, which this objective does not train).
enum class Objective { Lm, Answer, Masked, Next };
enum class Precision { Fp32, Bf16 };
enum class DeviceKind { Cpu, Cuda };

struct TrainConfig {
    Objective objective = Objective::Lm;    // what the loss covers
    Precision precision = Precision::Fp32;  // bf16: CPU autocast of matrix products
    DeviceKind device = DeviceKind::Cpu;    // cuda only when LibTorch was built with it
    int steps = 5000;                       // optimizer steps in all (max_iters)
    int batchSize = 256;                    // sequences per step
    // The batch's rows in this many micro-batches, their gradients accumulated before the one
    // optimizer step (nanoGPT's gradient_accumulation_steps, with the same batch, dropout and
    // result); 0 = as few as fit in this machine's memory (util/memory.h microBatchesFor).
    int microBatches = 0;
    int windowLength = 256;   // lm: tokens per training window (at most the context)
    int curriculumSteps = 0;  // answer, masked: steps that draw the shortest prompts first; 0 = off
    double learningRate = 2.6441e-4;  // peak learning rate
    double minLrRatio = 0.1;          // cosine decay ends at this fraction of the peak
    int warmupSteps = 400;            // linear warm-up from 0
    int decaySteps = 5000;            // step where the cosine decay ends (lr_decay_iters)
    double weightDecay = 0.1;         // AdamW decay on Linear weights only
    double beta1 = 0.9;               // AdamW betas
    double beta2 = 0.99;
    double gradClip = 1.0;          // global gradient-norm clip; 0 disables
    int evalEvery = 250;            // steps between evaluations on the test set
    int evalSamples = 0;            // test examples per evaluation; 0 = the whole test set
    double stopAccuracy = 99.0;     // stop once test accuracy (percent) passes this; 100 = never
    double timeLimitMinutes = 0.0;  // stop after this much wall time (between steps); 0 = none
    int snapshotEvery = 250;        // steps between analysis snapshots
    Precision snapshotPrecision =
        Precision::Fp32;       // the snapshots' forward passes (not init/final)
    int analysisSamples = 64;  // test prompts analysed per snapshot (fixed, seeded)
    int keepPrompts = 4;       // prompts whose own matrices each snapshot keeps for display
    int probeEvery = 0;        // snapshots between position-probe runs; 0 = no probes
    ProbeConfig probe = fastProbeConfig();  // the probes run in training snapshots
    int finalSamples = 256;  // prompts of the init and final analyses (at most the test set)
    uint64_t seed = 1337;    // model init, dropout and batch order
    int threads = 0;         // CPU threads; 0 = all cores
    DataConfig data;         // dataset sizes and seed
};

// Whether the objective's rows mark their left padding, which attention then masks out.
constexpr bool masksPadding(Objective objective) {
    return objective == Objective::Masked || objective == Objective::Next;
}

std::string toString(Objective objective);
std::string toString(Precision precision);
std::string toString(DeviceKind device);
std::optional<Objective> parseObjective(std::string_view s);
std::optional<Precision> parsePrecision(std::string_view s);
std::optional<DeviceKind> parseDevice(std::string_view s);

// Every problem, each naming its setting (settings/settings.h, where this and the JSON functions
// are defined); `contextLength` is the model's block size, which bounds the lm window.
FieldErrors validate(const TrainConfig& config, int contextLength);

void to_json(nlohmann::json& j, const TrainConfig& config);
// Reads the keys present over the defaults; throws std::invalid_argument naming a bad key.
void from_json(const nlohmann::json& j, TrainConfig& config);

}  // namespace nope
