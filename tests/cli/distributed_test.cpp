// Data-parallel training: two processes on 127.0.0.1, started by scripts/launch-local.sh as a user
// would, train the same model as one process does (same global batch, seed and data order), and
// rank 0 alone writes the run folder.
#include <algorithm>

#include "cli/cli_fixture.h"

namespace nope::cli_test {
namespace {

// A second of training: the answer objective (rows with different target counts, so that the
// ranks' shares are weighted), dropout 0 and fp32 so that the curves agree to rounding.
const std::string kSmallRun =
    "--task reversal --layers 1 --dim 32 --heads 2 --batch 16 --steps 30 --eval-every 10 "
    "--snapshot-every 10 --dropout 0 --precision fp32 --threads 1 --eval-samples 64 "
    "--analysis-samples 8 --final-samples 8 --probe-every 0 --train-size 500 --test-size 200";

std::string launchLocal() {
    const fs::path cli = NOPESCOPE_CLI;
    return "NOPESCOPE_BUILD_DIR=" + cli.parent_path().parent_path().string() + " " +
           NOPESCOPE_SOURCE_DIR + "/scripts/launch-local.sh";
}

// metrics.csv (8 columns) or evaluations.csv (7) as rows of cells, the timing columns
// (tokens_per_s, elapsed_s, the sixth and seventh in both) left out.
std::vector<std::vector<std::string>> withoutTimes(const fs::path& file, size_t columns) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& line : lines(slurp(file))) {
        std::vector<std::string> cells;
        std::stringstream in(line);
        for (std::string cell; std::getline(in, cell, ',');) {
            cells.push_back(cell);
        }
        if (cells.size() == columns) {
            cells.erase(cells.begin() + 5, cells.begin() + 7);
        }
        rows.push_back(cells);
    }
    return rows;
}

// The two runs' metrics.csv and evaluations.csv agree to 1e-4, timings aside.
void expectSameCurves(const fs::path& one, const fs::path& two) {
    for (const auto& [file, columns] :
         {std::pair<const char*, size_t>{"metrics.csv", 8}, {"evaluations.csv", 7}}) {
        SCOPED_TRACE(file);
        const auto a = withoutTimes(one / file, columns), b = withoutTimes(two / file, columns);
        ASSERT_EQ(a.size(), 5u);  // the header, steps 0, 10, 20, 30
        ASSERT_EQ(b.size(), a.size());
        EXPECT_EQ(b.front(), a.front());
        for (size_t row = 1; row < a.size(); ++row) {
            ASSERT_EQ(b[row].size(), a[row].size());
            EXPECT_EQ(b[row][0], a[row][0]);  // step
            for (size_t cell = 1; cell < a[row].size(); ++cell) {
                if (a[row][cell].empty()) {
                    EXPECT_TRUE(b[row][cell].empty());
                    continue;
                }
                EXPECT_NEAR(std::stod(b[row][cell]), std::stod(a[row][cell]), 1e-4)
                    << "step " << a[row][0] << ", column " << a.front()[cell];
            }
        }
    }
}

class Distributed : public Cli {
protected:
    Result shell(const std::string& command) {
        const fs::path out = m_dir / "shell-stdout.txt", err = m_dir / "shell-stderr.txt";
        const int raw = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
        return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
    }
    Result launch(int processes, const std::string& args) {
        return shell(launchLocal() + " " + std::to_string(processes) + " " + args);
    }
};

TEST_F(Distributed, TwoProcessesFollowTheLossCurveOfOne) {
    const fs::path one = m_dir / "one", two = m_dir / "two";
    const Result single = run("train " + kSmallRun + " --out " + one.string());
    ASSERT_EQ(single.status, 0) << single.err;
    const Result pair = launch(2, kSmallRun + " --out " + two.string());
    ASSERT_EQ(pair.status, 0) << pair.out << pair.err;
    EXPECT_NE(pair.out.find("data parallel: 2 processes, each trains on 8 of the batch's 16 rows"),
              std::string::npos)
        << pair.out;
    EXPECT_NE(pair.out.find("rank 1: completed 30 steps"), std::string::npos) << pair.out;

    expectSameCurves(one, two);
    EXPECT_TRUE(fs::exists(two / "checkpoint.pt"));
    EXPECT_TRUE(fs::exists(two / "final_scores.csv"));
    EXPECT_NE(slurp(two / "config.json").find("\"world_size\": 2"), std::string::npos);
    // rank 1 wrote nothing: the only folders are the two runs
    int entries = 0;
    for (const auto& entry : fs::directory_iterator(m_dir)) {
        entries += entry.is_directory() ? 1 : 0;
    }
    EXPECT_EQ(entries, 2);
}

// With dropout, and each rank's share in micro-batches: the masks are keyed by the rows' place
// in the global batch and the micro-batches' gradients summed before the ranks', so the run is
// still one process's on the whole batch.
TEST_F(Distributed, RanksInMicroBatchesWithDropoutFollowOneProcess) {
    std::string run = kSmallRun;
    run.replace(run.find("--dropout 0 "), 12, "--dropout 0.1 ");
    const fs::path one = m_dir / "one", two = m_dir / "two";
    const Result single = this->run("train " + run + " --out " + one.string());
    ASSERT_EQ(single.status, 0) << single.err;
    const Result pair = launch(2, run + " --micro-batches 4 --out " + two.string());
    ASSERT_EQ(pair.status, 0) << pair.out << pair.err;
    EXPECT_NE(pair.out.find("micro-batches: each step's batch in 2 parts"), std::string::npos)
        << pair.out;
    expectSameCurves(one, two);
}

TEST_F(Distributed, ABatchThatDoesNotSplitIsRefusedOnEveryRank) {
    const Result r = launch(2, kSmallRun + " --batch 15 --out " + (m_dir / "run").string());
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--batch: 15 does not split across 2 processes (allowed: a multiple of "
                         "WORLD_SIZE"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(m_dir / "run" / "checkpoint.pt"));
}

// Only rank 0 checks the run folder: the others learn of its refusal at the rendezvous instead
// of waiting there for it until the group's timeout.
TEST_F(Distributed, ARankThatRefusesItsFlagsStopsTheOthers) {
    const fs::path dir = m_dir / "run";
    const Result first = run("train " + kSmallRun + " --steps 10 --out " + dir.string());
    ASSERT_EQ(first.status, 0) << first.err;
    const Result r = launch(2, kSmallRun + " --out " + dir.string());
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("already holds a run"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1 of the 2 ranks refused their flags (their own messages say why); "
                         "rank 1 stops too"),
              std::string::npos)
        << r.err;
}

TEST_F(Distributed, WithoutALauncherTheMissingVariableIsNamed) {
    const Result r = run("train --distributed " + kSmallRun);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--distributed: MASTER_ADDR is not set"), std::string::npos) << r.err;
    const Result bad = shell("MASTER_ADDR=127.0.0.1 MASTER_PORT=1 WORLD_SIZE=2 RANK=5 " +
                             std::string(NOPESCOPE_CLI) + " train --distributed " + kSmallRun);
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("RANK is '5' (allowed: this process's number, 0 to 1"),
              std::string::npos)
        << bad.err;
}

TEST_F(Distributed, TheLauncherChecksItsProcessCount) {
    const Result r = launch(0, kSmallRun);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("N is '0' (allowed: 1 to 64)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nope::cli_test
