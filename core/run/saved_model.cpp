#include "run/saved_model.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>

#include "run/run_folder.h"
#include "run/torch_pickle.h"
#include "tasks/vocab.h"
#include "training/checkpoint.h"
#include "util/files.h"
#include "util/zip_seal.h"

namespace nope {

namespace fs = std::filesystem;

namespace {

using Kind = PickleValue::Kind;
using Tensors = std::map<std::string, torch::Tensor>;

constexpr const char* kCompilePrefix = "_orig_mod.";  // torch.compile's wrapper module
constexpr const char* kWte = "transformer.wte.weight";
constexpr const char* kWpe = "transformer.wpe.weight";
constexpr const char* kLmHead = "lm_head.weight";  // tied to wte: checked, not loaded

std::runtime_error fileError(const fs::path& file, const std::string& what) {
    return std::runtime_error(file.string() + ": " + what);
}

std::string shapeOf(const torch::Tensor& t) {
    return c10::str(t.sizes());
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The N of "transformer.h.N.<rest>", or -1.
int layerOf(const std::string& name) {
    const std::string prefix = "transformer.h.";
    if (name.rfind(prefix, 0) != 0) {
        return -1;
    }
    const size_t dot = name.find('.', prefix.size());
    const std::string digits = name.substr(prefix.size(), dot - prefix.size());
    if (dot == std::string::npos || digits.empty() || digits.size() > 4 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); })) {
        return -1;
    }
    return std::stoi(digits);
}

// transformer.h.N.attn.bias: nanoGPT's causal mask (a buffer when flash attention is missing).
bool isMaskBuffer(const std::string& name) {
    return layerOf(name) >= 0 && endsWith(name, ".attn.bias");
}

// A state dict's tensors by name, without torch.compile's prefix, as float32.
Tensors tensorsOf(const fs::path& file, const PickleValue& dict) {
    Tensors tensors;
    for (const auto& [key, value] : dict.entries) {
        if (key->kind != Kind::String) {
            throw fileError(file, "a key of the state dict is " + describeKind(*key));
        }
        std::string name = key->text;
        if (name.rfind(kCompilePrefix, 0) == 0) {
            name.erase(0, std::strlen(kCompilePrefix));
        }
        if (value->kind != Kind::Tensor) {
            throw fileError(file, "'" + name + "' is " + describeKind(*value) +
                                      ", not a tensor (expected a state dict, or a checkpoint "
                                      "whose 'model' entry is one)");
        }
        if (!value->tensor.is_floating_point()) {
            throw fileError(file, "weight " + name + " holds " +
                                      std::string(c10::toString(value->tensor.scalar_type())) +
                                      " values (expected float32, float16 or bfloat16)");
        }
        tensors[name] = value->tensor.to(torch::kFloat);
    }
    return tensors;
}

// A number of nanoGPT's model_args dict, or nullopt when the key is absent.
std::optional<double> modelArg(const fs::path& file, const PickleValue& args, const char* key) {
    const PickleValue* v = args.find(key);
    if (!v || v->kind == Kind::None) {
        return std::nullopt;
    }
    if (v->kind == Kind::Int || v->kind == Kind::Bool) {
        return static_cast<double>(v->integer);
    }
    if (v->kind == Kind::Float) {
        return v->real;
    }
    throw fileError(
        file, std::string("model_args['") + key + "'] is " + describeKind(*v) + ", not a number");
}

