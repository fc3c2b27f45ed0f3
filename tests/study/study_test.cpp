// The study library: grid parsing and expansion, the manifest, statistics over seeds, results
// read from run files, and the process pool. No LibTorch: runs as a light test program.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/test_folder.h"
#include "study/grid.h"
#include "study/manifest.h"
#include "study/process_pool.h"
#include "study/results.h"
#include "study/stats.h"
#include "study_fixture.h"
#include "util/files.h"

namespace {

namespace fs = std::filesystem;
using namespace nope::study;

// A fresh folder for the test, removed afterwards.
class TempDir : public nope::test::TestFolder {
public:
    TempDir() : TestFolder("study-test") {}
};

std::string gridError(const std::string& text) {
    try {
        parseGrid(text);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(Grid, ParsesAxesInOrder) {
    const Grid g = parseGrid("  layers=6,12,24   dim=192,384,768 init-std=0.02 ");
    ASSERT_EQ(g.axes.size(), 3u);
    EXPECT_EQ(g.axes[0].name, "layers");
    EXPECT_EQ(g.axes[0].values, (std::vector<std::string>{"6", "12", "24"}));
    EXPECT_EQ(g.axes[1].name, "dim");
    EXPECT_EQ(g.axes[2].values, (std::vector<std::string>{"0.02"}));
}

TEST(Grid, ResolvesOlderNamesToTheCanonicalOne) {
    const Grid g = parseGrid("pe=none,learned");
    ASSERT_EQ(g.axes.size(), 1u);
    EXPECT_EQ(g.axes[0].name, "positional");
    EXPECT_NE(gridError("pe=none positional=learned").find("positional is already an axis"),
              std::string::npos);
}

TEST(Grid, RefusesBadAxesNamingThemAndWhatIsAllowed) {
    const struct {
        const char* grid;
        const char* mentions;
    } cases[] = {
        {"layers=abc", "layers=abc: 'abc' is not an integer (allowed: 1 to 48)"},
        {"layers=0", "layers=0: 0 is outside the allowed 1 to 48"},
        {"depth=3",
         "depth=3: 'depth' is not a setting (allowed: task, or a setting name such as layers"},
        {"out=x", "'out' is not a setting"},
        {"vocab=96", "'vocab' is not a setting"},
        {"seed=1,2", "seed is set by the sweep itself"},
        {"threads=1", "threads is set by the sweep itself"},
        {"layers=", "layers=: no values"},
        {"layers=1,,2", "layers=1,,2: an empty value"},
        {"layers=1,2 layers=3", "layers=3: layers is already an axis"},
        {"layers=2,02", "02 appears twice"},
        {"layers", "'layers' is not name=value"},
        {"", "no axes"},
        {"positional=spiral", "positional=spiral: 'spiral' is not allowed"},
    };
    for (const auto& c : cases) {
        EXPECT_NE(gridError(c.grid).find(c.mentions), std::string::npos)
            << c.grid << " -> " << gridError(c.grid);
    }
}

TEST(Grid, ExpandsRowMajorWithTheSeedFastest) {
    const Grid g = parseGrid("layers=6,12,24 dim=192,384,768");
    const auto cells = expandGrid(g, seedRange(5));
    ASSERT_EQ(cells.size(), 45u);
    EXPECT_EQ(cells[0].values, (std::vector<std::string>{"6", "192"}));
    EXPECT_EQ(cells[0].seed, 1u);
    EXPECT_EQ(cells[4].seed, 5u);
    EXPECT_EQ(cells[5].values, (std::vector<std::string>{"6", "384"}));
    EXPECT_EQ(cells[15].values, (std::vector<std::string>{"12", "192"}));
    EXPECT_EQ(cells[44].values, (std::vector<std::string>{"24", "768"}));
    EXPECT_EQ(runId(6, cells.size(), g, cells[6]), "007-layers=6-dim=384-seed=2");
    const Grid chars = parseGrid("probe-train-chars=5/8");
    EXPECT_EQ(runId(0, 1, chars, expandGrid(chars, {3})[0]), "001-probe-train-chars=5_8-seed=3");
    EXPECT_EQ(runId(999, 1200, g, cells[0]), "1000-layers=6-dim=192-seed=1");
    EXPECT_EQ(columnName("init-std"), "init_std");
}

TEST(Grid, TheTaskIsAnAxisToo) {
    const Grid grid = parseGrid("task=addition,reversal layers=1,2");
    ASSERT_EQ(grid.axes.size(), 2u);
    EXPECT_EQ(grid.axes[0].name, "task");
    EXPECT_EQ(grid.axes[0].values, (std::vector<std::string>{"addition", "reversal"}));
    EXPECT_EQ(columnName("task"), "task");
    try {
        parseGrid("task=addition,sorting");
        FAIL() << "an unknown task was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "'sorting' is not allowed (allowed: addition, reversal, indexing, ordering)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(parseGrid("task=addition task=reversal"), std::invalid_argument);
}

TEST(Grid, ParsesSeeds) {
    EXPECT_EQ(seedRange(3), (std::vector<uint64_t>{1, 2, 3}));
    EXPECT_EQ(parseSeedList("3,7,11"), (std::vector<uint64_t>{3, 7, 11}));
    EXPECT_THROW(parseSeedList("3,x"), std::invalid_argument);
    EXPECT_THROW(parseSeedList("3,3"), std::invalid_argument);
    EXPECT_THROW(parseSeedList(""), std::invalid_argument);
    EXPECT_THROW(parseSeedList("-1"), std::invalid_argument);
}

Manifest sampleManifest() {
    Manifest m = manifestOver("layers=1,2", {1, 2}, RunStatus::Pending);
    m.mode = SweepMode::Trained;
    m.preset = "quick";
    m.fixed = {"--task", "reversal", "--bias"};
    m.jobs = 2;
    m.threadsPerRun = 1;
    for (SweepRun& run : m.runs) {
        run.commands = {{"/bin/true", "--seed", std::to_string(run.seed)}, {"/bin/true"}};
    }
    m.runs[1].status = RunStatus::Done;
    m.runs[1].exitCode = 0;
    m.runs[1].seconds = 1.5;
    m.runs[2].status = RunStatus::Failed;
    m.runs[2].exitCode = 3;
    return m;
}

TEST(Manifest, RoundTrips) {
    TempDir dir;
    const Manifest m = sampleManifest();
    writeManifest(dir.path(), m);
    EXPECT_TRUE(holdsSweep(dir.path()));
    const Manifest back = readManifest(dir.path());
    EXPECT_EQ(manifestJson(back), manifestJson(m));
    EXPECT_EQ(back.preset, std::optional<std::string>("quick"));
    EXPECT_EQ(back.runs[2].status, RunStatus::Failed);
    EXPECT_EQ(back.runs[2].exitCode, std::optional<int>(3));
    EXPECT_EQ(back.runs[0].exitCode, std::nullopt);
    EXPECT_EQ(back.runs[1].commands, m.runs[1].commands);
    EXPECT_EQ(back.runs[3].settings, m.runs[3].settings);
    EXPECT_EQ(runFolder(dir.path(), back.runs[0]), dir.path() / "runs" / "001-layers=1-seed=1");
}

TEST(Manifest, RefusesAnotherVersionOrShapeNamingTheFile) {
    const std::string good = manifestJson(sampleManifest());
    const auto error = [](const std::string& text) -> std::string {
        try {
            parseManifest(text, "/x/sweep.json");
        } catch (const std::runtime_error& e) {
            return e.what();
        }
        return "(accepted)";
    };
    std::string v2 = good;
    v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
    EXPECT_NE(error(v2).find("/x/sweep.json: version 2 is not 1"), std::string::npos) << error(v2);
    EXPECT_NE(error("{}").find("/x/sweep.json: 'version' is missing"), std::string::npos);
    EXPECT_NE(error("[1,").find("/x/sweep.json: not valid JSON"), std::string::npos);
    std::string status = good;
    status.replace(status.find("\"pending\""), 9, "\"paused\"");
    EXPECT_NE(error(status).find("'status' is 'paused'"), std::string::npos) << error(status);
    std::string id = good;
    id.replace(id.find("001-layers=1-seed=1"), 19, "../../etc");
    EXPECT_NE(error(id).find("run id '../../etc'"), std::string::npos) << error(id);
}

TEST(Stats, MeanSampleStdAndStudentInterval) {
    const Interval i = meanInterval({0.6, 0.7, 0.8});
    EXPECT_NEAR(i.mean, 0.7, 1e-12);
    EXPECT_NEAR(i.sd, 0.1, 1e-12);
    EXPECT_NEAR(i.low, 0.7 - 4.303 * 0.1 / std::sqrt(3.0), 1e-4);
    EXPECT_NEAR(i.high, 0.7 + 4.303 * 0.1 / std::sqrt(3.0), 1e-4);
    EXPECT_EQ(i.n, 3);
    const Interval one = meanInterval({0.42});
    EXPECT_EQ(one.sd, 0.0);
    EXPECT_EQ(one.low, 0.42);
    EXPECT_EQ(one.high, 0.42);
    EXPECT_NEAR(tQuantile975(1), 12.706, 1e-3);
    EXPECT_NEAR(tQuantile975(30), 2.042, 1e-3);
    // beyond the table, within 0.001 of the exact quantiles (scipy.stats.t.ppf(0.975, df))
    EXPECT_NEAR(tQuantile975(31), 2.0395, 1e-3);
    EXPECT_NEAR(tQuantile975(40), 2.0211, 1e-4);
    EXPECT_NEAR(tQuantile975(50), 2.0086, 1e-3);
    EXPECT_NEAR(tQuantile975(100), 1.9840, 1e-3);
    EXPECT_NEAR(tQuantile975(1000), 1.9623, 1e-3);
    EXPECT_EQ(meanInterval({}).n, 0);
}

}  // namespace
