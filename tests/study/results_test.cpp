// Results of a sweep: run files read back, joined with probes, aggregated over seeds, written as
// sweep.csv and summary.csv; checked against hand-computed means and intervals.
#include <gtest/gtest.h>

#include <memory>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "common/test_folder.h"
#include "common/text.h"
#include "study/results.h"
#include "study_fixture.h"
#include "util/files.h"

namespace {

namespace fs = std::filesystem;
using namespace nope::study;

class Results : public ::testing::Test {
protected:
    void SetUp() override {
        m_folder = std::make_unique<nope::test::TestFolder>("study-test");
        m_dir = m_folder->path();
    }
    void TearDown() override { m_folder.reset(); }

    // An init-mode sweep over layers=1,2 and seeds 1..3; the run of layers=1, seed s has
    // adjacency 0.5 + 0.1 s at attn 1 (0.6, 0.7, 0.8) and 0.3 at the embedding.
    Manifest initSweep(bool probes) const {
        Manifest m = manifestOver("layers=1,2", {1, 2, 3}, RunStatus::Done);
        m.probes = probes;
        for (const SweepRun& run : m.runs) {
            std::ostringstream scores;
            scores << "point,layer,adjacency_mean,adjacency_std,norm_score,variance_score,samples\n"
                   << "embedding,0,0.300000,0.010000,0.5,0.5,8\n";
            const double base = run.settings[0].second == "1" ? 0.5 : 0.2;
            scores << "attn,1," << base + 0.1 * run.seed << ",0.02,0.5,0.5,8\n";
            nope::writeFileAtomic(runFolder(m_dir, run) / "analysis" / "scores.csv", scores.str());
            if (probes) {
                std::ostringstream p;
                p << "point,layer,feature,target,pearson_r,nrmse,control_r,control_nrmse,"
                     "train_strings,test_strings\n"
                  << "attn,1,norm,position," << 0.1 * run.seed << ",0.3,0,0,40,20\n"
                  << "attn,1,cosine,distance_to_last,0.9,0.1,0,0,40,20\n";
                nope::writeFileAtomic(runFolder(m_dir, run) / "probes" / "probes.csv", p.str());
            }
        }
        return m;
    }

