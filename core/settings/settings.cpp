#include "settings/settings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "tasks/dataset.h"
#include "tasks/vocab.h"
#include "util/parse_number.h"

namespace nope {

namespace {

using S = SettingSection;
using Json = nlohmann::json;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The field a setting reads and writes, reached from the spec.
template <typename T>
using Ref = T& (*)(RunSpec&);

template <typename T>
const T& read(Ref<T> ref, const RunSpec& spec) {
    return ref(const_cast<RunSpec&>(spec));  // NOLINT: the reference is only read
}

// The columns every row has; the type's own columns are the factory's arguments.
struct Meta {
    const char* name;
    SettingSection section;
    const char* jsonPath;
    const char* help;
    bool primary = false;
    std::vector<std::string> aliases = {};
    const char* allowed = nullptr;  // replaces the text made from the range
};

Setting olderFilesMean(Setting s, const char* value) {
    s.whenMissing = value;
    return s;
}

Setting base(const Meta& m, SettingType type) {
    Setting s;
    s.name = m.name;
    s.label = m.name;  // the form shows the canonical name; the help is its tooltip
    s.help = m.help;
    s.section = m.section;
    s.type = type;
    s.jsonPath = m.jsonPath;
    s.aliases = m.aliases;
    s.primary = m.primary;
    if (m.allowed) {
        s.allowed = m.allowed;
    }
    return s;
}

std::string quoted(const std::string& s) {
    return "'" + s + "'";
}

std::string realText(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> items;
    if (text.empty()) {
        return items;
    }
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        items.push_back(item);
    }
    if (text.back() == ',') {
        items.emplace_back();
    }
    return items;
}

std::string joinedWith(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        out += (i ? separator : "") + items[i];
    }
    return out;
}

struct Bounds {
    double min;
    double max;
    bool minOpen = false;
    bool maxOpen = false;
};

std::string boundsText(const Bounds& b) {
    if (b.max == kInf) {
        return b.minOpen ? "numbers greater than " + realText(b.min) : realText(b.min) + " or more";
    }
    if (!b.minOpen && !b.maxOpen) {
        return realText(b.min) + " to " + realText(b.max);
    }
    return std::string(b.minOpen ? "(" : "[") + realText(b.min) + ", " + realText(b.max) +
           (b.maxOpen ? ")" : "]");
}

bool within(double v, const Bounds& b) {
    return (b.minOpen ? v > b.min : v >= b.min) && (b.maxOpen ? v < b.max : v <= b.max);
}

std::string outside(const std::string& value, const std::string& allowed) {
    return value + " is outside the allowed " + allowed;
}

Setting integer(const Meta& m, Ref<int> ref, int min, int max) {
    Setting s = base(m, SettingType::Integer);
    if (s.allowed.empty()) {
        s.allowed = std::to_string(min) + " to " + std::to_string(max);
    }
    s.get = [ref](const RunSpec& spec) { return std::to_string(read(ref, spec)); };
    s.set = [ref, allowed = s.allowed](RunSpec& spec,
                                       const std::string& text) -> std::optional<std::string> {
        const auto v = parseInteger<int>(text);
        if (!v) {
            return quoted(text) + " is not an integer (allowed: " + allowed + ")";
        }
        ref(spec) = *v;
        return std::nullopt;
    };
    s.check = [ref, min, max,
               allowed = s.allowed](const RunSpec& spec) -> std::optional<std::string> {
        const int v = read(ref, spec);
        if (v < min || v > max) {
            return outside(std::to_string(v), allowed);
        }
        return std::nullopt;
    };
    return s;
}

Setting unsignedInteger(const Meta& m, Ref<uint64_t> ref) {
    Setting s = base(m, SettingType::Unsigned);
    s.allowed = "0 to 18446744073709551615";
    s.get = [ref](const RunSpec& spec) { return std::to_string(read(ref, spec)); };
    s.set = [ref, allowed = s.allowed](RunSpec& spec,
                                       const std::string& text) -> std::optional<std::string> {
        const auto v = parseInteger<uint64_t>(text);
        if (!v) {
            return quoted(text) + " is not a non-negative integer (allowed: " + allowed + ")";
        }
        ref(spec) = *v;
        return std::nullopt;
    };
    s.check = [](const RunSpec&) { return std::optional<std::string>(); };
    return s;
}

