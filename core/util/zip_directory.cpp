#include "util/zip_directory.h"

#include <stdexcept>

namespace nope {

namespace {

constexpr std::string_view kEocdSignature("PK\x05\x06", 4);
constexpr std::string_view kZip64LocatorSignature("PK\x06\x07", 4);
constexpr std::string_view kZip64EocdSignature("PK\x06\x06", 4);
constexpr std::string_view kCentralSignature("PK\x01\x02", 4);
constexpr std::string_view kLocalSignature("PK\x03\x04", 4);
constexpr size_t kEocdSize = 22;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kZip64EocdSize = 56;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;
constexpr size_t kMaxComment = 0xffff;
constexpr uint32_t kZip64Marker = 0xffffffff;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint64_t kMaxExpansion = 1032;  // deflate's largest ratio of output to input

[[noreturn]] void damaged(const std::string& what) {
    throw std::runtime_error("damaged ZIP archive: " + what);
}

// Little-endian reads that refuse to leave the archive.
class Bytes {
public:
    explicit Bytes(std::string_view bytes) : m_bytes(bytes) {}

    uint64_t read(uint64_t at, size_t width, const char* what) const {
        if (at > m_bytes.size() || width > m_bytes.size() - at) {
            damaged(std::string(what) + " reaches past the end of the file");
        }
        uint64_t value = 0;
        for (size_t i = 0; i < width; ++i) {
            value |= uint64_t{static_cast<unsigned char>(m_bytes[at + i])} << (8 * i);
        }
        return value;
    }
    bool hasSignature(uint64_t at, std::string_view signature) const {
        return at <= m_bytes.size() && signature.size() <= m_bytes.size() - at &&
               m_bytes.compare(at, signature.size(), signature) == 0;
    }
    std::string_view view(uint64_t at, uint64_t size, const char* what) const {
        if (at > m_bytes.size() || size > m_bytes.size() - at) {
            damaged(std::string(what) + " reaches past the end of the file");
        }
        return m_bytes.substr(at, size);
    }
    uint64_t size() const { return m_bytes.size(); }

private:
    std::string_view m_bytes;
};

struct Directory {
    uint64_t count = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
};

// The end-of-central-directory record: the last signature within a comment's reach of the end
// (its comment's length is not held against the file's, as LibTorch's reader does not).
uint64_t findEocd(const Bytes& bytes) {
    if (bytes.size() >= kEocdSize) {
        const uint64_t last = bytes.size() - kEocdSize;
        const uint64_t first = last > kMaxComment ? last - kMaxComment : 0;
        for (uint64_t at = last + 1; at-- > first;) {
            if (bytes.hasSignature(at, kEocdSignature)) {
                return at;
            }
        }
    }
    damaged("no end-of-central-directory record");
}

Directory readDirectoryLocation(const Bytes& bytes) {
    const uint64_t eocd = findEocd(bytes);
    Directory directory{bytes.read(eocd + 10, 2, "the record count"),
                        bytes.read(eocd + 16, 4, "the directory's offset"),
                        bytes.read(eocd + 12, 4, "the directory's size")};
    const bool zip64 = directory.count == 0xffff || directory.offset == kZip64Marker ||
                       directory.size == kZip64Marker;
    if (zip64 && eocd >= kZip64LocatorSize &&
        bytes.hasSignature(eocd - kZip64LocatorSize, kZip64LocatorSignature)) {
        const uint64_t record = bytes.read(eocd - kZip64LocatorSize + 8, 8, "the ZIP64 locator");
        if (!bytes.hasSignature(record, kZip64EocdSignature)) {
            damaged("the ZIP64 end-of-central-directory record is not where its locator says");
        }
        bytes.view(record, kZip64EocdSize, "the ZIP64 end-of-central-directory record");
        directory = {bytes.read(record + 32, 8, "the record count"),
                     bytes.read(record + 48, 8, "the directory's offset"),
                     bytes.read(record + 40, 8, "the directory's size")};
    }
    bytes.view(directory.offset, directory.size, "the central directory");
    if (directory.count > directory.size / kCentralSize) {
        damaged("the central directory is too small for the " + std::to_string(directory.count) +
                " records it declares");
    }
    return directory;
}

// The ZIP64 extra field's values replace the 32-bit fields that hold the marker, in this order.
void applyZip64Extra(const Bytes& bytes, uint64_t extra, uint64_t extraSize, ZipRecord& record,
                     uint64_t& localOffset) {
    uint64_t at = extra;
    while (at + 4 <= extra + extraSize) {
        const uint64_t id = bytes.read(at, 2, "an extra field");
        const uint64_t size = bytes.read(at + 2, 2, "an extra field");
        if (id == kZip64ExtraId) {
            uint64_t field = at + 4;
            const uint64_t end = field + size;
            for (uint64_t* value : {&record.size, &record.compressedSize, &localOffset}) {
                if (*value == kZip64Marker && field + 8 <= end) {
                    *value = bytes.read(field, 8, "the ZIP64 extra field");
                    field += 8;
                }
            }
            return;
        }
        at += 4 + size;
    }
}

}  // namespace

std::vector<ZipRecord> readZipDirectory(std::string_view archive) {
    const Bytes bytes(archive);
    const Directory directory = readDirectoryLocation(bytes);
    std::vector<ZipRecord> records;
    records.reserve(directory.count);
    uint64_t at = directory.offset;
    for (uint64_t i = 0; i < directory.count; ++i) {
        if (!bytes.hasSignature(at, kCentralSignature)) {
            damaged("central directory entry " + std::to_string(i) + " has no signature");
        }
        ZipRecord record;
        record.method = static_cast<uint16_t>(bytes.read(at + 10, 2, "a directory entry"));
        record.compressedSize = bytes.read(at + 20, 4, "a directory entry");
        record.size = bytes.read(at + 24, 4, "a directory entry");
        const uint64_t nameSize = bytes.read(at + 28, 2, "a directory entry");
        const uint64_t extraSize = bytes.read(at + 30, 2, "a directory entry");
        const uint64_t commentSize = bytes.read(at + 32, 2, "a directory entry");
        uint64_t localOffset = bytes.read(at + 42, 4, "a directory entry");
        record.name = std::string(bytes.view(at + kCentralSize, nameSize, "a record's name"));
        bytes.view(at + kCentralSize + nameSize, extraSize, "a record's extra field");
        applyZip64Extra(bytes, at + kCentralSize + nameSize, extraSize, record, localOffset);

        if (!bytes.hasSignature(localOffset, kLocalSignature)) {
            damaged("record " + record.name + " is not where the directory says");
        }
        const uint64_t localName = bytes.read(localOffset + 26, 2, "a local header");
        const uint64_t localExtra = bytes.read(localOffset + 28, 2, "a local header");
        record.dataOffset = localOffset + kLocalSize + localName + localExtra;
        bytes.view(record.dataOffset, record.compressedSize, ("record " + record.name).c_str());
        if (record.method == 0 && record.size != record.compressedSize) {
            damaged("record " + record.name + " is stored, with a size of " +
                    std::to_string(record.size) + " bytes that differs from its " +
                    std::to_string(record.compressedSize) + " stored bytes");
        }
        if (record.method != 0 && record.size / kMaxExpansion > record.compressedSize + 1) {
            damaged("record " + record.name + " declares " + std::to_string(record.size) +
                    " bytes, more than its " + std::to_string(record.compressedSize) +
                    " compressed bytes can hold");
        }
        records.push_back(std::move(record));
        at += kCentralSize + nameSize + extraSize + commentSize;
    }
    return records;
}

std::string_view storedRecordBytes(std::string_view archive, const ZipRecord& record) {
    if (record.method != 0) {
        throw std::runtime_error("record " + record.name + " is compressed (method " +
                                 std::to_string(record.method) + ")");
    }
    return Bytes(archive).view(record.dataOffset, record.compressedSize,
                               ("record " + record.name).c_str());
}

}  // namespace nope
