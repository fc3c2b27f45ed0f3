// What keeps a run folder whole: checkpoints sealed with a checksum (a changed byte is reported,
// never loaded), files written to a temporary name and renamed (a failed write leaves the old
// file), tables that drop a torn line and never hold a step twice.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <fstream>

#include "common/model_config.h"
#include "common/test_folder.h"
#include "common/text.h"
#include "run/run_catalog.h"
#include "run/run_folder.h"
#include "run/saved_model.h"
#include "training/checkpoint.h"
#include "util/error_text.h"
#include "util/files.h"
#include "util/zip_directory.h"
#include "util/zip_seal.h"

namespace nope {
namespace {

namespace fs = std::filesystem;

// A small checkpoint: a 1-layer model of width 16 and an AdamW that has taken one step.
std::string smallCheckpoint(const fs::path& path) {
    Gpt model(test::smallModelConfig(1, 2, 16, 16));
    std::vector<OptimizerParam> params;
    for (auto& item : model->named_parameters()) {
        params.push_back({item.key(), item.value(), false});
        item.value().mutable_grad() = torch::full_like(item.value(), 0.5);
    }
    AdamW optimizer(params, 0.9, 0.99, 0.1);
    optimizer.step(1e-3, 1.0);
    CheckpointState state;
    state.config = {{"task", "addition"}, {"model", model->config()}};
    state.batchRng = "rng";
    saveCheckpoint(path, *model, optimizer, state);
    return readFile(path);
}

void writeBytes(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(ZipSeal, AnyChangedByteBreaksTheSeal) {
    test::TestFolder folder("durability");
    const std::string sealed = smallCheckpoint(folder.path() / "c.pt");
    ASSERT_EQ(checkZipSeal(sealed), SealState::Valid);
    for (size_t at = 0; at < sealed.size(); ++at) {
        std::string changed = sealed;
        changed[at] = static_cast<char>(changed[at] ^ (1 << (at % 8)));
        ASSERT_NE(checkZipSeal(changed), SealState::Valid) << "byte " << at;
    }
    EXPECT_EQ(checkZipSeal(sealed.substr(0, sealed.size() - 1)), SealState::Missing);
    EXPECT_EQ(checkZipSeal("not a zip"), SealState::Missing);
    EXPECT_THROW(sealZipArchive("not a zip"), std::invalid_argument);
    EXPECT_THROW(sealZipArchive(sealed), std::invalid_argument);  // already has a comment
}

TEST(Checkpoint, EveryFlippedBitIsRejectedAsDamaged) {
    test::TestFolder folder("durability");
    const fs::path good = folder.path() / "good.pt";
    const std::string bytes = smallCheckpoint(good);
    Gpt model(test::smallModelConfig(1, 2, 16, 16));
    ASSERT_NO_THROW(loadWeights(good, *model));

    // about 400 places spread over the file, and every byte of its last 100 (the seal and the
    // ZIP directory's end)
    std::vector<size_t> places;
    for (size_t at = 0; at < bytes.size(); at += std::max<size_t>(1, bytes.size() / 400)) {
        places.push_back(at);
    }
    for (size_t at = bytes.size() - 100; at < bytes.size(); ++at) {
        places.push_back(at);
    }
    const fs::path flipped = folder.path() / "flipped.pt";
    int damaged = 0;
    for (size_t at : places) {
        std::string changed = bytes;
        changed[at] = static_cast<char>(changed[at] ^ (1 << (at % 8)));
        writeBytes(flipped, changed);
        try {
            loadWeights(flipped, *model);
            ADD_FAILURE() << "a bit flipped at byte " << at << " of " << bytes.size()
                          << " was loaded";
        } catch (const std::runtime_error& e) {
            const std::string message = e.what();
            EXPECT_EQ(message.find(flipped.string()), 0u) << message;
            EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;
            damaged += message.find("damaged checkpoint") != std::string::npos;
        }
        EXPECT_THROW(readCheckpointState(flipped), std::runtime_error) << "byte " << at;
        // and as a saved model (analyze --checkpoint, File > Open model): named as damaged
        try {
            loadSavedModel(flipped);
            ADD_FAILURE() << "opened as a saved model with byte " << at << " changed";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("damaged checkpoint"), std::string::npos)
                << e.what();
        }
    }
    EXPECT_GT(damaged, static_cast<int>(places.size()) / 2);  // most by the checksum itself
}

TEST(Checkpoint, AFileWithoutItsChecksumIsRejected) {
    test::TestFolder folder("durability");
    const std::string bytes = smallCheckpoint(folder.path() / "good.pt");
    const fs::path cut = folder.path() / "cut.pt";
    writeBytes(cut, bytes.substr(0, bytes.size() - 24));  // the seal taken off
    try {
        readCheckpointState(cut);
        ADD_FAILURE() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("damaged checkpoint"), std::string::npos) << e.what();
    }
}

// The fuzzer's finding: a sealed checkpoint whose data.pkl asks LibTorch's reader for 268 million
// memo slots (4 GB allocated before it reads on). The project's own pickle reader refuses the
// index first, and the file is reported as unreadable.
TEST(Checkpoint, ADamagedPickleLengthIsRefusedBeforeLibTorchReadsIt) {
    test::TestFolder folder("durability");
    std::string bytes = smallCheckpoint(folder.path() / "good.pt");
    bytes.resize(bytes.size() - 24);  // the seal off, and the comment's length with it
    bytes[bytes.size() - 2] = bytes[bytes.size() - 1] = 0;
    const std::vector<ZipRecord> records = readZipDirectory(bytes);
    const auto pickle = std::find_if(records.begin(), records.end(), [](const ZipRecord& r) {
        return r.name.size() > 9 && r.name.compare(r.name.size() - 9, 9, "/data.pkl") == 0;
    });
    ASSERT_NE(pickle, records.end());
    const size_t put = bytes.find(std::string("q\x00", 2), pickle->dataOffset);  // the first PUT
    ASSERT_LT(put, pickle->dataOffset + 64);
    bytes.replace(put, 5, std::string("r\x00\x00\x00\x10", 5));  // LONG_BINPUT 0x10000000
    const fs::path damaged = folder.path() / "damaged.pt";
    writeBytes(damaged, sealZipArchive(bytes));
    try {
        readCheckpointState(damaged);
        ADD_FAILURE() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("not a readable checkpoint"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("memo index 268435456 is beyond"), std::string::npos)
            << e.what();
    }
}

// A write that fails half-way (the file-size limit stands in for a full disk: the same short
// write, then EFBIG instead of ENOSPC) leaves the old file whole and no temporary file.
TEST(WriteFileAtomic, AFailedWriteKeepsTheOldFile) {
    test::TestFolder folder("durability");
    const fs::path file = folder.path() / "metrics.csv";
    writeFileAtomic(file, "old contents\n");

    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string message;
    try {
        writeFileAtomic(file, std::string(100000, 'x'));
    } catch (const std::runtime_error& e) {
        message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);

    EXPECT_NE(message.find("cannot write " + file.string()), std::string::npos) << message;
    EXPECT_EQ(readFile(file), "old contents\n");
    int entries = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(folder.path())) {
        ++entries;
    }
    EXPECT_EQ(entries, 1);  // no temporary file left
}