Setting real(const Meta& m, Ref<double> ref, const Bounds& bounds) {
    Setting s = base(m, SettingType::Real);
    if (s.allowed.empty()) {
        s.allowed = boundsText(bounds);
    }
    s.get = [ref](const RunSpec& spec) { return realText(read(ref, spec)); };
    s.set = [ref, allowed = s.allowed](RunSpec& spec,
                                       const std::string& text) -> std::optional<std::string> {
        const auto v = parseReal(text);
        if (!v) {
            return quoted(text) + " is not a number (allowed: " + allowed + ")";
        }
        ref(spec) = *v;
        return std::nullopt;
    };
    s.check = [ref, bounds,
               allowed = s.allowed](const RunSpec& spec) -> std::optional<std::string> {
        const double v = read(ref, spec);
        if (!std::isfinite(v) || !within(v, bounds)) {
            return outside(realText(v), allowed);
        }
        return std::nullopt;
    };
    return s;
}

Setting toggle(const Meta& m, Ref<bool> ref) {
    Setting s = base(m, SettingType::Switch);
    s.allowed = "true, false";
    s.get = [ref](const RunSpec& spec) { return std::string(read(ref, spec) ? "true" : "false"); };
    s.set = [ref](RunSpec& spec, const std::string& text) -> std::optional<std::string> {
        if (text != "true" && text != "false") {
            return quoted(text) + " is not allowed (allowed: true, false)";
        }
        ref(spec) = text == "true";
        return std::nullopt;
    };
    s.check = [](const RunSpec&) { return std::optional<std::string>(); };
    return s;
}

// The names of an enum's values, from its toString (the enum's one table of names).
template <typename E>
std::vector<std::string> namesOf(const std::vector<E>& values) {
    std::vector<std::string> names;
    for (E v : values) {
        names.push_back(toString(v));
    }
    return names;
}

template <typename E>
std::optional<E> parseAmong(const std::vector<E>& values, const std::string& text) {
    for (E v : values) {
        if (toString(v) == text) {
            return v;
        }
    }
    return std::nullopt;
}

// The type a field accessor returns a reference to.
template <typename F>
using FieldOf = std::remove_reference_t<std::invoke_result_t<F, RunSpec&>>;

template <typename F, typename E = FieldOf<F>>
Setting choice(const Meta& m, F field, std::vector<FieldOf<F>> values) {
    const Ref<E> ref = field;
    Setting s = base(m, SettingType::Choice);
    s.choices = namesOf(values);
    s.allowed = joinedWith(s.choices, ", ");
    s.get = [ref](const RunSpec& spec) { return toString(read(ref, spec)); };
    s.set = [ref, values, allowed = s.allowed](
                RunSpec& spec, const std::string& text) -> std::optional<std::string> {
        const auto v = parseAmong(values, text);
        if (!v) {
            return quoted(text) + " is not allowed (allowed: " + allowed + ")";
        }
        ref(spec) = *v;
        return std::nullopt;
    };
    s.check = [](const RunSpec&) { return std::optional<std::string>(); };
    return s;
}

// A list of values. `asSet`: each value at most once, and "all" selects every one; otherwise an
// ordered list that may repeat values (one per probe layer, say).
template <typename F, typename E = typename FieldOf<F>::value_type>
Setting choiceList(const Meta& m, F field, std::vector<typename FieldOf<F>::value_type> values,
                   bool asSet) {
    const Ref<std::vector<E>> ref = field;
    Setting s = base(m, SettingType::ChoiceList);
    s.choices = namesOf(values);
    s.allowed =
        joinedWith(s.choices, ", ") + (asSet ? ", all; comma-separated" : "; comma-separated");
    s.get = [ref](const RunSpec& spec) { return joinedWith(namesOf(read(ref, spec)), ","); };
    s.set = [ref, values, asSet, allowed = s.allowed](
                RunSpec& spec, const std::string& text) -> std::optional<std::string> {
        if (asSet && text == "all") {
            ref(spec) = values;
            return std::nullopt;
        }
        std::vector<E> out;
        for (const auto& item : split(text)) {
            const auto v = parseAmong(values, item);
            if (!v) {
                return quoted(item) + " is not allowed (allowed: " + allowed + ")";
            }
            if (asSet && std::find(out.begin(), out.end(), *v) != out.end()) {
                return quoted(item) + " appears twice (allowed: " + allowed + ")";
            }
            out.push_back(*v);
        }
        ref(spec) = out;
        return std::nullopt;
    };
    s.check = [ref, asSet, allowed = s.allowed](const RunSpec& spec) -> std::optional<std::string> {
        if (asSet && read(ref, spec).empty()) {
            return "needs at least one value (allowed: " + allowed + ")";
        }
        return std::nullopt;
    };
    return s;
}

