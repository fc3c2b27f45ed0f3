// nopescope-cli bench end to end: the throughput, the machine's matrix-product rate beside the
// step's, and the profile of where a step's time goes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

namespace {

using namespace nope::cli_test;

TEST_F(Cli, BenchPrintsThroughputAsJson) {
    const Result r =
        run("bench --layers 1 --dim 32 --heads 2 --steps 2 --warmup 1 "
            "--analysis-samples 4 --threads 1 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j.at("fp32_tokens_per_s").get<double>(), 0.0);
    EXPECT_GT(j.at("bf16_tokens_per_s").get<double>(), 0.0);
    EXPECT_GT(j.at("analysis_ms").get<double>(), 0.0);
    EXPECT_GT(j.at("projection_ms").get<double>(), 0.0);
    EXPECT_GT(j.at("analysis_forward_ms").get<double>(), 0.0);
    EXPECT_GE(j.at("analysis_scores_ms").get<double>(), 0.0);
    EXPECT_LE(j.at("analysis_forward_ms").get<double>() + j.at("projection_ms").get<double>(),
              j.at("analysis_ms").get<double>() * 1.5);  // parts of it (medians of 5)
    EXPECT_LE(j.at("analysis_fastest_ms").get<double>(), j.at("analysis_ms").get<double>());
    // the snapshot in bf16 too (train --snapshot-precision bf16)
    for (const char* key : {"analysis_bf16_ms", "analysis_bf16_forward_ms",
                            "analysis_bf16_projection_ms", "analysis_bf16_fastest_ms"}) {
        EXPECT_GT(j.at(key).get<double>(), 0.0) << key;
    }
    EXPECT_GE(j.at("analysis_bf16_scores_ms").get<double>(), 0.0);
    // emulated where the CPU has no bf16 instructions (model/fast_ops.h)
    const std::string products = j.at("bf16_products");
    EXPECT_TRUE(products == "native" || products == "emulated") << products;
    // the model's FLOP rate beside the machine's matrix-product rate
    for (const char* key :
         {"fp32_gemm_gflops", "bf16_gemm_gflops", "fp32_model_gflops", "bf16_model_gflops"}) {
        EXPECT_GT(j.at(key).get<double>(), 0.0) << key;
    }
    EXPECT_NEAR(j.at("bf16_fraction_of_gemm").get<double>(),
                j.at("bf16_model_gflops").get<double>() / j.at("bf16_gemm_gflops").get<double>(),
                1e-9);
    const Result quick =
        run("bench --layers 1 --dim 32 --heads 2 --steps 1 --warmup 0 --analysis-samples 2 "
            "--no-gemm --dropout 0 --profile 1 --json");
    ASSERT_EQ(quick.status, 0) << quick.err;
    const auto q = nlohmann::json::parse(quick.out);
    EXPECT_FALSE(q.contains("fp32_gemm_gflops"));
    EXPECT_GT(q.at("fp32_model_gflops").get<double>(), 0.0);
    EXPECT_EQ(q.at("model").at("dropout"), 0.0);
    EXPECT_FALSE(q.at("bf16_profile").at("categories").empty());  // where the step's time goes
    EXPECT_EQ(q.at("fp32_profile").at("steps"), 1);
    // and where an analysis snapshot's goes: the forward pass's products among it
    const auto& analysis = q.at("analysis_profile");
    EXPECT_EQ(analysis.at("steps"), 1);
    bool sawProducts = false;
    for (const auto& c : analysis.at("categories")) {
        sawProducts |= c.at("name") == "matrix products" && c.at("ms_per_step").get<double>() > 0.0;
    }
    EXPECT_TRUE(sawProducts);
}

}  // namespace