TEST(WriteFileAtomic, AFolderThatCannotBeCreatedIsNamed) {
    test::TestFolder folder("durability");
    writeFileAtomic(folder.path() / "a-file", "x");
    try {
        writeFileAtomic(folder.path() / "a-file" / "inside.csv", "y");
        ADD_FAILURE() << "written below a file";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find((folder.path() / "a-file").string()),
                  std::string::npos)
            << e.what();
    }
}

Snapshot tableRow(int step) {
    Snapshot s;
    s.step = step;
    s.eval.step = step;
    LayerScores row;
    row.point = CapturePoint::Attn;
    row.layer = 1;
    s.analysis.rows = {row};
    return s;
}

// The first `n` lines of `text`, each with its newline.
std::string firstLines(const std::string& text, size_t n) {
    size_t end = 0;
    for (size_t i = 0; i < n && end != std::string::npos; ++i) {
        end = text.find('\n', end);
        end = end == std::string::npos ? end : end + 1;
    }
    return text.substr(0, end);
}

std::vector<std::string> firstCells(const fs::path& file) {
    std::vector<std::string> cells;
    for (const auto& line : test::lines(readFile(file))) {
        cells.push_back(line.substr(0, line.find(',')));
    }
    return cells;
}

TEST(RunWriter, ASnapshotTakenAgainReplacesItsRows) {
    test::TestFolder folder("durability");
    RunWriter writer(folder.path());
    writer.add(tableRow(0));
    writer.add(tableRow(5));
    writer.add(tableRow(0));  // a run resumed from its checkpoint at step 0
    const std::vector<std::string> expected{"step", "0"};
    EXPECT_EQ(firstCells(folder.path() / "metrics.csv"), expected);
    EXPECT_EQ(firstCells(folder.path() / "adjacency.csv"), expected);
}

