// nopescope-cli end to end: run the built executable as a user would and check what it prints
// and writes.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "settings/settings.h"

namespace {

using namespace nope::cli_test;

constexpr const char* kTiny = "--layers 2 --dim 48 --heads 4 --samples 16 --threads 1";

TEST_F(Cli, InfoReportsTheDefaultParameterCount) {
    const Result text = run("info");
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("parameters: 10658688"), std::string::npos) << text.out;
    const Result json = run("info --json");
    ASSERT_EQ(json.status, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j.at("parameters").get<int64_t>(), 10658688);
    EXPECT_EQ(j.at("model").at("n_layer").get<int>(), 6);
    EXPECT_EQ(nlohmann::json::parse(run("info --pe learned --json").out).at("parameters"),
              10658688 + 256 * 384);
}

TEST_F(Cli, AnalyzeWritesScoresAndMatrices) {
    const fs::path out = m_dir / "scores";
    const Result r =
        run(std::string("analyze --task ordering --point all ") + kTiny + " --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("attn_in"), std::string::npos) << r.out;

    std::istringstream csv(slurp(out / "scores.csv"));
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "point,layer,adjacency_mean,adjacency_std,norm_score,variance_score,samples");
    int rows = 0;
    while (std::getline(csv, line)) {
        ++rows;
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), 6) << line;
        EXPECT_EQ(line.substr(line.rfind(',') + 1), "16");
    }
    EXPECT_EQ(rows, 1 + 3 * 2);  // embedding, then attn_in, attn, resid for 2 layers

    const auto json = nlohmann::json::parse(slurp(out / "scores.json"));
    EXPECT_EQ(json.at("task"), "ordering");
    EXPECT_EQ(json.at("seed"), 1337);
    EXPECT_EQ(json.at("model").at("n_embd"), 48);
    EXPECT_EQ(json.at("rows").size(), 7u);
    EXPECT_EQ(json.at("rows")[2].at("point"), "attn_in");

    const std::string matrix = slurp(out / "matrices" / "attn_layer2.csv");
    std::istringstream lines(matrix);
    int matrixRows = 0;
    while (std::getline(lines, line)) {
        ++matrixRows;
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), 18);
    }
    EXPECT_EQ(matrixRows, 19);  // ordering prompts are padded to 19 tokens
    EXPECT_TRUE(fs::exists(out / "matrices" / "embedding_layer0.csv"));
    for (const auto& entry : fs::recursive_directory_iterator(out)) {
        EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
    }
}

TEST_F(Cli, AnalyzeIsDeterministicBySeed) {
    const Result a = run(std::string("analyze --task addition --json ") + kTiny);
    const Result b = run(std::string("analyze --task addition --json ") + kTiny);
    const Result c = run(std::string("analyze --task addition --json --seed 7 ") + kTiny);
    ASSERT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(nlohmann::json::parse(a.out).at("rows"), nlohmann::json::parse(b.out).at("rows"));
    EXPECT_NE(nlohmann::json::parse(a.out).at("rows"), nlohmann::json::parse(c.out).at("rows"));
}

const std::string kNanogptCkpt = std::string(NOPESCOPE_TEST_DATA) + "/nanogpt_ckpt.pt";

TEST_F(Cli, AnalyzeReadsANanogptCheckpoint) {
    const Result r = run(
        "analyze --task reversal --samples 8 --threads 1 --point all --checkpoint " + kNanogptCkpt);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("model 2 layers x 24 wide, 2 heads"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("checkpoint " + kNanogptCkpt + " (nanogpt-ckpt, step 1)"),
              std::string::npos)
        << r.out;
    for (const char* row :
         {"embedding      0", "attn_in        2", "attn           2", "resid          2"}) {
        EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
    }

    const fs::path out = m_dir / "scores";
    const Result j = run("analyze --task reversal --samples 8 --threads 1 --json --checkpoint " +
                         kNanogptCkpt + " --out " + out.string());
    ASSERT_EQ(j.status, 0) << j.err;
    const auto json = nlohmann::json::parse(slurp(out / "scores.json"));
    EXPECT_EQ(json.at("checkpoint").at("file"), kNanogptCkpt);
    EXPECT_EQ(json.at("checkpoint").at("format"), "nanogpt-ckpt");
    EXPECT_EQ(json.at("checkpoint").at("step"), 1);  // its iter_num
    EXPECT_FALSE(json.contains("seed"));
    EXPECT_EQ(json.at("model").at("n_head"), 2);
}