Setting integerList(const Meta& m, Ref<std::vector<int>> ref, int min, int max, size_t maxCount) {
    Setting s = base(m, SettingType::IntegerList);
    s.allowed = "up to " + std::to_string(maxCount) + " integers, each " + std::to_string(min) +
                " to " + std::to_string(max) + "; comma-separated";
    s.get = [ref](const RunSpec& spec) {
        std::vector<std::string> items;
        for (int v : read(ref, spec)) {
            items.push_back(std::to_string(v));
        }
        return joinedWith(items, ",");
    };
    s.set = [ref, allowed = s.allowed](RunSpec& spec,
                                       const std::string& text) -> std::optional<std::string> {
        std::vector<int> out;
        for (const auto& item : split(text)) {
            const auto v = parseInteger<int>(item);
            if (!v) {
                return quoted(item) + " is not an integer (allowed: " + allowed + ")";
            }
            out.push_back(*v);
        }
        ref(spec) = out;
        return std::nullopt;
    };
    s.check = [ref, min, max, maxCount,
               allowed = s.allowed](const RunSpec& spec) -> std::optional<std::string> {
        const auto& values = read(ref, spec);
        if (values.size() > maxCount) {
            return std::to_string(values.size()) + " values (allowed: " + allowed + ")";
        }
        for (int v : values) {
            if (v < min || v > max) {
                return outside(std::to_string(v), allowed);
            }
        }
        return std::nullopt;
    };
    return s;
}

// Characters of random probe strings: non-empty, in the vocabulary, each once.
std::optional<std::string> charSetProblem(const std::string& chars) {
    if (chars.empty()) {
        return "is empty (allowed: one or more distinct characters of the vocabulary)";
    }
    for (size_t i = 0; i < chars.size(); ++i) {
        if (!vocab::contains(chars[i])) {
            return "'" + vocab::display(chars[i]) +
                   "' is not in the vocabulary (allowed: printable ASCII and newline)";
        }
        if (chars.find(chars[i], i + 1) != std::string::npos) {
            return "'" + std::string(1, chars[i]) +
                   "' appears twice (allowed: distinct characters)";
        }
    }
    return std::nullopt;
}

Setting charSet(const Meta& m, Ref<std::string> ref) {
    Setting s = base(m, SettingType::Text);
    s.allowed = "distinct characters of the vocabulary";
    s.get = [ref](const RunSpec& spec) { return read(ref, spec); };
    s.set = [ref](RunSpec& spec, const std::string& text) -> std::optional<std::string> {
        ref(spec) = text;
        return std::nullopt;
    };
    s.check = [ref](const RunSpec& spec) { return charSetProblem(read(ref, spec)); };
    return s;
}

const std::vector<ProbeActivation> kActivations = {ProbeActivation::Selu, ProbeActivation::Exp,
                                                   ProbeActivation::Relu, ProbeActivation::Gelu,
                                                   ProbeActivation::Identity};

