#include "training/checkpoint.h"

#include <torch/serialize.h>

#include <cmath>

#include "run/torch_pickle.h"
#include "util/files.h"
#include "util/zip_seal.h"

namespace nope {

namespace fs = std::filesystem;

namespace {

std::runtime_error checkpointError(const fs::path& path, const std::string& what) {
    return std::runtime_error(path.string() + ": " + what);
}

// The first line of a LibTorch error, without its C++ backtrace.
std::string firstLine(const std::string& message) {
    return message.substr(0, message.find('\n'));
}

std::string readString(torch::serialize::InputArchive& archive, const std::string& key) {
    c10::IValue value;
    archive.read(key, value);
    if (!value.isString()) {
        throw std::runtime_error(key + " is not a string");
    }
    return value.toStringRef();
}

// Reads the file, checks its checksum and format tag, and opens the archive from memory; every
// failure names the file.
void openArchive(const fs::path& path, torch::serialize::InputArchive& archive) {
    if (!fs::exists(path)) {
        throw checkpointError(path, "no such file");
    }
    const std::string bytes = readFile(path);
    const SealState seal = checkZipSeal(bytes);
    if (seal == SealState::Broken) {
        throw checkpointError(path,
                              "damaged checkpoint: its checksum does not match its contents (the "
                              "file was changed after it was written); not loaded");
    }
    try {
        checkTorchArchive(bytes);
        archive.load_from(bytes.data(), bytes.size());
    } catch (const std::exception& e) {
        throw checkpointError(path,
                              "not a readable checkpoint (truncated, corrupt or not a "
                              "LibTorch archive): " +
                                  firstLine(e.what()));
    }
    std::string format;
    try {
        format = readString(archive, "format");
    } catch (const std::exception&) {
        throw checkpointError(path,
                              "not a NoPEScope checkpoint (it has no format tag; "
                              "weights.pt files are for Python's torch.load)");
    }
    if (format == kCheckpointFormat && seal != SealState::Valid) {
        throw checkpointError(path,
                              "damaged checkpoint: its checksum is missing (the end of the file "
                              "was changed or cut); not loaded");
    }
    if (format != kCheckpointFormat && format != kUncheckedCheckpointFormat) {
        throw checkpointError(path, "unsupported checkpoint format '" + format + "' (expected " +
                                        kCheckpointFormat + ")");
    }
}

void readWeights(const fs::path& path, torch::serialize::InputArchive& archive, GptImpl& model) {
    torch::NoGradGuard noGrad;
    for (auto& item : model.named_parameters()) {
        torch::Tensor value;
        try {
            archive.read("model." + item.key(), value);
        } catch (const std::exception&) {
            throw checkpointError(path, "missing weight " + item.key() +
                                            " (was it saved from a different model config?)");
        }
        if (!value.sizes().equals(item.value().sizes())) {
            throw checkpointError(path, "weight " + item.key() + " has shape " +
                                            c10::str(value.sizes()) + ", the model expects " +
                                            c10::str(item.value().sizes()));
        }
        item.value().copy_(value);
    }
}

}  // namespace

void saveCheckpoint(const fs::path& path, const GptImpl& model, const AdamW& optimizer,
                    const CheckpointState& state) {
    torch::serialize::OutputArchive archive;
    archive.write("format", c10::IValue(std::string(kCheckpointFormat)));
    archive.write("config", c10::IValue(state.config.dump()));
    archive.write("step", c10::IValue(int64_t{state.step}));
    archive.write("best_accuracy", c10::IValue(state.bestAccuracy));
    archive.write("best_step", c10::IValue(int64_t{state.bestStep}));
    archive.write("best_loss", c10::IValue(std::isfinite(state.bestLoss) ? state.bestLoss : 1e300));
    archive.write("batch_rng", c10::IValue(state.batchRng));
    if (!state.lastEvaluation.is_null()) {
        archive.write("last_eval", c10::IValue(state.lastEvaluation.dump()));
    }
    archive.write("snapshot_loss_sum", c10::IValue(state.snapshotLossSum));
    archive.write("snapshot_loss_steps", c10::IValue(int64_t{state.snapshotLossSteps}));
    archive.write("eval_loss_sum", c10::IValue(state.evalLossSum));
    archive.write("eval_loss_steps", c10::IValue(int64_t{state.evalLossSteps}));
    archive.write("elapsed_s", c10::IValue(state.elapsedSeconds));
    for (const auto& item : model.named_parameters()) {
        archive.write("model." + item.key(), item.value().detach().to(torch::kCPU));
    }
    optimizer.save(archive);

    std::string bytes;
    try {
        archive.save_to([&bytes](const void* data, size_t size) {
            bytes.append(static_cast<const char*>(data), size);
            return size;
        });
    } catch (const std::exception& e) {
        throw checkpointError(path, "cannot write checkpoint: " + firstLine(e.what()));
    }
    writeFileAtomic(path, sealZipArchive(std::move(bytes)));
}

CheckpointState readCheckpointState(const fs::path& path) {
    torch::serialize::InputArchive archive;
    openArchive(path, archive);
    CheckpointState state;
    try {
        state.config = nlohmann::json::parse(readString(archive, "config"));
        c10::IValue value;
        archive.read("step", value);
        state.step = static_cast<int>(value.toInt());
        archive.read("best_accuracy", value);
        state.bestAccuracy = value.toDouble();
        archive.read("best_step", value);
        state.bestStep = static_cast<int>(value.toInt());
        if (archive.try_read("best_loss", value)) {
            state.bestLoss = value.toDouble();
        }
        state.batchRng = readString(archive, "batch_rng");
        if (archive.try_read("last_eval", value)) {
            if (!value.isString()) {
                throw std::runtime_error("last_eval is not a string");
            }
            state.lastEvaluation = nlohmann::json::parse(value.toStringRef());
        }
        if (archive.try_read("snapshot_loss_sum", value)) {
            state.snapshotLossSum = value.toDouble();
            archive.read("snapshot_loss_steps", value);
            state.snapshotLossSteps = static_cast<int>(value.toInt());
        }
        if (archive.try_read("eval_loss_sum", value)) {
            state.evalLossSum = value.toDouble();
            archive.read("eval_loss_steps", value);
            state.evalLossSteps = static_cast<int>(value.toInt());
        }
        if (archive.try_read("elapsed_s", value)) {
            state.elapsedSeconds = value.toDouble();
        }
    } catch (const std::exception& e) {
        throw checkpointError(path, "damaged checkpoint header: " + firstLine(e.what()));
    }
    return state;
}

void loadCheckpoint(const fs::path& path, GptImpl& model, AdamW& optimizer) {
    torch::serialize::InputArchive archive;
    openArchive(path, archive);
    readWeights(path, archive, model);
    try {
        optimizer.load(archive);
    } catch (const std::exception& e) {
        throw checkpointError(path, "damaged optimizer state: " + firstLine(e.what()));
    }
}

void loadWeights(const fs::path& path, GptImpl& model) {
    torch::serialize::InputArchive archive;
    openArchive(path, archive);
    readWeights(path, archive, model);
}

void saveWeightsForPython(const fs::path& path, const GptImpl& model) {
    c10::Dict<std::string, at::Tensor> weights;
    for (const auto& item : model.named_parameters()) {
        weights.insert(item.key(), item.value().detach().to(torch::kCPU));
    }
    weights.insert("lm_head.weight", model.transformer->wte->weight.detach().to(torch::kCPU));
    const std::vector<char> bytes = torch::pickle_save(c10::IValue(weights));
    writeFileAtomic(path, std::string_view(bytes.data(), bytes.size()));
}

}  // namespace nope
