#include "cli/sweep_progress.h"

#include <unistd.h>

#include <cstdio>
#include <deque>
#include <fstream>
#include <map>

#include "util/format.h"
#include "util/stopwatch.h"

namespace nope::cli {

namespace fs = std::filesystem;
using study::RunStatus;

std::string lastLines(const fs::path& file, int count) {
    std::ifstream in(file);
    std::deque<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        lines.push_back(line);
        if (static_cast<int>(lines.size()) > count) {
            lines.pop_front();
        }
    }
    std::string out;
    for (const auto& l : lines) {
        out += "    " + l + "\n";
    }
    return out;
}

SweepProgress::SweepProgress(const study::Manifest& manifest, fs::path sweepDir, int jobs)
    : m_dir(std::move(sweepDir)),
      m_total(static_cast<int>(manifest.runs.size())),
      m_jobs(std::max(1, jobs)),
      m_terminal(::isatty(STDERR_FILENO) != 0),
      m_start(std::chrono::steady_clock::now()) {
    for (const auto& run : manifest.runs) {
        m_done += run.status == RunStatus::Done ? 1 : 0;
    }
}

void SweepProgress::started() {
    if (m_terminal && m_ended == 0) {
        draw(nullptr);
    }
}

void SweepProgress::ended(const study::SweepRun& run) {
    m_ended += 1;
    m_secondsEnded += run.seconds.value_or(0.0);
    if (run.status == RunStatus::Done) {
        m_done += 1;
    } else if (run.status == RunStatus::Failed) {
        m_failed += 1;
    }
    draw(&run);
}

// The bar, or a line naming the run that ended; a failure adds the end of its log.
void SweepProgress::draw(const study::SweepRun* finished) {
    const double elapsed = secondsSince(m_start);
    const int remaining = m_total - m_done - m_failed;
    std::string left = "-";
    if (m_ended > 0 && remaining > 0) {
        left = "~" + clockDuration(m_secondsEnded / m_ended * remaining / m_jobs);
    } else if (remaining == 0) {
        left = clockDuration(0);
    }
    char counts[160];
    std::snprintf(counts, sizeof counts, "%d/%d done, %d failed, elapsed %s, left %s", m_done,
                  m_total, m_failed, clockDuration(elapsed).c_str(), left.c_str());
    const bool failedRun = finished && finished->status == RunStatus::Failed;
    if (failedRun) {
        std::fprintf(stderr, "%srun %s failed (exit %d); the end of %s:\n%s",
                     m_terminal ? "\r\033[K" : "", finished->id.c_str(),
                     finished->exitCode.value_or(-1), (m_dir / finished->log).c_str(),
                     lastLines(m_dir / finished->log, 12).c_str());
    }
    if (m_terminal) {
        constexpr int kWidth = 24;
        const int filled = m_total > 0 ? kWidth * (m_done + m_failed) / m_total : kWidth;
        std::fprintf(stderr, "\r\033[Ksweep [%s%s] %s", std::string(filled, '#').c_str(),
                     std::string(kWidth - filled, ' ').c_str(), counts);
    } else if (finished && !failedRun) {
        std::fprintf(stderr, "%s %s (%.1f s); %s\n", study::toString(finished->status).c_str(),
                     finished->id.c_str(), finished->seconds.value_or(0.0), counts);
    } else if (finished) {
        std::fprintf(stderr, "%s\n", counts);
    }
    std::fflush(stderr);
}

void SweepProgress::finish() {
    if (m_terminal) {
        std::fprintf(stderr, "\n");
    }
}

namespace {

// The rows shown: all of a short summary; of a long one, the embedding and each point's last
// layer per setting values and stage.
std::vector<const study::SummaryRow*> shownRows(const study::SweepResults& r, bool& shortened) {
    constexpr size_t kAllUpTo = 40;
    std::vector<const study::SummaryRow*> rows;
    shortened = r.summary.size() > kAllUpTo;
    std::map<std::string, int> lastLayer;  // by values, stage and point
    auto key = [](const study::SummaryRow& s) {
        std::string k;
        for (const auto& v : s.values) {
            k += v + '\x1f';
        }
        return k + s.stage + '\x1f' + s.point;
    };
    for (const auto& s : r.summary) {
        lastLayer[key(s)] = std::max(lastLayer[key(s)], s.layer);
    }
    for (const auto& s : r.summary) {
        if (!shortened || s.point == "embedding" || s.layer == lastLayer[key(s)]) {
            rows.push_back(&s);
        }
    }
    return rows;
}

}  // namespace

void printSummaryTable(const study::SweepResults& r) {
    const bool trained = r.mode == study::SweepMode::Trained;
    bool shortened = false;
    const auto rows = shownRows(r, shortened);
    std::string header;
    for (const auto& axis : r.axes) {
        char cell[64];
        std::snprintf(cell, sizeof cell, "%-10s ", axis.c_str());
        header += cell;
    }
    std::printf("%s%s%-10s %5s  %-20s %5s\n", header.c_str(), trained ? "stage    " : "", "point",
                "layer", "adjacency (95% CI)", "seeds");
    for (const auto* s : rows) {
        std::string line;
        for (const auto& v : s->values) {
            char cell[64];
            std::snprintf(cell, sizeof cell, "%-10s ", v.c_str());
            line += cell;
        }
        if (trained) {
            char stage[32];
            std::snprintf(stage, sizeof stage, "%-8s ", s->stage.c_str());
            line += stage;
        }
        const std::string value =
            fixed(s->adjacency.mean, 4) + " ± " + fixed(s->adjacency.high - s->adjacency.mean, 4);
        std::printf("%s%-10s %5d  %-21s %5d\n", line.c_str(), s->point.c_str(), s->layer,
                    value.c_str(), s->adjacency.n);
    }
    if (shortened) {
        std::printf(
            "(%zu of %zu rows: the embedding and the last layer of each point; every row "
            "is in summary.csv)\n",
            rows.size(), r.summary.size());
    }
}

}  // namespace nope::cli