// Whatever a kill, a full disk or another version left in the tables, a resumed writer rebuilds
// them from the snapshot files up to its step: the same tables as a run never interrupted.
TEST(RunWriter, AResumedRunRebuildsItsTablesFromTheSnapshotFiles) {
    test::TestFolder folder("durability");
    const fs::path whole = folder.path() / "whole", resumed = folder.path() / "resumed";
    for (const auto& dir : {whole, resumed}) {
        RunWriter writer(dir);
        for (int step : {0, 5, 10}) {
            writer.add(tableRow(step));
        }
        if (dir == whole) {
            writer.add(tableRow(15));
        }
    }
    // torn and doubled rows at or before the resumed step, a table missing, leftovers
    writeBytes(resumed / "metrics.csv", std::string(kMetricsCsvHeader) + "\n0,,\n5,1.0\n5,1.0\n");
    fs::remove(resumed / "adjacency.csv");
    writeBytes(resumed / "snapshots" / "step_000015.json.tmp-99", "{");
    writeBytes(resumed / "checkpoint.pt.tmp-99", "x");

    RunWriter writer(resumed, /*continuing=*/true, /*fromStep=*/10);
    writer.add(tableRow(15));
    EXPECT_EQ(readFile(resumed / "metrics.csv"), readFile(whole / "metrics.csv"));
    EXPECT_EQ(readFile(resumed / "adjacency.csv"), readFile(whole / "adjacency.csv"));
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(resumed)) {
        names.push_back(entry.path().filename().string());
    }
    for (const auto& name : names) {
        EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
    }
}

// evaluations.csv holds every evaluation, also those between snapshots; a resumed writer keeps
// the file's whole rows up to its step, one per step, and the window's curves read them all.
TEST(RunWriter, EvaluationsBetweenSnapshotsAreKeptAcrossAResume) {
    test::TestFolder folder("durability");
    const fs::path whole = folder.path() / "whole", resumed = folder.path() / "resumed";
    for (const auto& dir : {whole, resumed}) {
        RunWriter writer(dir);
        for (int step = 0; step <= (dir == whole ? 20 : 25); step += 5) {
            Snapshot s = tableRow(step);
            s.eval.accuracy = step;
            s.eval.testLoss = 4.0 - 0.1 * step;
            writer.addEvaluation(s);
            if (step % 10 == 0) {
                writer.add(s);
            }
        }
    }
    const std::string written = readFile(resumed / "evaluations.csv");
    // a doubled row, a torn one and one of another format, all at or before the resumed step
    writeBytes(resumed / "evaluations.csv",
               written + firstLines(written, 3).substr(firstLines(written, 2).size()) + "15,1\n" +
                   "x,1,2,3,4,5,6\n");
    RunWriter writer(resumed, /*continuing=*/true, /*fromStep=*/15);
    EXPECT_EQ(firstCells(resumed / "evaluations.csv"),
              (std::vector<std::string>{"step", "0", "5", "10", "15"}));
    Snapshot s = tableRow(20);
    s.eval.accuracy = 20;
    s.eval.testLoss = 2.0;
    writer.addEvaluation(s);
    writer.add(s);
    EXPECT_EQ(readFile(resumed / "evaluations.csv"), readFile(whole / "evaluations.csv"));
    EXPECT_EQ(firstCells(resumed / "metrics.csv"),
              (std::vector<std::string>{"step", "0", "10", "20"}));

    const RunCurves curves = readRunCurves(resumed);
    EXPECT_EQ(curves.evalSteps, (std::vector<int>{0, 5, 10, 15, 20}));
    EXPECT_EQ(curves.evalAccuracy, (std::vector<double>{0, 5, 10, 15, 20}));
    ASSERT_EQ(curves.evalTestLoss.size(), 5u);
    EXPECT_NEAR(curves.evalTestLoss[1], 3.5, 1e-6);  // a step between snapshots
    EXPECT_TRUE(curves.problems.empty());

    // a file that cannot be read is named, and the curve is metrics.csv's
    writeBytes(resumed / "evaluations.csv", "step,loss\n5,1\n");
    const RunCurves damaged = readRunCurves(resumed);
    EXPECT_EQ(damaged.evalSteps, (std::vector<int>{0, 10, 20}));
    ASSERT_EQ(damaged.problems.size(), 1u);
    EXPECT_NE(damaged.problems[0].find("evaluations.csv"), std::string::npos)
        << damaged.problems[0];
    // a folder of a version without the file, resumed: metrics.csv's evaluations up to the
    // resume, the file's after it (and another layout's rows are not taken for this one's)
    RunWriter older(resumed, /*continuing=*/true, /*fromStep=*/20);
    EXPECT_EQ(firstCells(resumed / "evaluations.csv"), std::vector<std::string>{"step"});
    s = tableRow(25);
    s.eval.accuracy = 25;
    older.addEvaluation(s);
    EXPECT_EQ(readRunCurves(resumed).evalSteps, (std::vector<int>{0, 10, 20, 25}));
    older.writeConfig({{"task", "addition"}});  // what makes it a run for the run list
    EXPECT_EQ(summarizeRun(resumed).bestAccuracy, 25.0);

    // a step written twice with different numbers (a run stopped between a row and its
    // snapshot, then resumed before it): the row written last is kept
    const fs::path twice = folder.path() / "twice";
    fs::create_directories(twice / "snapshots");
    writeBytes(twice / "evaluations.csv", std::string(kEvaluationsCsvHeader) + "\n" +
                                              "0,,4.0,0.00,0,0,0.0\n5,,3.5,4.00,0,0,0.0\n" +
                                              "5,,3.4,6.00,0,0,0.0\n");
    RunWriter again(twice, /*continuing=*/true, /*fromStep=*/5);
    EXPECT_EQ(readFile(twice / "evaluations.csv"),
              std::string(kEvaluationsCsvHeader) + "\n0,,4.0,0.00,0,0,0.0\n5,,3.4,6.00,0,0,0.0\n");
}