TEST_F(Cli, AnalyzeRejectsBadCheckpointsAndWritesNothing) {
    const fs::path text = m_dir / "notes.pt";
    std::ofstream(text) << "not a model\n";
    const fs::path out = m_dir / "never";
    const Result bad = run("analyze --checkpoint " + text.string() + " --out " + out.string());
    EXPECT_EQ(bad.status, 1) << bad.err;
    EXPECT_NE(bad.err.find("nopescope-cli analyze: error: " + text.string() + ": "),
              std::string::npos)
        << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    EXPECT_FALSE(fs::exists(out));

    // learned positions: the context (16) comes with the file; written by the CLI's own training
    const fs::path shortRun = m_dir / "short";
    const Result trained =
        run("train --task addition --positional learned --context 16 --layers 1 --heads 2 --dim 8 "
            "--steps 1 --eval-every 1 --eval-samples 50 --analysis-samples 8 --train-size 500 "
            "--test-size 200 --probe-every 0 --threads 1 --out " +
            shortRun.string());
    ASSERT_EQ(trained.status, 0) << trained.err;
    const fs::path shortContext = shortRun / "weights.pt";
    const struct {
        std::string args;
        const char* mentions;
    } cases[] = {
        {"--layers 3 --checkpoint x", "--layers: not used with --checkpoint"},
        {"--seed 3 --checkpoint " + kNanogptCkpt, "--seed: not used with --checkpoint"},
        {"--checkpoint " + (m_dir / "missing.pt").string(), "does not exist (allowed: "},
        {"--checkpoint " + m_dir.string(), "is a folder without best.pt or checkpoint.pt"},
        {"--task reversal --heads 2 --checkpoint " + shortContext.string(),
         "--task: the reversal prompts have 22 tokens, longer than the saved model's context of "
         "16"},
    };
    for (const auto& c : cases) {
        const Result r = run("analyze " + c.args + " --out " + out.string());
        EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.args;
    }
    EXPECT_EQ(run("analyze --task addition --samples 4 --threads 1 --heads 2 --checkpoint " +
                  shortContext.string())
                  .status,
              0);  // addition prompts (9 tokens) fit
}

TEST_F(Cli, BadFlagsNameTheFlagAndWriteNothing) {
    const struct {
        const char* args;
        const char* mentions;
    } cases[] = {
        {"--task sorting",
         "--task: 'sorting' is not allowed (allowed: addition, reversal, "
         "indexing, ordering)"},
        {"--dim 100", "--dim: 100 is not divisible by --heads (6)"},
        {"--init normal --init-std 0",
         "--init-std: 0 is outside the allowed numbers greater than 0"},
        {"--init normal --init-std -1", "--init-std"},
        {"--samples 0", "--samples: 0 is outside the allowed 1 to 10000"},
        {"--point attn,bogus", "--point: 'bogus' is not allowed"},
        {"--layers abc", "--layers: 'abc' is not an integer"},
        {"--init-mean x", "--init-mean: 'x' is not a number"},
        {"--init-std 0.1", "--init-std: only used with --init normal"},
        {"--frobnicate 3", "unknown flag --frobnicate"},
        {"--samples", "--samples: needs a value"},
    };
    for (const auto& c : cases) {
        const fs::path out = m_dir / "never";
        const Result r = run(std::string("analyze ") + c.args + " --out " + out.string());
        EXPECT_EQ(r.status, 2) << c.args;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.args;
    }
    EXPECT_EQ(run("frobnicate").status, 2);
    EXPECT_EQ(run("info --heads 0").status, 2);
}

constexpr const char* kTinyTrain =
    "--task indexing --layers 1 --dim 32 --heads 2 --steps 20 --eval-every 10 --snapshot-every 10 "
    "--eval-samples 50 --analysis-samples 8 --train-size 500 --test-size 200 --threads 1";

