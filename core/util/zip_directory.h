// The records of a ZIP archive held in memory, read from its central directory (ZIP64 included)
// and each checked to lie inside the archive, so that a reader that trusts the sizes a file
// declares (LibTorch's allocates a record's declared size before it reads a byte) is only handed
// archives whose sizes hold. Only what the checks need: names, sizes, methods and where each
// record's bytes are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nope {

struct ZipRecord {
    std::string name;
    uint16_t method = 0;  // 0: stored, 8: deflated
    uint64_t compressedSize = 0;
    uint64_t size = 0;        // uncompressed
    uint64_t dataOffset = 0;  // where the record's (compressed) bytes start in the archive
};

// Every record of the archive, in central-directory order. Throws std::runtime_error "damaged ZIP
// archive: ..." when the directory or a local header is not where it says, or a record's bytes
// reach past the archive's end.
std::vector<ZipRecord> readZipDirectory(std::string_view archive);

// A stored record's bytes (a view into `archive`). Throws std::runtime_error for a compressed one.
std::string_view storedRecordBytes(std::string_view archive, const ZipRecord& record);

}  // namespace nope