// The config read off the tensors' shapes, then model_args where the file has them.
ModelConfig configOf(const fs::path& file, const Tensors& tensors, const PickleValue* modelArgs,
                     const SavedModelOptions& options) {
    const auto wte = tensors.find(kWte);
    if (wte == tensors.end()) {
        throw fileError(file, std::string("no ") + kWte +
                                  ": not a nanoGPT-style state dict (its keys look like "
                                  "transformer.h.0.attn.c_attn.weight)");
    }
    if (wte->second.dim() != 2 || wte->second.size(0) != vocab::kSize) {
        throw fileError(file, std::string(kWte) + " has shape " + shapeOf(wte->second) +
                                  ", expected [96, n_embd]: NoPEScope's tasks use a vocabulary "
                                  "of 96 characters ('\\n', ' ', '!'..'~')");
    }
    ModelConfig config;
    config.dropout = 0.0;
    config.nEmbd = static_cast<int>(wte->second.size(1));
    config.nLayer = 0;
    config.bias = false;
    for (const auto& [name, tensor] : tensors) {
        config.nLayer = std::max(config.nLayer, layerOf(name) + 1);
        config.bias = config.bias || (endsWith(name, ".bias") && !isMaskBuffer(name));
    }
    const auto wpe = tensors.find(kWpe);
    config.positional =
        wpe == tensors.end() ? PositionalEncoding::None : PositionalEncoding::Learned;
    config.blockSize = wpe == tensors.end() ? 256 : static_cast<int>(wpe->second.size(0));
    config.nHead = options.heads;
    if (modelArgs) {
        auto set = [&](const char* key, auto& field) {
            if (auto v = modelArg(file, *modelArgs, key)) {
                field = static_cast<std::remove_reference_t<decltype(field)>>(*v);
            }
        };
        set("n_layer", config.nLayer);
        set("n_head", config.nHead);
        set("n_embd", config.nEmbd);
        set("block_size", config.blockSize);
        set("bias", config.bias);
        set("dropout", config.dropout);
    }
    if (config.nHead <= 0) {
        throw fileError(file,
                        "the number of attention heads cannot be read from a plain state dict; "
                        "give it with --heads");
    }
    return config;
}

// The model config of the run folder a weights.pt sits in (its config.json), if any.
std::optional<ModelConfig> runConfigBeside(const fs::path& file) {
    const fs::path configPath = file.parent_path() / RunFiles::kConfig;
    if (!fs::is_regular_file(configPath)) {
        return std::nullopt;
    }
    try {
        return nlohmann::json::parse(readFile(configPath)).at("model").get<ModelConfig>();
    } catch (const std::exception& e) {
        throw fileError(configPath, std::string("no readable model config: ") + e.what());
    }
}

// A weights.pt holds the best checkpoint's weights: the step of the best.pt beside it, and the
// run's task from its config.json. Either stays unknown when those files are not there or not
// readable (the weights themselves still load).
void stepAndTaskBeside(const fs::path& file, SavedModel& saved) {
    const fs::path dir = file.parent_path();
    try {
        if (fs::is_regular_file(dir / RunFiles::kBest)) {
            saved.step = readCheckpointState(dir / RunFiles::kBest).step;
        }
        const nlohmann::json config = nlohmann::json::parse(readFile(dir / RunFiles::kConfig));
        if (const auto task = config.find("task"); task != config.end() && task->is_string()) {
            saved.task = task->get<std::string>();
        }
    } catch (const std::exception&) {
        // not said: the caller shows the step as unknown and uses its own task
    }
}

Gpt buildModel(const fs::path& file, const ModelConfig& config) {
    try {
        return Gpt(config);
    } catch (const std::exception& e) {
        throw fileError(file, std::string("the model it describes is not valid: ") + e.what());
    }
}

// Copies every weight into the model: each key must name a parameter of the same shape, and
// every parameter must be given.
void loadTensors(const fs::path& file, const Tensors& tensors, GptImpl& model) {
    torch::NoGradGuard noGrad;
    auto params = model.named_parameters();
    for (const auto& [name, tensor] : tensors) {
        if (isMaskBuffer(name)) {
            continue;
        }
        const torch::Tensor* target = name == kLmHead ? params.find(kWte) : params.find(name);
        if (!target) {
            throw fileError(file, "unknown weight " + name + " (the model has no such parameter)");
        }
        if (!tensor.sizes().equals(target->sizes())) {
            throw fileError(file, "weight " + name + " has shape " + shapeOf(tensor) +
                                      ", the model expects " + shapeOf(*target));
        }
        if (name != kLmHead) {
            target->copy_(tensor);
        }
    }
    for (const auto& item : params) {
        if (!tensors.count(item.key())) {
            throw fileError(file, "missing weight " + item.key());
        }
    }
}