TEST_F(Cli, TrainWritesTheRunFolderAndResumes) {
    const fs::path folder = m_dir / "run";
    const Result r = run(std::string("train ") + kTinyTrain + " --out " + folder.string());
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("step     10/20"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("init"), std::string::npos);
    EXPECT_NE(r.out.find("trained"), std::string::npos);
    for (const char* file : {"config.json", "metrics.csv", "evaluations.csv", "adjacency.csv",
                             "final_scores.csv", "checkpoint.pt", "best.pt", "weights.pt",
                             "snapshots/step_000000.json", "snapshots/step_000020.json"}) {
        EXPECT_TRUE(fs::exists(folder / file)) << file;
    }
    const auto metrics = lines(slurp(folder / "metrics.csv"));
    ASSERT_EQ(metrics.size(), 4u);  // header, steps 0, 10, 20
    EXPECT_EQ(metrics[0],
              "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s,eval_step");
    EXPECT_EQ(metrics[3].substr(0, 3), "20,");
    const auto evaluations = lines(slurp(folder / "evaluations.csv"));
    ASSERT_EQ(evaluations.size(), 4u);  // header, steps 0, 10, 20
    EXPECT_EQ(evaluations[0],
              "step,train_loss,test_loss,accuracy,learning_rate,tokens_per_s,elapsed_s");
    EXPECT_EQ(evaluations[3].substr(0, 3), "20,");
    const auto adjacency = lines(slurp(folder / "adjacency.csv"));
    EXPECT_EQ(adjacency[0], "step,point,layer,mean,std");
    EXPECT_EQ(adjacency.size(), 1u + 3u * (1u + 3u * 1u));  // 3 snapshots x (embedding + 3 points)
    const auto finals = lines(slurp(folder / "final_scores.csv"));
    EXPECT_EQ(finals[0],
              "stage,point,layer,adjacency_mean,adjacency_std,norm_score,variance_score,samples");
    EXPECT_EQ(finals[1].substr(0, 15), "init,embedding,");
    const auto probes = lines(slurp(folder / "probes.csv"));  // the quick preset probes
    ASSERT_GE(probes.size(), 2u);
    EXPECT_EQ(probes[0].substr(0, 17), "step,point,layer,");
    EXPECT_EQ(probes[1].substr(0, 2), "0,");  // at init
    const auto config = nlohmann::json::parse(slurp(folder / "config.json"));
    EXPECT_EQ(config.at("task"), "indexing");
    EXPECT_EQ(config.at("preset"), "quick");
    EXPECT_EQ(config.at("train").at("steps"), 20);

    const Result again = run("train --resume " + folder.string() + " --steps 30 --threads 1");
    ASSERT_EQ(again.status, 0) << again.err << again.out;
    const auto resumed = lines(slurp(folder / "metrics.csv"));
    ASSERT_EQ(resumed.size(), 5u);
    EXPECT_EQ(resumed[3], metrics[3]);  // the first run's rows are kept
    EXPECT_EQ(resumed[4].substr(0, 3), "30,");
    const auto evaluationsResumed = lines(slurp(folder / "evaluations.csv"));
    ASSERT_EQ(evaluationsResumed.size(), 5u);
    EXPECT_EQ(evaluationsResumed[3], evaluations[3]);
    EXPECT_EQ(evaluationsResumed[4].substr(0, 3), "30,");
    EXPECT_TRUE(fs::exists(folder / "snapshots/step_000030.json"));
    // elapsed_s is the run's wall time: the checkpoint carries it, the resumed rows go on from it
    auto elapsed = [](const std::string& row) {
        std::vector<std::string> cells;
        std::stringstream in(row);
        for (std::string cell; std::getline(in, cell, ',');) {
            cells.push_back(cell);
        }
        return std::stod(cells.at(6));
    };
    EXPECT_GT(elapsed(resumed[4]), elapsed(metrics[3])) << resumed[3] << "\n" << resumed[4];
    EXPECT_GT(elapsed(evaluationsResumed[4]), elapsed(evaluations[3]));

    const Result analysed = run("analyze --task indexing --samples 8 --threads 1 --checkpoint " +
                                folder.string());  // the run's best checkpoint
    ASSERT_EQ(analysed.status, 0) << analysed.err;
    EXPECT_NE(analysed.out.find("best.pt (nopescope-checkpoint, step "), std::string::npos)
        << analysed.out;

    EXPECT_EQ(run("train --resume " + folder.string() + " --lr 0.1").status, 2);
    EXPECT_EQ(run(std::string("train ") + kTinyTrain + " --out " + folder.string()).status, 2);
}

TEST_F(Cli, TrainRejectsBadFlagsAndWritesNothing) {
    const struct {
        const char* args;
        const char* mentions;
    } cases[] = {
        {"--objective words",
         "--objective: 'words' is not allowed (allowed: lm, answer, masked, next)"},
        {"--precision fp16", "--precision: 'fp16' is not allowed (allowed: fp32, bf16)"},
        {"--device cuda", "--device: cuda is not available"},
        {"--preset slow", "--preset: 'slow' is not allowed (allowed: quick, cpu, paper)"},
        {"--lr 0", "--lr: 0 is outside the allowed"},
        {"--batch -3", "--batch: -3 is outside the allowed 1 to 65536"},
        {"--objective lm --window 300",
         "--window: 300 is more than the --context of 256 (allowed: up to it)"},
        {"--eval-samples 600", "--eval-samples: 600 is more than the --test-size of"},
    };
    for (const auto& c : cases) {
        const fs::path out = m_dir / "never";
        const Result r =
            run(std::string("train ") + kTinyTrain + " " + c.args + " --out " + out.string());
        if (std::string(c.args) == "--device cuda" && r.status == 0) {
            continue;  // a CUDA build of LibTorch on a machine with a GPU accepts it
        }
        EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.args;
    }
    EXPECT_EQ(run("train --resume " + (m_dir / "nothing").string()).status, 2);
}

