// The ZIP directory reader that checks an archive before LibTorch reads it: sizes, offsets and
// names that a damaged file declares are checked against the bytes that are there.
#include <gtest/gtest.h>

#include <stdexcept>

#include "util/zip_directory.h"

namespace nope {
namespace {

void putLittle(std::string& out, uint64_t value, int width) {
    for (int i = 0; i < width; ++i) {
        out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
}

struct Entry {
    std::string name;
    std::string data;
};

// A ZIP archive of stored records, laid out as every writer does: local headers and data, then
// the central directory, then its end record.
std::string storedZip(const std::vector<Entry>& entries) {
    std::string zip;
    std::string directory;
    for (const Entry& e : entries) {
        const uint64_t local = zip.size();
        zip += std::string("PK\x03\x04", 4);
        putLittle(zip, 20, 2);  // version needed
        putLittle(zip, 0, 2);   // flags
        putLittle(zip, 0, 2);   // method: stored
        putLittle(zip, 0, 4);   // time and date
        putLittle(zip, 0, 4);   // CRC-32 (not checked here)
        putLittle(zip, e.data.size(), 4);
        putLittle(zip, e.data.size(), 4);
        putLittle(zip, e.name.size(), 2);
        putLittle(zip, 0, 2);  // extra
        zip += e.name + e.data;

        directory += std::string("PK\x01\x02", 4);
        putLittle(directory, 20, 2);  // version made by
        putLittle(directory, 20, 2);  // version needed
        putLittle(directory, 0, 2);
        putLittle(directory, 0, 2);  // method
        putLittle(directory, 0, 4);
        putLittle(directory, 0, 4);
        putLittle(directory, e.data.size(), 4);
        putLittle(directory, e.data.size(), 4);
        putLittle(directory, e.name.size(), 2);
        putLittle(directory, 0, 2);  // extra
        putLittle(directory, 0, 2);  // comment
        putLittle(directory, 0, 2);  // disk
        putLittle(directory, 0, 2);  // internal attributes
        putLittle(directory, 0, 4);  // external attributes
        putLittle(directory, local, 4);
        directory += e.name;
    }
    const uint64_t directoryAt = zip.size();
    zip += directory;
    zip += std::string("PK\x05\x06", 4);
    putLittle(zip, 0, 4);  // disks
    putLittle(zip, entries.size(), 2);
    putLittle(zip, entries.size(), 2);
    putLittle(zip, directory.size(), 4);
    putLittle(zip, directoryAt, 4);
    putLittle(zip, 0, 2);  // comment
    return zip;
}

std::string errorOf(const std::string& archive) {
    try {
        readZipDirectory(archive);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

TEST(ZipDirectory, ReadsNamesSizesAndBytes) {
    const std::string zip = storedZip({{"archive/data.pkl", "pickle"}, {"archive/data/0", "xy"}});
    const std::vector<ZipRecord> records = readZipDirectory(zip);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].name, "archive/data.pkl");
    EXPECT_EQ(records[0].size, 6u);
    EXPECT_EQ(storedRecordBytes(zip, records[0]), "pickle");
    EXPECT_EQ(records[1].name, "archive/data/0");
    EXPECT_EQ(storedRecordBytes(zip, records[1]), "xy");
}

TEST(ZipDirectory, AnArchiveWithACommentIsRead) {
    std::string zip = storedZip({{"a", "1"}});
    zip[zip.size() - 2] = 3;
    zip += "abc";
    ASSERT_EQ(readZipDirectory(zip).size(), 1u);
}

// Each damage names what is wrong and throws; none reads outside the archive.
TEST(ZipDirectory, DamagedSizesAndOffsetsAreRefused) {
    const std::string good = storedZip({{"archive/data.pkl", "pickle"}});
    const size_t eocd = good.size() - 22;
    const size_t central = good.find(std::string("PK\x01\x02", 4));

    EXPECT_NE(errorOf("no zip at all").find("no end-of-central-directory record"),
              std::string::npos);
    EXPECT_NE(errorOf(good.substr(0, good.size() - 1)).find("no end-of-central-directory"),
              std::string::npos);

    std::string count = good;  // more records than the directory has room for
    count[eocd + 10] = 100;
    EXPECT_NE(errorOf(count).find("too small for the 100 records"), std::string::npos);

    std::string offset = good;  // the directory said to start past the end
    offset[eocd + 19] = 0x7f;
    EXPECT_NE(errorOf(offset).find("central directory reaches past the end"), std::string::npos);

    std::string deflated = good;  // a compressed record that claims more than deflate can give
    deflated[central + 10] = 8;
    deflated[central + 24 + 2] = 0x01;
    EXPECT_NE(errorOf(deflated).find("more than its 6 compressed bytes can hold"),
              std::string::npos);

    std::string size = good;  // a stored record that claims 4 GB
    for (int i = 0; i < 4; ++i) {
        size[central + 24 + i] = static_cast<char>(0xfe);
    }
    EXPECT_NE(errorOf(size).find("differs from its 6 stored bytes"), std::string::npos);

    std::string stored = good;  // stored bytes past the end
    stored[central + 20 + 3] = 0x10;
    EXPECT_NE(errorOf(stored).find("record archive/data.pkl reaches past the end"),
              std::string::npos);

    std::string local = good;  // the local header moved
    local[central + 42] = 5;
    EXPECT_NE(errorOf(local).find("is not where the directory says"), std::string::npos);

    for (size_t at = 0; at < good.size(); ++at) {  // no single changed byte reads out of bounds
        std::string changed = good;
        changed[at] = static_cast<char>(changed[at] ^ 0xff);
        errorOf(changed);
    }
}

TEST(ZipDirectory, ACompressedRecordHasNoStoredBytes) {
    std::string zip = storedZip({{"a", "1"}});
    const size_t central = zip.find(std::string("PK\x01\x02", 4));
    zip[central + 10] = 8;
    const std::vector<ZipRecord> records = readZipDirectory(zip);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].method, 8);
    EXPECT_THROW(storedRecordBytes(zip, records[0]), std::runtime_error);
}

}  // namespace
}  // namespace nope
