// Reads the zip files that Python's torch.save (PyTorch >= 1.6) and LibTorch's torch::pickle_save
// write: data.pkl, read by run/pickle.h, and the tensors' storages under data/<key>. LibTorch's
// own torch::pickle_load cannot read them as soon as they hold an OrderedDict, and every
// state_dict() is one.
// Not here: PyTorch's legacy (pre-1.6) format (recognized, with a hint), and TorchScript archives
// such as the checkpoints of training/checkpoint.h (isTorchScriptArchive tells them apart).
#pragma once

#include <filesystem>
#include <string_view>

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

// Checks an archive held in memory before LibTorch reads it: LibTorch's reader allocates whatever a
// damaged length asks for (a record's declared size, a memo index, a string's length) before it
// finds out that the bytes are not there. Every record must lie inside the archive and declare no
// more bytes than it can hold, and every pickle in it (data.pkl, constants.pkl, the code's
// debug_pkl) must be stored uncompressed, as LibTorch writes them, and read with run/pickle.h,
// which checks each length against the bytes left. Throws std::runtime_error naming the record and
// what is wrong.
void checkTorchArchive(std::string_view archive);

}  // namespace nope
