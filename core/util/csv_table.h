// A CSV file of the project's own tables (run folders, sweeps): a header, then rows of names and
// numbers without quoting. Read by column name; every problem names the file and the line.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nope {

// The fields of `text` between separators, empty ones kept ("a,,b," -> a, "", b, "").
std::vector<std::string> splitFields(const std::string& text, char separator);

class CsvTable {
public:
    // Reads the whole file. Throws std::runtime_error naming the file when it cannot be read, is
    // empty, or a line has another number of cells than the header, except a last line that is
    // cut short (fewer cells, no newline at the end): that one is left out and described by
    // tornLastLine().
    explicit CsvTable(const std::filesystem::path& file);

    // "line 7 is cut short (3 of 9 cells) and is left out", or empty.
    const std::string& tornLastLine() const { return m_tornLastLine; }

    [[noreturn]] void fail(const std::string& what) const;
    size_t rows() const { return m_rows.size(); }
    bool hasColumn(const std::string& name) const;
    // The index of a column; throws naming the file when it has none of that name.
    size_t column(const std::string& name) const;
    const std::string& text(size_t row, size_t column) const { return m_rows[row][column]; }
    // A number; "nan" and "inf" read as such (a model can produce them). Throws naming the line.
    double number(size_t row, size_t column) const;
    // A number, or NaN when the cell is empty.
    double numberOrNan(size_t row, size_t column) const;
    int integer(size_t row, size_t column) const;

private:
    std::filesystem::path m_file;
    std::vector<std::string> m_header;
    std::vector<std::vector<std::string>> m_rows;
    std::string m_tornLastLine;
};

}  // namespace nope