// The table. Each row: canonical name, section, JSON path, help, and the type's columns. The
// model's JSON keys are nanoGPT's (n_layer, n_embd, ...) so that config.json reads in PyTorch.
// Longer than 60 lines for a reason: it is the table, one row per setting, in the form's order.
std::vector<Setting> makeTable() {
    const int maxSet = kMaxExamples / 2;
    return {
        // Model
        integer(
            {"layers", S::Model, "model/n_layer", "transformer blocks", true},
            [](RunSpec& s) -> int& { return s.model.nLayer; }, 1, 48),
        integer(
            {"dim", S::Model, "model/n_embd", "width of the residual stream, a multiple of {heads}",
             true},
            [](RunSpec& s) -> int& { return s.model.nEmbd; }, 1, 4096),
        integer(
            {"heads", S::Model, "model/n_head", "attention heads per block", true},
            [](RunSpec& s) -> int& { return s.model.nHead; }, 1, 64),
        real({"dropout", S::Model, "model/dropout",
              "dropout on attention weights, residual branches and embeddings (training only)",
              true},
             [](RunSpec& s) -> double& { return s.model.dropout; }, {0.0, 1.0, false, true}),
        choice({"positional",
                S::Model,
                "model/positional",
                "positional encoding: none (NoPE) is the object of study",
                true,
                {"pe"}},
               [](RunSpec& s) -> PositionalEncoding& { return s.model.positional; },
               {PositionalEncoding::None, PositionalEncoding::Learned,
                PositionalEncoding::Sinusoidal}),
        choice(
            {"attention", S::Model, "model/attention",
             "attention mask: bidirectional is the control without the adjacency mechanism", true},
            [](RunSpec& s) -> AttentionKind& { return s.model.attention; },
            {AttentionKind::Causal, AttentionKind::Bidirectional}),
        toggle({"bias", S::Model, "model/bias", "biases in Linear layers and LayerNorms", true},
               [](RunSpec& s) -> bool& { return s.model.bias; }),
        integer(
            {"context", S::Model, "model/block_size",
             "context length in tokens: the longest sequence the model accepts"},
            [](RunSpec& s) -> int& { return s.model.blockSize; }, 2, 4096),
        [] {
            Setting vocab = integer(
                {"vocab", S::Model, "model/vocab_size", "vocabulary size (fixed by the tasks)"},
                [](RunSpec& s) -> int& { return s.model.vocabSize; }, 2, 1000000);
            vocab.internal = true;
            return vocab;
        }(),
        // Initialization
        choice({"init", S::Init, "model/init/scheme",
                "weight init: default is nanoGPT's; normal draws every non-LayerNorm weight "
                "from N({init-mean}, {init-std})",
                true},
               [](RunSpec& s) -> InitScheme& { return s.model.init.scheme; },
               {InitScheme::Default, InitScheme::Normal}),
        real({"init-mean",
              S::Init,
              "model/init/mean",
              "mean of the normal init",
              true,
              {},
              "any finite number"},
             [](RunSpec& s) -> double& { return s.model.init.mean; }, {-kInf, kInf, true, true}),
        real({"init-std", S::Init, "model/init/std", "standard deviation of the normal init", true},
             [](RunSpec& s) -> double& { return s.model.init.std; }, {0.0, kInf, true, true}),
        unsignedInteger(
            {"seed", S::Init, "train/seed", "seed of init, dropout and batch order", true},
            [](RunSpec& s) -> uint64_t& { return s.train.seed; }),
        // Training
        choice({"objective", S::Training, "train/objective",
                "lm: next-token loss on every position of windows; answer: the answer tokens "
                "of left-padded examples; masked: the same with the padding masked out of "
                "attention; next: the authors' per-example training, each example cut at a "
                "random point of its answer, the padding masked, the loss on the next token",
                true},
               [](RunSpec& s) -> Objective& { return s.train.objective; },
               {Objective::Lm, Objective::Answer, Objective::Masked, Objective::Next}),
        choice({"precision", S::Training, "train/precision",
                "matrix products in fp32 or bf16 (CPU autocast)", true},
               [](RunSpec& s) -> Precision& { return s.train.precision; },
               {Precision::Fp32, Precision::Bf16}),
        choice({"device", S::Training, "train/device",
                "where to train (cuda only when LibTorch was built with it)"},
               [](RunSpec& s) -> DeviceKind& { return s.train.device; },
               {DeviceKind::Cpu, DeviceKind::Cuda}),
        real({"lr", S::Training, "train/learning_rate", "peak learning rate", true},
             [](RunSpec& s) -> double& { return s.train.learningRate; }, {0.0, 1.0, true, false}),
        integer(
            {"batch", S::Training, "train/batch_size", "sequences per step", true},
            [](RunSpec& s) -> int& { return s.train.batchSize; }, 1, 65536),
        integer(
            {"micro-batches",
             S::Training,
             "train/micro_batches",
             "the batch in this many parts, their gradients summed before the one optimizer "
             "step: the same result in less memory",
             false,
             {},
             "0 (as few as fit in memory) to {batch}"},
            [](RunSpec& s) -> int& { return s.train.microBatches; }, 0, 65536),
        integer(
            {"steps", S::Training, "train/steps", "optimizer steps in all", true},
            [](RunSpec& s) -> int& { return s.train.steps; }, 1, 10000000),
        integer(
            {"warmup", S::Training, "train/warmup_steps", "linear warm-up steps from 0", true},
            [](RunSpec& s) -> int& { return s.train.warmupSteps; }, 0, 10000000),
        integer(
            {"decay-steps", S::Training, "train/decay_steps",
             "step where the cosine decay to {min-lr-ratio} ends (follows {steps} unless "
             "set)"},
            [](RunSpec& s) -> int& { return s.train.decaySteps; }, 1, 10000000),
        real({"min-lr-ratio", S::Training, "train/min_lr_ratio",
              "learning rate at the end of the decay, as a fraction of the peak"},
             [](RunSpec& s) -> double& { return s.train.minLrRatio; }, {0.0, 1.0}),
        real({"weight-decay", S::Training, "train/weight_decay", "AdamW decay of Linear weights"},
             [](RunSpec& s) -> double& { return s.train.weightDecay; }, {0.0, 10.0}),
        real({"beta1", S::Training, "train/beta1", "AdamW's first-moment decay"},
             [](RunSpec& s) -> double& { return s.train.beta1; }, {0.0, 1.0, false, true}),
        real({"beta2", S::Training, "train/beta2", "AdamW's second-moment decay"},
             [](RunSpec& s) -> double& { return s.train.beta2; }, {0.0, 1.0, false, true}),
        real({"grad-clip",
              S::Training,
              "train/grad_clip",
              "global gradient-norm clip",
              false,
              {},
              "0 (off) to 1e9"},
             [](RunSpec& s) -> double& { return s.train.gradClip; }, {0.0, 1e9}),
        integer(
            {"window", S::Training, "train/window_length",
             "lm objective: tokens per training window (at most {context})"},
            [](RunSpec& s) -> int& { return s.train.windowLength; }, 2, 4096),
        integer(
            {"curriculum-steps",
             S::Training,
             "train/curriculum_steps",
             "answer, masked and next objectives: the first N steps draw the shortest prompts "
             "first, "
             "one more prompt length at each of equal stages (those holding a batch), then all",
             false,
             {},
             "0 (off) to 10000000"},
            [](RunSpec& s) -> int& { return s.train.curriculumSteps; }, 0, 10000000),
        integer(
            {"eval-every", S::Training, "train/eval_every", "steps between test evaluations", true},
            [](RunSpec& s) -> int& { return s.train.evalEvery; }, 1, 10000000),
        integer(
            {"eval-samples",
             S::Training,
             "train/eval_samples",
             "test examples per evaluation",
             true,
             {},
             "0 (the whole test set) to 500000, at most {test-size}"},
            [](RunSpec& s) -> int& { return s.train.evalSamples; }, 0, maxSet),
        real({"stop-accuracy", S::Training, "train/stop_accuracy",
              "stop once test accuracy (%) passes this (100 = never)"},
             [](RunSpec& s) -> double& { return s.train.stopAccuracy; }, {0.0, 100.0}),
        real({"time-limit",
              S::Training,
              "train/time_limit_minutes",
              "stop after this many minutes of wall time",
              false,
              {},
              "0 (no limit) to 10000000"},
             [](RunSpec& s) -> double& { return s.train.timeLimitMinutes; }, {0.0, 1e7}),
        integer(
            {"threads",
             S::Training,
             "train/threads",
             "CPU threads",
             false,
             {},
             "0 (all cores) to 256"},
            [](RunSpec& s) -> int& { return s.train.threads; }, 0, 256),
        // Data
        integer(
            {"train-size", S::Data, "train/data/train_size", "unique training examples"},
            [](RunSpec& s) -> int& { return s.train.data.trainSize; }, 1, maxSet),
        integer(
            {"test-size", S::Data, "train/data/test_size",
             "unique test examples, none of them in training"},
            [](RunSpec& s) -> int& { return s.train.data.testSize; }, 1, maxSet),
        unsignedInteger({"data-seed", S::Data, "train/data/seed", "seed of the dataset"},
                        [](RunSpec& s) -> uint64_t& { return s.train.data.seed; }),
        olderFilesMean(
            choice({"addition-data", S::Data, "train/data/addition",
                    "addition pairs: balanced by carry count as the authors drew them, or the "
                    "operand-size buckets alone"},
                   [](RunSpec& s) -> AdditionData& { return s.train.data.addition; },
                   {AdditionData::Balanced, AdditionData::Buckets}),
            "buckets"),  // the only scheme before this setting
        // Analysis
        integer(
            {"analysis-samples", S::Analysis, "train/analysis_samples",
             "test prompts analysed per snapshot (at most {test-size})", true},
            [](RunSpec& s) -> int& { return s.train.analysisSamples; }, 1, maxSet),
        integer(
            {"snapshot-every", S::Analysis, "train/snapshot_every",
             "steps between analysis snapshots", true},
            [](RunSpec& s) -> int& { return s.train.snapshotEvery; }, 1, 10000000),
        choice({"snapshot-precision", S::Analysis, "train/snapshot_precision",
                "matrix products of the snapshots' forward passes (bf16: 1.5 times faster, "
                "adjacency within 0.01; the init and final analyses stay fp32)"},
               [](RunSpec& s) -> Precision& { return s.train.snapshotPrecision; },
               {Precision::Fp32, Precision::Bf16}),
        integer(
            {"keep-prompts", S::Analysis, "train/keep_prompts",
             "prompts whose own matrices each snapshot keeps (at most {analysis-samples})"},
            [](RunSpec& s) -> int& { return s.train.keepPrompts; }, 0, 64),
        integer(
            {"final-samples", S::Analysis, "train/final_samples",
             "test prompts of the init and trained analyses in final_scores.csv"},
            [](RunSpec& s) -> int& { return s.train.finalSamples; }, 1, kMaxExamples),
        integer(
            {"probe-every",
             S::Analysis,
             "train/probe_every",
             "snapshots between position-probe runs (probes also run at init and in the last "
             "snapshot)",
             true,
             {},
             "0 (no probes in training) to 100000"},
            [](RunSpec& s) -> int& { return s.train.probeEvery; }, 0, 100000),
        // Probes
        integer(
            {"probe-length",
             S::Probe,
             "train/probe/length",
             "characters of each random probe string (at most {context})",
             true,
             {"length"}},
            [](RunSpec& s) -> int& { return s.train.probe.length; }, 2, 4096),
        choiceList(
            {"probe-points",
             S::Probe,
             "train/probe/points",
             "capture points to probe",
             false,
             {"point"}},
            [](RunSpec& s) -> std::vector<CapturePoint>& { return s.train.probe.points; },
            allCapturePoints(), true),
        choiceList(
            {"probe-features",
             S::Probe,
             "train/probe/features",
             "features to probe: the vector, its variance or norm, its cosine to the last "
             "token, its row of the self-cosine matrix",
             false,
             {"features"}},
            [](RunSpec& s) -> std::vector<ProbeFeature>& { return s.train.probe.features; },
            allProbeFeatures(), true),
        choice({"probe-data",
                S::Probe,
                "train/probe/data",
                "probe strings: random strings over two character sets, or the task's test "
                "prompts",
                false,
                {"data"}},
               [](RunSpec& s) -> ProbeData& { return s.train.probe.data; },
               {ProbeData::Random, ProbeData::Task}),
        charSet({"probe-train-chars",
                 S::Probe,
                 "train/probe/train_chars",
                 "characters of the strings the probe trains on",
                 false,
                 {"train-chars"}},
                [](RunSpec& s) -> std::string& { return s.train.probe.trainChars; }),
        charSet({"probe-test-chars",
                 S::Probe,
                 "train/probe/test_chars",
                 "characters of the strings it is tested on (none of {probe-train-chars})",
                 false,
                 {"test-chars"}},
                [](RunSpec& s) -> std::string& { return s.train.probe.testChars; }),
        integer(
            {"probe-train-strings",
             S::Probe,
             "train/probe/train_strings",
             "strings (or task prompts) the probe trains on",
             false,
             {"train-strings"}},
            [](RunSpec& s) -> int& { return s.train.probe.trainStrings; }, 2, 100000),
        integer(
            {"probe-test-strings",
             S::Probe,
             "train/probe/test_strings",
             "strings (or task prompts) the probe is tested on",
             false,
             {"test-strings"}},
            [](RunSpec& s) -> int& { return s.train.probe.testStrings; }, 2, 100000),
        integerList(
            {"probe-widths", S::Probe, "train/probe/hidden",
             "hidden widths of the probe MLP (none: a linear probe)"},
            [](RunSpec& s) -> std::vector<int>& { return s.train.probe.hidden; }, 1, 8192, 8),
        choiceList(
            {"probe-activations",
             S::Probe,
             "train/probe/activations",
             "activation after each hidden layer of the probe",
             false,
             {"activations"}},
            [](RunSpec& s) -> std::vector<ProbeActivation>& { return s.train.probe.activations; },
            kActivations, false),
        integer(
            {"probe-epochs",
             S::Probe,
             "train/probe/epochs",
             "passes over the probe's training strings",
             false,
             {"epochs"}},
            [](RunSpec& s) -> int& { return s.train.probe.epochs; }, 1, 10000),
        integer(
            {"probe-batch", S::Probe, "train/probe/batch_strings", "strings per probe batch"},
            [](RunSpec& s) -> int& { return s.train.probe.batchStrings; }, 1, 100000),
        real(
            {"probe-lr", S::Probe, "train/probe/learning_rate", "AdamW learning rate of the probe"},
            [](RunSpec& s) -> double& { return s.train.probe.learningRate; },
            {0.0, 1.0, true, false}),
        real({"probe-weight-decay", S::Probe, "train/probe/weight_decay",
              "AdamW weight decay of the probe"},
             [](RunSpec& s) -> double& { return s.train.probe.weightDecay; }, {0.0, 1.0}),
        choice({"probe-precision", S::Probe, "train/probe/precision",
                "matrix products of the probe (bf16: 2.5 times faster, R within 0.02)"},
               [](RunSpec& s) -> ProbePrecision& { return s.train.probe.precision; },
               {ProbePrecision::Fp32, ProbePrecision::Bf16}),
        toggle({"probe-controls",
                S::Probe,
                "train/probe/controls",
                "also train each probe on shuffled targets (the control)",
                false,
                {"controls"}},
               [](RunSpec& s) -> bool& { return s.train.probe.controls; }),
        toggle({"probe-standardize",
                S::Probe,
                "train/probe/standardize",
                "scale each probe input to zero mean and unit variance (training statistics; "
                "the authors did not)",
                false,
                {"standardize"}},
               [](RunSpec& s) -> bool& { return s.train.probe.standardize; }),
        unsignedInteger({"probe-seed", S::Probe, "train/probe/seed",
                         "seed of the probes and the random strings"},
                        [](RunSpec& s) -> uint64_t& { return s.train.probe.seed; }),
        integer(
            {"probe-keep-predictions",
             S::Probe,
             "train/probe/keep_predictions",
             "test strings whose predictions are kept for scatter plots",
             false,
             {"keep-predictions"}},
            [](RunSpec& s) -> int& { return s.train.probe.keepPredictions; }, 0, 100000),
    };
}