// Rebuilt tables follow the steps, not the names' order (step_1000000.json sorts before
// step_100001.json), and a file whose name is not a step's, or whose content is another step's,
// adds no rows.
TEST(RunWriter, RebuiltTablesFollowTheStepsOfTheSnapshots) {
    test::TestFolder folder("durability");
    {
        RunWriter writer(folder.path());
        for (int step : {5, 100000, 1000000}) {
            writer.add(tableRow(step));
        }
    }
    const fs::path snapshots = folder.path() / "snapshots";
    fs::copy_file(snapshots / "step_000005.json", snapshots / "step_abc.json");
    fs::copy_file(snapshots / "step_000005.json", snapshots / "step_000007.json");
    RunWriter resumed(folder.path(), /*continuing=*/true, /*fromStep=*/2000000);
    EXPECT_EQ(firstCells(folder.path() / "metrics.csv"),
              (std::vector<std::string>{"step", "5", "100000", "1000000"}));
}

TEST(ErrorText, NoLibTorchBacktraceReachesAUser) {
    try {
        TORCH_CHECK(false, "the shapes differ");
    } catch (const std::exception& e) {
        ASSERT_NE(std::string(e.what()).find("Exception raised from"), std::string::npos);
        EXPECT_EQ(errorText(e), "the shapes differ");
        // and when another message wraps it
        EXPECT_EQ(withoutBacktrace("model.pt: " + std::string(e.what())),
                  "model.pt: the shapes differ");
    }
    try {
        const auto t = torch::empty({int64_t{1} << 45});  // 140 TB
        ADD_FAILURE() << "allocated " << t.numel() << " floats";
    } catch (const std::exception& e) {
        ASSERT_NE(std::string(e.what()).find("frame #0"), std::string::npos);
        const std::string text = errorText(e);
        EXPECT_EQ(text.find("out of memory: "), 0u) << text;
        EXPECT_NE(text.find("an allocation of 140737488.4 MB failed"), std::string::npos) << text;
        EXPECT_EQ(text.find("frame #"), std::string::npos) << text;
    }
    EXPECT_EQ(errorText(std::bad_alloc()).find("out of memory"), 0u);
}

}  // namespace
}  // namespace nope