    std::unique_ptr<nope::test::TestFolder> m_folder;
    fs::path m_dir;
};

using nope::test::lines;

TEST_F(Results, AggregatesOverSeedsWithStudentIntervals) {
    Manifest m = initSweep(false);
    m.runs[5].status = RunStatus::Failed;  // layers=2, seed 3: left out
    std::vector<std::string> problems;
    const SweepResults r = collectResults(m_dir, m, problems);
    EXPECT_TRUE(problems.empty());
    ASSERT_EQ(r.runs.size(), 5u);
    ASSERT_EQ(r.summary.size(), 4u);  // (layers 1, 2) x (embedding 0, attn 1)
    const SummaryRow& attn1 = r.summary[1];
    EXPECT_EQ(attn1.values, (std::vector<std::string>{"1"}));
    EXPECT_EQ(attn1.point, "attn");
    EXPECT_EQ(attn1.stage, "init");
    EXPECT_NEAR(attn1.adjacency.mean, 0.7, 1e-9);
    EXPECT_NEAR(attn1.adjacency.sd, 0.1, 1e-9);
    EXPECT_NEAR(attn1.adjacency.high - 0.7, 4.3027 * 0.1 / std::sqrt(3.0), 1e-6);
    EXPECT_EQ(attn1.adjacency.n, 3);
    const SummaryRow& attn2 = r.summary[3];  // 0.3 and 0.4
    EXPECT_NEAR(attn2.adjacency.mean, 0.35, 1e-9);
    EXPECT_NEAR(attn2.adjacency.sd, std::sqrt(0.005), 1e-9);
    EXPECT_NEAR(attn2.adjacency.low, 0.35 - 12.7062 * std::sqrt(0.005) / std::sqrt(2.0), 1e-6);
    EXPECT_EQ(attn2.adjacency.n, 2);
    EXPECT_EQ(r.summary[0].adjacency.sd, 0.0);  // the embedding's 0.3 every time

    writeResults(m_dir, r);
    const auto sweep = lines(nope::readFile(m_dir / "sweep.csv"));
    ASSERT_EQ(sweep.size(), 1u + 5u * 2u);
    EXPECT_EQ(sweep[0], "layers,seed,stage,point,layer,adjacency_mean,adjacency_std");
    EXPECT_EQ(sweep[2], "1,1,init,attn,1,0.600000,0.020000");
    const auto summary = lines(nope::readFile(m_dir / "summary.csv"));
    ASSERT_EQ(summary.size(), 5u);
    EXPECT_EQ(summary[0],
              "layers,stage,point,layer,adjacency_mean,adjacency_std_over_seeds,ci95_low,"
              "ci95_high,seeds");
    EXPECT_EQ(summary[2].substr(0, 37), "1,init,attn,1,0.700000,0.100000,0.451");
    EXPECT_EQ(summary[2].substr(summary[2].size() - 2), ",3");
}

TEST_F(Results, JoinsProbesOnPointAndLayer) {
    const Manifest m = initSweep(true);
    std::vector<std::string> problems;
    const SweepResults r = collectResults(m_dir, m, problems);
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(r.probeFeatures, (std::vector<std::string>{"norm", "cosine"}));  // the files' order
    const auto sweep = lines(sweepCsv(r));
    EXPECT_EQ(sweep[0],
              "layers,seed,stage,point,layer,adjacency_mean,adjacency_std,probe_norm_r,"
              "probe_norm_nrmse,probe_cosine_r,probe_cosine_nrmse");
    EXPECT_EQ(sweep[1], "1,1,init,embedding,0,0.300000,0.010000,,,,");  // not probed there
    EXPECT_EQ(sweep[2], "1,1,init,attn,1,0.600000,0.020000,0.100000,0.300000,0.900000,0.100000");
    const auto summary = lines(summaryCsv(r));
    EXPECT_NE(summary[0].find(",seeds,probe_norm_r_mean,probe_norm_nrmse_mean,"
                              "probe_cosine_r_mean,probe_cosine_nrmse_mean"),
              std::string::npos);
    EXPECT_EQ(summary[2].substr(summary[2].size() - 37), "3,0.200000,0.300000,0.900000,0.100000");
}

TEST_F(Results, ReadsTrainedRunsAndReportsUnreadableOnes) {
    Manifest m = initSweep(false);
    m.mode = SweepMode::Trained;
    m.runs.resize(2);
    for (const auto& run : m.runs) {
        nope::writeFileAtomic(runFolder(m_dir, run) / "final_scores.csv",
                              "stage,point,layer,adjacency_mean,adjacency_std,norm_score,"
                              "variance_score,samples\ninit,attn,1,0.5,0.1,0,0,8\n"
                              "trained,attn,1,0.9,0.05,0,0,8\n");
    }
    nope::writeFileAtomic(runFolder(m_dir, m.runs[0]) / "metrics.csv",
                          "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,"
                          "elapsed_s,eval_step\n0,nan,2.0,0.0,0,0,0,0\n10,1.0,1.0,45.5,0,0,0,10\n"
                          "20,0.5,0.9,40.0,0,0,0,20\n");
    std::vector<std::string> problems;
    const SweepResults r = collectResults(m_dir, m, problems);
    ASSERT_EQ(problems.size(), 1u);  // the second run has no metrics.csv
    EXPECT_NE(problems[0].find("002-layers=1-seed=2: "), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find("metrics.csv"), std::string::npos) << problems[0];
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].bestAccuracy, std::optional<double>(45.5));
    const auto sweep = lines(sweepCsv(r));
    EXPECT_EQ(sweep[0], "layers,seed,stage,point,layer,adjacency_mean,adjacency_std,best_accuracy");
    EXPECT_EQ(sweep[2], "1,1,trained,attn,1,0.900000,0.050000,45.500000");
    const auto summary = lines(summaryCsv(r));
    EXPECT_EQ(summary[0].substr(summary[0].size() - 24), "seeds,best_accuracy_mean");
    EXPECT_EQ(summary[2], "1,trained,attn,1,0.900000,0.000000,0.900000,0.900000,1,45.500000");
}

}  // namespace
