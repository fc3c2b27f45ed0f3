// A checksum sealed into a ZIP archive (LibTorch's checkpoint format is one): a CRC-32 of every
// byte before it, kept in the archive's comment field, which ZIP readers (LibTorch's, Python's
// torch.load, unzip) skip. A changed byte anywhere in a sealed file breaks the seal.
#pragma once

#include <string>
#include <string_view>

namespace nope {

// The archive with its seal appended. Throws std::invalid_argument when `archive` does not end
// with a ZIP end-of-central-directory record without a comment.
std::string sealZipArchive(std::string archive);

enum class SealState {
    Valid,    // the seal is there and every byte before it matches
    Missing,  // no seal (an older file, or one written by something else)
    Broken,   // a seal whose checksum does not match the bytes: the file was changed
};

SealState checkZipSeal(std::string_view file);

// The same for a file on disk, which is read whole only when its end holds a seal (a large file
// of another kind costs one small read). Throws std::runtime_error naming a file it cannot read.
SealState checkZipSealOfFile(const std::string& path);

}  // namespace nope