bool inSections(const Setting& s, std::initializer_list<SettingSection> sections) {
    for (SettingSection section : sections) {
        if (s.section == section) {
            return true;
        }
    }
    return false;
}

Json::json_pointer pointer(const Setting& s) {
    return Json::json_pointer("/" + s.jsonPath);
}

Json jsonValue(const Setting& s, const std::string& text) {
    switch (s.type) {
        case SettingType::Integer:
            return std::stoll(text);
        case SettingType::Unsigned:
            return std::stoull(text);
        case SettingType::Real:
            return std::stod(text);
        case SettingType::Switch:
            return text == "true";
        case SettingType::Choice:
        case SettingType::Text:
            return text;
        case SettingType::ChoiceList:
            return split(text);
        case SettingType::IntegerList: {
            Json list = Json::array();
            for (const auto& item : split(text)) {
                list.push_back(std::stoll(item));
            }
            return list;
        }
    }
    return text;
}

// The JSON value as the text `set` reads, or what is wrong with its type.
std::optional<std::string> jsonText(const Setting& s, const Json& v, std::string& text) {
    auto scalar = [&](const Json& item) -> std::optional<std::string> {
        if (item.is_number_float()) {
            text = realText(item.get<double>());
        } else if (item.is_number()) {
            text = item.dump();
        } else if (item.is_boolean()) {
            text = item.get<bool>() ? "true" : "false";
        } else if (item.is_string()) {
            text = item.get<std::string>();
        } else {
            return item.dump() + " is not a value (allowed: " + s.allowed + ")";
        }
        return std::nullopt;
    };
    const bool list = s.type == SettingType::ChoiceList || s.type == SettingType::IntegerList;
    if (list != v.is_array()) {
        return v.dump() + " is not " + (list ? "a list" : "a single value") +
               " (allowed: " + s.allowed + ")";
    }
    if (!list) {
        const bool wantsString = s.type == SettingType::Choice || s.type == SettingType::Text;
        const bool wantsBool = s.type == SettingType::Switch;
        if (wantsString != v.is_string() || wantsBool != v.is_boolean()) {
            return v.dump() + " has the wrong type (allowed: " + s.allowed + ")";
        }
        return scalar(v);
    }
    std::vector<std::string> items;
    for (const auto& item : v) {
        if (auto error = scalar(item)) {
            return error;
        }
        items.push_back(text);
    }
    text = joinedWith(items, ",");
    return std::nullopt;
}

}  // namespace