constexpr const char* kTinyProbe =
    "probe --layers 2 --dim 32 --heads 2 --threads 1 --preset fast --epochs 2 "
    "--train-strings 40 --test-strings 20";

TEST_F(Cli, ProbeWritesTablesAndPredictions) {
    const fs::path out = m_dir / "probes";
    const Result r =
        run(std::string(kTinyProbe) + " --features cosine,vector --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("| cosine"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("attn           2"), std::string::npos) << r.out;
    const auto probes = lines(slurp(out / "probes.csv"));
    ASSERT_EQ(probes.size(), 1u + 3u * 2u);  // embedding, attn 1, attn 2; two features
    EXPECT_EQ(probes[0],
              "point,layer,feature,target,pearson_r,nrmse,control_r,control_nrmse,train_strings,"
              "test_strings");
    EXPECT_EQ(probes[1].substr(0, 28), "embedding,0,vector,position,");
    EXPECT_NE(probes[2].find(",cosine,distance_to_last,"), std::string::npos) << probes[2];
    EXPECT_EQ(probes[1].substr(probes[1].size() - 6), ",40,20");
    const auto predictions = lines(slurp(out / "predictions.csv"));
    EXPECT_EQ(predictions[0], "point,layer,feature,true,predicted");
    EXPECT_EQ(predictions.size(), 1u + 6u * 20u * 16u);  // every test position of every probe
    const auto json = nlohmann::json::parse(slurp(out / "probes.json"));
    EXPECT_EQ(json.at("probe").at("train_chars"), "5678");
    EXPECT_EQ(json.at("seed"), 1337);
    EXPECT_EQ(json.at("rows").size(), 6u);

    // deterministic by seed
    const Result a = run(std::string(kTinyProbe) + " --features norm --json --probe-seed 4");
    const Result b = run(std::string(kTinyProbe) + " --features norm --json --probe-seed 4");
    ASSERT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(nlohmann::json::parse(a.out).at("rows"), nlohmann::json::parse(b.out).at("rows"));
}

TEST_F(Cli, ProbeReadsANanogptCheckpoint) {
    const Result r =
        run("probe --threads 1 --preset fast --epochs 2 --train-strings 40 --test-strings 20 "
            "--features cosine --checkpoint " +
            std::string(NOPESCOPE_TEST_DATA) + "/nanogpt_ckpt.pt --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("checkpoint").at("format"), "nanogpt-ckpt");
    EXPECT_EQ(j.at("rows").size(), 3u);  // embedding and two attn layers
}

TEST_F(Cli, ProbeRejectsBadFlagsAndWritesNothing) {
    const struct {
        const char* args;
        const char* mentions;
    } cases[] = {
        {"--test-chars 1235", "--probe-test-chars: '5' is also a training character"},
        {"--length 300", "--probe-length: 300 is longer than the model's --context of 256"},
        {"--probe-length many", "--probe-length: 'many' is not an integer"},
        {"--features speed", "--probe-features: 'speed'"},
        {"--probe-layers 6", "--probe-layers: 6 needs 5 hidden widths"},
        {"--probe-widths 64,0", "--probe-widths: 0 is outside the allowed up to 8 integers"},
        {"--activations selu", "--probe-activations: 1 given, the probe has 3 hidden layers"},
        {"--probe-train-chars 5%5", "--probe-train-chars: '5' appears twice"},
        {"--checkpoint /no/such/file.pt", "--layers: not used with --checkpoint"},
    };
    for (const auto& c : cases) {
        const fs::path out = m_dir / "never";
        const Result r = run(std::string(kTinyProbe) + " " + c.args + " --out " + out.string());
        EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.args;
    }
    const Result missing = run("probe --checkpoint /no/such/file.pt");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("--checkpoint: '/no/such/file.pt' does not exist"),
              std::string::npos)
        << missing.err;
}

// Every setting of the table is a flag of the commands that take its section, with its help,
// its allowed values and the command's default.
TEST_F(Cli, EverySettingIsAFlagWithItsHelp) {
    using namespace nope;
    using S = SettingSection;
    const struct {
        const char* command;
        std::vector<const Setting*> settings;
    } commands[] = {
        {"info", settingsIn({S::Model, S::Init})},
        {"analyze", settingsIn({S::Model, S::Init})},
        {"probe", settingsIn({S::Model, S::Init, S::Probe})},
        {"train", settingsIn({S::Model, S::Init, S::Training, S::Data, S::Analysis, S::Probe})},
    };
    for (const auto& c : commands) {
        const Result help = run(std::string(c.command) + " --help");
        ASSERT_EQ(help.status, 0) << c.command;
        for (const Setting* s : c.settings) {
            const std::string flag = (s->type == SettingType::Switch ? "--[no-]" : "--") + s->name;
            size_t at = help.out.find("\n  " + flag + " ");
            if (at == std::string::npos) {
                at = help.out.find("\n  " + flag + "\n");  // a long flag, help on the next line
            }
            ASSERT_NE(at, std::string::npos) << c.command << " lacks " << flag;
            const std::string line = help.out.substr(at, help.out.find("\n  --", at + 1) - at);
            EXPECT_NE(line.find(renderForCli(s->help).substr(0, 20)), std::string::npos)
                << c.command << ": " << line;
            if (s->type != SettingType::Switch) {
                EXPECT_NE(line.find("(" + renderForCli(s->allowed) + ")"), std::string::npos)
                    << c.command << ": " << line;
            }
        }
    }
    // Older names still work; errors use the canonical name.
    const Result old = run("info --pe learned --dim 100");
    EXPECT_EQ(old.status, 2);
    EXPECT_NE(old.err.find("--dim: 100 is not divisible by --heads (6)"), std::string::npos)
        << old.err;
}

// --check (what the sweep runs before anything): every flag parsed and checked, no work, no file
// (train's timing off with --check-time 0, as the sweep runs it).
TEST_F(Cli, CheckParsesAndChecksWithoutDoingAnyWork) {
    const fs::path out = m_dir / "never";
    for (const std::string& command : {std::string("analyze ") + kTiny, std::string(kTinyProbe),
                                       std::string("train --check-time 0 ") + kTinyTrain}) {
        const Result ok = run(command + " --check --out " + out.string());
        EXPECT_EQ(ok.status, 0) << command << "\n" << ok.err;
        EXPECT_EQ(ok.out, "") << command;
        EXPECT_FALSE(fs::exists(out)) << command;
        const Result bad = run(command + " --check --dim 33 --out " + out.string());
        EXPECT_EQ(bad.status, 2) << command;
        EXPECT_NE(bad.err.find("--dim: 33 is not divisible by --heads"), std::string::npos)
            << command << "\n"
            << bad.err;
    }
}

// train --check prints the plan and the run's estimated time, and still writes nothing.
TEST_F(Cli, TrainCheckPrintsThePlanAndTheEstimate) {
    const fs::path out = m_dir / "never";
    const Result r = run(std::string("train ") + kTinyTrain +
                         " --probe-every 0 --check --check-time 0.5 --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("plan: batch 512 in one piece (--micro-batches 0: as few as fit in "
                         "memory)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("memory: about "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" available"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the first a warm-up, times 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("estimate: about "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" on this machine (20 steps at "), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
    // set by hand: the parts and their rows
    const Result parts =
        run(std::string("train ") + kTinyTrain +
            " --probe-every 0 --micro-batches 3 --check --check-time 0.2 --out " + out.string());
    ASSERT_EQ(parts.status, 0) << parts.err;
    EXPECT_NE(parts.out.find("plan: batch 512 in 3 micro-batches of up to 171 rows, gradients "
                             "accumulated (set by --micro-batches)"),
              std::string::npos)
        << parts.out;
    const Result tooMany = run(std::string("train ") + kTinyTrain +
                               " --micro-batches 600 --check --out " + out.string());
    EXPECT_EQ(tooMany.status, 2);
    EXPECT_NE(tooMany.err.find("--micro-batches: 600 is more than the --batch of 512"),
              std::string::npos)
        << tooMany.err;
}

TEST_F(Cli, HelpOnEveryCommand) {
    for (const char* command : {"info", "analyze", "probe", "train", "bench", "sweep"}) {
        const Result r = run(std::string(command) + " --help");
        EXPECT_EQ(r.status, 0) << command;
        EXPECT_NE(r.out.find("usage: nopescope-cli " + std::string(command)), std::string::npos);
    }
    const Result top = run("--help");
    EXPECT_EQ(top.status, 0);
    EXPECT_NE(top.out.find("analyze"), std::string::npos);
}

}  // namespace
