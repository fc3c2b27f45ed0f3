// nopescope-cli reproduce end to end at its smoke scale (tiny models, a minute or less): every
// part runs as a sweep, report.md has every section with its tables and the commands, the
// figures are rendered when the window was built, a second invocation keeps what is done, and
// bad flags write nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

namespace {

using namespace nope::cli_test;

TEST_F(Cli, ReproduceSmokeWritesEverySection) {
    const fs::path dir = m_dir / "study";
    const Result r = run("reproduce --smoke --out " + dir.string());
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* part :
         {"init-addition", "init-reversal", "init-indexing", "init-ordering", "sizes",
          "init-scheme", "probes", "trained-addition", "trained-reversal"}) {
        EXPECT_TRUE(fs::exists(dir / part / "summary.csv")) << part;
    }
    const std::string report = slurp(dir / "report.md");
    for (const char* section :
         {"# NoPEScope study report", "LibTorch 1.13", "## Adjacency per layer",
          "| addition | 2 x 32 | init |", "| reversal | quick preset, 2 x 32 | init |",
          "| reversal | quick preset, 2 x 32 | trained (best checkpoint) |",
          "| indexing | 2 x 32 | init |", "## Init beside trained", "## Size sensitivity",
          "| 2 | 64 |", "## Init ablation", "| 8 | 0.2 |", "## Position probes",
          "| causal | cosine |", "| bidirectional | vector |", "## Controls at init",
          "| ordering | bidirectional | learned |", "## Parts, commands and wall time",
          "`nopescope-cli sweep --grid \"layers=1,2 dim=32,64\""}) {
        EXPECT_NE(report.find(section), std::string::npos) << section;
    }
    EXPECT_EQ(report.find("| - |"), std::string::npos) << "a missing cell:\n" << report;
    const fs::path window = fs::path(NOPESCOPE_CLI).parent_path() / "nopescope";
    if (fs::exists(window)) {  // the window is built: the figures are rendered and linked
        for (const char* figure : {"layers_by_task", "figure1_addition", "figure1_ordering",
                                   "sizes_layer1", "init_scheme_layer1"}) {
            EXPECT_TRUE(fs::exists(dir / "figures" / (std::string(figure) + ".png"))) << figure;
            EXPECT_TRUE(fs::exists(dir / "figures" / (std::string(figure) + ".svg"))) << figure;
            EXPECT_NE(report.find(std::string("figures/") + figure + ".png"), std::string::npos);
        }
    }
    // Again: every part is kept, nothing runs twice.
    const Result again = run("reproduce --smoke --no-figures --out " + dir.string());
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_NE(again.err.find("sizes is done, kept"), std::string::npos) << again.err;
    EXPECT_EQ(again.err.find("sweep of"), std::string::npos) << again.err;
}

TEST_F(Cli, ReproduceRefusesBadFlags) {
    const Result noOut = run("reproduce --smoke");
    EXPECT_EQ(noOut.status, 2);
    EXPECT_NE(noOut.err.find("--out: needed"), std::string::npos) << noOut.err;
    const Result bad = run("reproduce --seeds many --out " + (m_dir / "x").string());
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--seeds"), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(m_dir / "x"));
    const fs::path file = m_dir / "file";
    std::ofstream(file) << "x";
    const Result onFile = run("reproduce --smoke --out " + file.string());
    EXPECT_EQ(onFile.status, 2);
    EXPECT_NE(onFile.err.find("is a file"), std::string::npos) << onFile.err;
}

}  // namespace