std::string sectionTitle(SettingSection section) {
    switch (section) {
        case S::Model:
            return "Model";
        case S::Init:
            return "Initialization";
        case S::Training:
            return "Training";
        case S::Data:
            return "Data";
        case S::Analysis:
            return "Analysis";
        case S::Probe:
            return "Probes";
    }
    return "?";
}

const std::vector<Setting>& allSettings() {
    static const std::vector<Setting> kTable = makeTable();
    return kTable;
}

std::vector<const Setting*> settingsIn(std::initializer_list<SettingSection> sections) {
    std::vector<const Setting*> out;
    for (const auto& s : allSettings()) {
        if (!s.internal && inSections(s, sections)) {
            out.push_back(&s);
        }
    }
    return out;
}

const Setting* findSetting(std::string_view name) {
    for (const auto& s : allSettings()) {
        if (s.name == name) {
            return &s;
        }
        for (const auto& alias : s.aliases) {
            if (alias == name) {
                return &s;
            }
        }
    }
    return nullptr;
}

FieldErrors checkSettings(const RunSpec& spec, std::initializer_list<SettingSection> sections) {
    FieldErrors errors;
    for (const auto& s : allSettings()) {
        if (inSections(s, sections)) {
            if (auto problem = s.check(spec)) {
                errors.push_back({s.name, *problem});
            }
        }
    }
    return errors;
}

