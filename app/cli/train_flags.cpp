#include "cli/train_flags.h"

namespace nope::cli {

TrainFlags::TrainFlags(const TrainConfig& defaults)
    : m_config(defaults),
      m_objective(toString(defaults.objective)),
      m_precision(toString(defaults.precision)),
      m_device(toString(defaults.device)) {}

void TrainFlags::addTo(FlagSet& flags) {
    flags.addInt("steps", &m_config.steps, "optimizer steps in all", 1, 10000000);
    flags.addInt("batch", &m_config.batchSize, "sequences per step", 1, 65536);
    flags.addInt("window", &m_config.windowLength, "lm objective: tokens per training window", 2,
                 4096);
    flags.addDouble("lr", &m_config.learningRate, "peak learning rate", 1e-9, 1.0);
    flags.addInt("warmup", &m_config.warmupSteps, "linear warm-up steps from 0", 0, 10000000);
    flags.addInt("decay-steps", &m_config.decaySteps,
                 "step where the cosine decay to --min-lr-ratio ends (default: --steps when "
                 "--steps is given)",
                 1, 10000000);
    flags.addDouble("min-lr-ratio", &m_config.minLrRatio, "final learning rate / peak", 0.0, 1.0);
    flags.addDouble("weight-decay", &m_config.weightDecay, "AdamW decay of Linear weights", 0.0,
                    10.0);
    flags.addDouble("grad-clip", &m_config.gradClip, "global gradient-norm clip (0 = off)", 0.0,
                    1e9);
    flags.addChoice("objective", &m_objective,
                    "lm: every position of windows; answer: answer tokens of padded examples",
                    {"lm", "answer"});
    flags.addChoice("precision", &m_precision, "matrix products in fp32 or bf16 (CPU autocast)",
                    {"fp32", "bf16"});
    flags.addChoice("device", &m_device, "where to train", {"cpu", "cuda"});
    flags.addInt("eval-every", &m_config.evalEvery, "steps between test evaluations", 1, 10000000);
    flags.addInt("eval-samples", &m_config.evalSamples,
                 "test examples per evaluation (0 = the whole test set)", 0, 500000);
    flags.addDouble("stop-accuracy", &m_config.stopAccuracy,
                    "stop once test accuracy (%) passes this (100 = never)", 0.0, 100.0);
    flags.addDouble("time-limit", &m_config.timeLimitMinutes,
                    "stop after this many minutes of wall time (0 = no limit)", 0.0, 1e7);
    flags.addInt("snapshot-every", &m_config.snapshotEvery, "steps between analysis snapshots", 1,
                 10000000);
    flags.addInt("analysis-samples", &m_config.analysisSamples, "test prompts per snapshot", 1,
                 500000);
    flags.addInt("keep-prompts", &m_config.keepPrompts,
                 "prompts whose own matrices each snapshot keeps", 0, 64);
    flags.addInt("probe-every", &m_config.probeEvery,
                 "snapshots between position-probe runs (0 = none; probes also run at init and "
                 "in the last snapshot)",
                 0, 100000);
    flags.addChoice("probe-preset", &m_probePreset,
                    "probes in training: fast (small MLP, the live view's) or full (the authors')",
                    {"fast", "full"});
    flags.addInt("final-samples", &m_config.finalSamples,
                 "test prompts of the init and trained analyses in final_scores.csv", 1, 500000);
    flags.addUint64("seed", &m_config.seed, "seed of init, dropout and batch order");
    flags.addUint64("data-seed", &m_config.data.seed, "seed of the dataset");
    flags.addInt("train-size", &m_config.data.trainSize, "unique training examples", 1, 500000);
    flags.addInt("test-size", &m_config.data.testSize, "unique test examples", 1, 500000);
    flags.addInt("threads", &m_config.threads, "CPU threads (0 = all cores)", 0, 256);
}

std::optional<std::string> TrainFlags::build(const FlagSet& flags, int contextLength,
                                             TrainConfig& out) const {
    out = m_config;
    out.objective = *parseObjective(m_objective);
    out.precision = *parsePrecision(m_precision);
    out.device = *parseDevice(m_device);
    if (flags.given("probe-preset")) {
        const uint64_t seed = out.probe.seed;
        out.probe = *probePreset(m_probePreset);
        out.probe.seed = seed;
    }
    if (flags.given("steps") && !flags.given("decay-steps")) {
        out.decaySteps = out.steps;
    }
    const FieldErrors errors = validate(out, contextLength);
    if (!errors.empty()) {
        return describe(errors.front());
    }
    return std::nullopt;
}

std::optional<std::string> peekFlag(const std::vector<std::string>& args, const std::string& name) {
    const std::string flag = "--" + name;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == flag && i + 1 < args.size()) {
            return args[i + 1];
        }
        if (args[i].rfind(flag + "=", 0) == 0) {
            return args[i].substr(flag.size() + 1);
        }
    }
    return std::nullopt;
}

}  // namespace nope::cli
