#include "study/grid.h"

#include <set>
#include <sstream>
#include <stdexcept>

#include "run/run_spec.h"
#include "settings/settings.h"
#include "tasks/task.h"
#include "util/csv_table.h"
#include "util/parse_number.h"

namespace nope::study {

namespace {

constexpr const char* kAllowedNames =
    "task, or a setting name such as layers, dim, heads, init, init-std, lr (see nopescope-cli "
    "train --help)";

// The task is no setting of a run's model or training but the commands' --task: an axis too.
constexpr const char* kTaskAxis = "task";

// The setting an axis names, or what is wrong with the name.
const Setting& axisSetting(const std::string& token, const std::string& name) {
    if (name == "seed" || name == "threads") {
        throw std::invalid_argument(
            token + ": " + name + " is set by the sweep itself (allowed: " + kAllowedNames +
            "; seeds come from --seeds N or --seed-list A,B, threads from --jobs or a fixed "
            "--threads N)");
    }
    const Setting* s = findSetting(name);
    if (!s || s->internal) {
        throw std::invalid_argument(token + ": '" + name +
                                    "' is not a setting (allowed: " + kAllowedNames + ")");
    }
    if (s->name == "seed" || s->name == "threads") {
        return axisSetting(token, s->name);
    }
    return *s;
}

// Checks one value against its setting; returns its canonical text (for spotting repeats).
std::string checkedValue(const Setting& s, const std::string& token, const std::string& value) {
    RunSpec scratch;
    std::optional<std::string> error = s.set(scratch, value);
    if (!error) {
        error = s.check(scratch);
    }
    if (error) {
        throw std::invalid_argument(token + ": " + renderForCli(*error));
    }
    return s.get(scratch);
}

// A task name, checked as the commands' --task checks it.
std::string checkedTask(const std::string& token, const std::string& value) {
    if (!parseTask(value)) {
        throw std::invalid_argument(token + ": '" + value +
                                    "' is not allowed (allowed: " + taskNamesJoined() + ")");
    }
    return value;
}

GridAxis parseAxis(const std::string& token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw std::invalid_argument("'" + token + "' is not name=value,value,... (allowed: " +
                                    kAllowedNames + ", then '=' and its values)");
    }
    const std::string name = token.substr(0, eq);
    const Setting* s = name == kTaskAxis ? nullptr : &axisSetting(token, name);
    GridAxis axis{s ? s->name : std::string(kTaskAxis), {}};
    const std::string allowed = s ? renderForCli(s->allowed) : taskNamesJoined();
    std::set<std::string> seen;
    for (const auto& value : splitFields(token.substr(eq + 1), ',')) {
        if (value.empty()) {
            throw std::invalid_argument(token + ": an empty value (allowed: " + allowed +
                                        ", separated by commas)");
        }
        const std::string canonical =
            s ? checkedValue(*s, token, value) : checkedTask(token, value);
        if (!seen.insert(canonical).second) {
            throw std::invalid_argument(token + ": " + value +
                                        " appears twice (allowed: distinct values)");
        }
        axis.values.push_back(value);
    }
    if (axis.values.empty()) {
        throw std::invalid_argument(token + ": no values (allowed: " + allowed +
                                    ", separated by commas)");
    }
    return axis;
}

}  // namespace

Grid parseGrid(const std::string& text) {
    Grid grid;
    std::istringstream in(text);
    std::string token;
    while (in >> token) {
        GridAxis axis = parseAxis(token);
        for (const auto& other : grid.axes) {
            if (other.name == axis.name) {
                throw std::invalid_argument(token + ": " + axis.name +
                                            " is already an axis (allowed: each setting once)");
            }
        }
        grid.axes.push_back(std::move(axis));
    }
    if (grid.axes.empty()) {
        throw std::invalid_argument("no axes (allowed: name=v1,v2,... separated by spaces, with " +
                                    std::string(kAllowedNames) + ")");
    }
    return grid;
}

std::vector<uint64_t> seedRange(int n) {
    std::vector<uint64_t> seeds;
    for (int i = 1; i <= n; ++i) {
        seeds.push_back(static_cast<uint64_t>(i));
    }
    return seeds;
}

std::vector<uint64_t> parseSeedList(const std::string& text) {
    std::vector<uint64_t> seeds;
    for (const auto& item : splitFields(text, ',')) {
        const auto seed = parseInteger<uint64_t>(item);
        if (!seed) {
            throw std::invalid_argument("'" + item +
                                        "' is not a seed (allowed: non-negative integers, "
                                        "separated by commas)");
        }
        for (uint64_t s : seeds) {
            if (s == *seed) {
                throw std::invalid_argument(item + " appears twice (allowed: distinct seeds)");
            }
        }
        seeds.push_back(*seed);
    }
    if (seeds.empty()) {
        throw std::invalid_argument(
            "no seeds (allowed: non-negative integers, separated by "
            "commas)");
    }
    return seeds;
}

std::vector<Cell> expandGrid(const Grid& grid, const std::vector<uint64_t>& seeds) {
    std::vector<Cell> cells = {Cell{}};
    for (const auto& axis : grid.axes) {
        std::vector<Cell> next;
        for (const auto& cell : cells) {
            for (const auto& value : axis.values) {
                Cell c = cell;
                c.values.push_back(value);
                next.push_back(std::move(c));
            }
        }
        cells = std::move(next);
    }
    std::vector<Cell> out;
    for (const auto& cell : cells) {
        for (uint64_t seed : seeds) {
            Cell c = cell;
            c.seed = seed;
            out.push_back(std::move(c));
        }
    }
    return out;
}

std::string runId(size_t index, size_t total, const Grid& grid, const Cell& cell) {
    std::string number = std::to_string(index + 1);
    const size_t width = std::max<size_t>(3, std::to_string(total).size());
    if (number.size() < width) {
        number.insert(0, width - number.size(), '0');
    }
    std::string id = number;
    for (size_t a = 0; a < grid.axes.size() && a < cell.values.size(); ++a) {
        id += "-" + grid.axes[a].name + "=" + cell.values[a];
    }
    id += "-seed=" + std::to_string(cell.seed);
    for (char& c : id) {
        const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '=' || c == '-';
        if (!plain) {
            c = '_';
        }
    }
    return id;
}

std::string columnName(const std::string& settingName) {
    std::string out = settingName;
    for (char& c : out) {
        if (c == '-') {
            c = '_';
        }
    }
    return out;
}

}  // namespace nope::study