void writeSettings(Json& root, const RunSpec& spec,
                   std::initializer_list<SettingSection> sections) {
    for (const auto& s : allSettings()) {
        if (inSections(s, sections)) {
            root[pointer(s)] = jsonValue(s, s.get(spec));
        }
    }
}

void readSettings(const Json& root, RunSpec& spec, std::initializer_list<SettingSection> sections) {
    for (const auto& s : allSettings()) {
        if (!inSections(s, sections)) {
            continue;
        }
        if (!root.contains(pointer(s))) {
            if (!s.whenMissing.empty() && root.contains(pointer(s).parent_pointer())) {
                if (auto error = s.set(spec, s.whenMissing)) {
                    throw std::logic_error(s.name + ": " + *error);
                }
            }
            continue;
        }
        std::string text;
        std::optional<std::string> error = jsonText(s, root.at(pointer(s)), text);
        if (!error) {
            error = s.set(spec, text);
        }
        if (error) {
            throw std::invalid_argument(s.jsonPath + ": " + *error);
        }
    }
}

void setSteps(TrainConfig& train, int steps) {
    if (train.decaySteps == train.steps) {
        train.decaySteps = steps;
    }
    train.steps = steps;
}

std::string renderForCli(const std::string& message) {
    return renderSettingRefs(message, [](const std::string& name) { return "--" + name; });
}

std::string renderForForm(const std::string& message) {
    return renderSettingRefs(message, [](const std::string& name) {
        const Setting* s = findSetting(name);
        return s ? s->label : name;
    });
}

std::string describeForCli(const FieldError& error) {
    return describe(error);
}

std::string describeForForm(const FieldError& error) {
    const Setting* s = findSetting(error.field);
    return (s ? s->label : error.field) + ": " + renderForForm(error.message);
}

}  // namespace nope
