// The grid of a sweep: axes over settings of the table (settings/settings.h), each with its
// values, crossed with a list of seeds into the cells a sweep runs. Parsing and expansion only:
// what a cell runs is the front end's business (the CLI's sweep builds commands from it). No
// LibTorch and no Qt, so that the window can link it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nope::study {

struct GridAxis {
    std::string name;                 // the setting's canonical name ("init-std")
    std::vector<std::string> values;  // as written in the grid, each accepted by the setting
};

struct Grid {
    std::vector<GridAxis> axes;  // in the order written; the first varies slowest
};

// Parses "layers=6,12,24 dim=192,384,768": whitespace-separated name=v1,v2,... where each name
// is a setting (an older name resolves to the canonical one) or `task` (the commands' --task),
// and each value is accepted by it.
// Refused: unknown names, the settings the sweep sets itself (seed, threads), a setting named
// twice, an empty value list, a repeated value. Throws std::invalid_argument with one line that
// names the axis and what is allowed ("layers=abc: 'abc' is not an integer (allowed: 1 to 48)").
Grid parseGrid(const std::string& text);

// 1..n
std::vector<uint64_t> seedRange(int n);
// "3,7,11": distinct non-negative integers. Throws std::invalid_argument naming the bad item.
std::vector<uint64_t> parseSeedList(const std::string& text);

// One run of a sweep: a value per axis and a seed.
struct Cell {
    std::vector<std::string> values;  // one per axis, in the grid's order
    uint64_t seed = 0;
};

// Every combination of the axes' values times the seeds, in row-major order: the first axis
// varies slowest, the seed fastest.
std::vector<Cell> expandGrid(const Grid& grid, const std::vector<uint64_t>& seeds);

// The run's folder name: "007-layers=6-dim=192-seed=3" (numbered from 1, at least three digits),
// with every character outside [A-Za-z0-9._=-] replaced by '_'.
std::string runId(size_t index, size_t total, const Grid& grid, const Cell& cell);

// "init-std" -> "init_std": an axis as a CSV column name.
std::string columnName(const std::string& settingName);

}  // namespace nope::study