SavedModel loadNopescopeCheckpoint(const fs::path& file) {
    const CheckpointState state = readCheckpointState(file);  // errors name the file
    SavedModel saved;
    try {
        saved.config = state.config.at("model").get<ModelConfig>();
    } catch (const std::exception& e) {
        throw fileError(file, std::string("damaged checkpoint header: ") + e.what());
    }
    saved.model = buildModel(file, saved.config);
    loadWeights(file, *saved.model);
    saved.format = "nopescope-checkpoint";
    saved.step = state.step;
    if (const auto task = state.config.find("task");
        task != state.config.end() && task->is_string()) {
        saved.task = task->get<std::string>();
    }
    return saved;
}

SavedModel loadPickled(const fs::path& file, const SavedModelOptions& options) {
    const PickledFile pickled = readPickledFile(file);
    const PickleValue& root = *pickled.root;
    if (root.kind != Kind::Dict) {
        throw fileError(file, "holds " + describeKind(root) +
                                  ", not a state dict or a checkpoint with a 'model' entry");
    }
    SavedModel saved;
    const PickleValue* weights = &root;
    const PickleValue* modelArgs = nullptr;
    if (const PickleValue* model = root.find("model"); model && model->kind == Kind::Dict) {
        weights = model;
        modelArgs = root.find("model_args");
        if (modelArgs && modelArgs->kind != Kind::Dict) {
            throw fileError(file, "model_args is " + describeKind(*modelArgs) + ", not a dict");
        }
        saved.format = "nanogpt-ckpt";
    } else {
        saved.format = pickled.writtenByLibTorch ? "nopescope-weights" : "state-dict";
    }
    const Tensors tensors = tensorsOf(file, *weights);
    std::optional<ModelConfig> runConfig;
    if (saved.format == "nopescope-weights") {
        runConfig = runConfigBeside(file);
        stepAndTaskBeside(file, saved);
    }
    if (const PickleValue* iter = root.find("iter_num"); iter && iter->kind == Kind::Int) {
        saved.step = static_cast<int>(iter->integer);  // nanoGPT's checkpoint
    }
    saved.config = runConfig ? *runConfig : configOf(file, tensors, modelArgs, options);
    saved.model = buildModel(file, saved.config);
    loadTensors(file, tensors, *saved.model);
    return saved;
}

}  // namespace

nlohmann::json SavedModel::describe() const {
    return {{"file", file.string()},
            {"format", format},
            {"model", config},
            {"step", step >= 0 ? nlohmann::json(step) : nlohmann::json()},
            {"task", task.empty() ? nlohmann::json() : nlohmann::json(task)}};
}

fs::path savedModelFile(const fs::path& path) {
    if (!fs::exists(path)) {
        throw fileError(path, "no such file or folder");
    }
    if (!fs::is_directory(path)) {
        return path;
    }
    if (auto file = modelFileOfRun(path)) {
        return *file;
    }
    throw fileError(path, "a folder without best.pt or checkpoint.pt (not a run folder)");
}

SavedModel loadSavedModel(const fs::path& path, const SavedModelOptions& options) {
    const fs::path file = savedModelFile(path);
    // a sealed file (the tool's checkpoints) whose bytes changed is named as such, whatever part
    // of it the change hit
    if (checkZipSealOfFile(file.string()) == SealState::Broken) {
        throw fileError(file,
                        "damaged checkpoint: its checksum does not match its contents (the file "
                        "was changed after it was written); not loaded");
    }
    SavedModel saved =
        isTorchScriptArchive(file) ? loadNopescopeCheckpoint(file) : loadPickled(file, options);
    saved.file = file;
    saved.model->eval();
    return saved;
}

}  // namespace nope
