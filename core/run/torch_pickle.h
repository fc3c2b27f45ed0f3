// Reads the zip files that Python's torch.save (PyTorch >= 1.6) and LibTorch's torch::pickle_save
// write: data.pkl, read by run/pickle.h, and the tensors' storages under data/<key>. LibTorch's
// own torch::pickle_load cannot read them as soon as they hold an OrderedDict, and every
// state_dict() is one.
// Not here: PyTorch's legacy (pre-1.6) format (recognized, with a hint), and TorchScript archives
// such as the checkpoints of training/checkpoint.h (isTorchScriptArchive tells them apart).
#pragma once

#include <filesystem>

#include "run/pickle.h"

namespace nope {

struct PickledFile {
    PickleValue::Ptr root;
    bool writtenByLibTorch = false;  // LibTorch's pickler tags containers (torch.jit._pickle)
};

// Throws std::runtime_error naming the file and what is wrong with it (not a zip, truncated,
// a damaged pickle, a storage of the wrong size).
PickledFile readPickledFile(const std::filesystem::path& path);

// True for a zip archive that holds TorchScript constants (torch::save, torch.jit.save), false for
// anything else, readable or not.
bool isTorchScriptArchive(const std::filesystem::path& path);

}  // namespace nope
