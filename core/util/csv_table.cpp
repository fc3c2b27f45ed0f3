#include "util/csv_table.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "util/files.h"
#include "util/parse_number.h"

namespace nope {

std::vector<std::string> splitFields(const std::string& text, char separator) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(text);
    while (std::getline(in, field, separator)) {
        fields.push_back(field);
    }
    if (!text.empty() && text.back() == separator) {
        fields.emplace_back();
    }
    return fields;
}

CsvTable::CsvTable(const std::filesystem::path& file) : m_file(file) {
    const std::string content = readFile(file);
    std::istringstream in(content);
    std::string line;
    if (!std::getline(in, line)) {
        fail("is empty");
    }
    m_header = splitFields(line, ',');
    int number = 1;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty()) {
            continue;
        }
        std::vector<std::string> row = splitFields(line, ',');
        if (row.size() != m_header.size()) {
            // A last line without its newline is a write cut short (a process stopped while it
            // appended): left out and reported. Any other short or long line is damage.
            const bool last = in.peek() == std::char_traits<char>::eof();
            if (last && content.back() != '\n' && row.size() < m_header.size()) {
                m_tornLastLine = "line " + std::to_string(number) + " is cut short (" +
                                 std::to_string(row.size()) + " of " +
                                 std::to_string(m_header.size()) + " cells) and is left out";
                break;
            }
            fail("line " + std::to_string(number) + " has " + std::to_string(row.size()) +
                 " cells, the header " + std::to_string(m_header.size()));
        }
        m_rows.push_back(std::move(row));
    }
}

void CsvTable::fail(const std::string& what) const {
    throw std::runtime_error(m_file.string() + ": " + what);
}

bool CsvTable::hasColumn(const std::string& name) const {
    return std::find(m_header.begin(), m_header.end(), name) != m_header.end();
}

size_t CsvTable::column(const std::string& name) const {
    const auto it = std::find(m_header.begin(), m_header.end(), name);
    if (it == m_header.end()) {
        fail("no column '" + name + "'");
    }
    return static_cast<size_t>(it - m_header.begin());
}

double CsvTable::number(size_t row, size_t column) const {
    const std::string& t = text(row, column);
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size()) {
        fail("line " + std::to_string(row + 2) + ": '" + t + "' is not a number");
    }
    return v;
}

double CsvTable::numberOrNan(size_t row, size_t column) const {
    return text(row, column).empty() ? std::nan("") : number(row, column);
}

int CsvTable::integer(size_t row, size_t column) const {
    const auto v = parseInteger<int>(text(row, column));
    if (!v) {
        fail("line " + std::to_string(row + 2) + ": '" + text(row, column) + "' is not an integer");
    }
    return *v;
}

}  // namespace nope
