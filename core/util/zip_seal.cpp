#include "util/zip_seal.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <zlib.h>

namespace nope {

namespace {

// The end-of-central-directory record: signature, 16 bytes of counts and offsets, then the
// comment's length (2 bytes, little-endian) and the comment.
constexpr size_t kEocdSize = 22;
constexpr size_t kCommentLengthAt = 20;
constexpr std::string_view kEocdSignature("PK\x05\x06", 4);
// The seal: this marker, then the CRC-32 as 8 hex digits.
constexpr std::string_view kMarker = "nopescope-crc32:";
constexpr size_t kSealSize = kMarker.size() + 8;

uint32_t crcOf(std::string_view bytes) {
    uLong crc = crc32(0L, Z_NULL, 0);
    const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
    size_t left = bytes.size();
    while (left > 0) {  // zlib takes a 32-bit length
        const uInt n = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
        crc = crc32(crc, data, n);
        data += n;
        left -= n;
    }
    return static_cast<uint32_t>(crc);
}

std::string hex8(uint32_t v) {
    char text[9];
    std::snprintf(text, sizeof text, "%08x", v);
    return text;
}

}  // namespace

std::string sealZipArchive(std::string archive) {
    if (archive.size() < kEocdSize ||
        archive.compare(archive.size() - kEocdSize, 4, kEocdSignature) != 0 ||
        archive[archive.size() - 2] != 0 || archive[archive.size() - 1] != 0) {
        throw std::invalid_argument(
            "not a ZIP archive ending with an end-of-central-directory record without a comment");
    }
    const size_t lengthAt = archive.size() - kEocdSize + kCommentLengthAt;
    archive[lengthAt] = static_cast<char>(kSealSize & 0xff);
    archive[lengthAt + 1] = static_cast<char>((kSealSize >> 8) & 0xff);
    const uint32_t crc = crcOf(archive);  // every byte before the seal, its length included
    archive += kMarker;
    archive += hex8(crc);
    return archive;
}

SealState checkZipSeal(std::string_view file) {
    if (file.size() < kEocdSize + kSealSize) {
        return SealState::Missing;
    }
    const std::string_view seal = file.substr(file.size() - kSealSize);
    if (seal.substr(0, kMarker.size()) != kMarker) {
        return SealState::Missing;
    }
    const std::string_view body = file.substr(0, file.size() - kSealSize);
    return hex8(crcOf(body)) == seal.substr(kMarker.size()) ? SealState::Valid : SealState::Broken;
}

SealState checkZipSealOfFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    const std::streamoff size = in.tellg();
    if (size < static_cast<std::streamoff>(kEocdSize + kSealSize)) {
        return SealState::Missing;
    }
    std::string end(kSealSize, '\0');
    in.seekg(size - static_cast<std::streamoff>(kSealSize));
    in.read(end.data(), static_cast<std::streamsize>(end.size()));
    if (!in || end.compare(0, kMarker.size(), kMarker) != 0) {
        return SealState::Missing;
    }
    std::string whole(static_cast<size_t>(size), '\0');
    in.seekg(0);
    in.read(whole.data(), size);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    return checkZipSeal(whole);
}

}  // namespace nope
