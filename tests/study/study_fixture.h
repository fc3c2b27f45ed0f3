// A sweep's manifest for the study tests: the runs of a grid times seeds, each with its id,
// settings and seed, all with one status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "study/manifest.h"

namespace nope::study {

inline Manifest manifestOver(const std::string& grid, std::vector<uint64_t> seeds,
                             RunStatus status) {
    Manifest m;
    m.grid = parseGrid(grid);
    m.seeds = std::move(seeds);
    const auto cells = expandGrid(m.grid, m.seeds);
    for (size_t i = 0; i < cells.size(); ++i) {
        SweepRun run;
        run.id = runId(i, cells.size(), m.grid, cells[i]);
        for (size_t a = 0; a < m.grid.axes.size(); ++a) {
            run.settings.push_back({m.grid.axes[a].name, cells[i].values[a]});
        }
        run.seed = cells[i].seed;
        run.status = status;
        run.log = "runs/" + run.id + "/log.txt";
        m.runs.push_back(run);
    }
    return m;
}

}  // namespace nope::study
