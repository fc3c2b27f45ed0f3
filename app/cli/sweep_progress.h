// What `nopescope-cli sweep` prints on stderr while it runs (a bar redrawn in place on a terminal,
// else one line per finished run; a failed run with the end of its log) and the summary table it
// prints on stdout at the end.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "study/manifest.h"
#include "study/results.h"

namespace nope::cli {

class SweepProgress {
public:
    // Counts the runs of `manifest` already done (a resumed sweep).
    SweepProgress(const study::Manifest& manifest, std::filesystem::path sweepDir, int jobs);

    void started();
    // After the manifest recorded the run's end.
    void ended(const study::SweepRun& run);
    // Ends the bar's line on a terminal.
    void finish();

    int failed() const { return m_failed; }
    int done() const { return m_done; }

private:
    void draw(const study::SweepRun* finished);

    std::filesystem::path m_dir;
    int m_total = 0;
    int m_done = 0;
    int m_failed = 0;
    int m_ended = 0;  // in this session: done, failed or interrupted
    double m_secondsEnded = 0.0;
    int m_jobs = 1;
    bool m_terminal = false;
    std::chrono::steady_clock::time_point m_start;
};

// The last `count` lines of a file ("" when it cannot be read).
std::string lastLines(const std::filesystem::path& file, int count);

// The summary as a table on stdout: settings, stage (trained mode), point, layer, mean ± the 95%
// interval's half-width, seeds. A long summary shows the embedding and the last layer of each
// point; summary.csv holds every row.
void printSummaryTable(const study::SweepResults& results);

}  // namespace nope::cli
