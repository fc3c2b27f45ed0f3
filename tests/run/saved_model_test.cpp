// Saved models: nanoGPT-style files written by PyTorch (tests/data, made by
// tools/make_nanogpt_checkpoint) compute what PyTorch computed, survive the tool's own formats,
// and bad files give errors that name the file and the problem.
#include <gtest/gtest.h>

#include <memory>

#include <caffe2/serialize/inline_container.h>
#include <torch/serialize.h>

#include <filesystem>
#include <fstream>

#include "analysis/analyzer.h"
#include "common/test_folder.h"
#include "run/saved_model.h"
#include "training/checkpoint.h"
#include "util/files.h"

namespace nope {
namespace {

namespace fs = std::filesystem;

const fs::path kData = NOPESCOPE_TEST_DATA;
const fs::path kCkpt = kData / "nanogpt_ckpt.pt";
const fs::path kStateDict = kData / "nanogpt_state_dict.pt";

class SavedModelTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_folder = std::make_unique<test::TestFolder>("saved-model");
        m_dir = m_folder->path();
    }
    void TearDown() override { m_folder.reset(); }

    // The message of the std::runtime_error that loading `path` throws ("" when it loads).
    static std::string loadError(const fs::path& path, int heads = 0) {
        try {
            loadSavedModel(path, {heads});
        } catch (const std::runtime_error& e) {
            return e.what();
        }
        return "";
    }

    // Writes `weights` as LibTorch's pickle_save does (the format of the tool's weights.pt).
    fs::path writeDict(const std::string& name, const c10::Dict<std::string, at::Tensor>& weights) {
        const std::vector<char> bytes = torch::pickle_save(c10::IValue(weights));
        writeFileAtomic(m_dir / name, std::string_view(bytes.data(), bytes.size()));
        return m_dir / name;
    }

    std::unique_ptr<test::TestFolder> m_folder;
    fs::path m_dir;
};

c10::Dict<std::string, at::Tensor> weightsOf(GptImpl& model) {
    c10::Dict<std::string, at::Tensor> weights;
    for (const auto& item : model.named_parameters()) {
        weights.insert(item.key(), item.value().detach().clone());
    }
    return weights;
}

std::vector<float> flat(const torch::Tensor& t) {
    const auto c = t.contiguous().to(torch::kFloat);
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

void expectNear(const std::vector<float>& actual, const nlohmann::json& expected, double tol) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
        ASSERT_NEAR(actual[i], expected[i].get<double>(), tol) << "at " << i;
    }
}

// Fixed prompts over the whole vocabulary: 6 prompts of 16 tokens.
torch::Tensor somePrompts() {
    torch::manual_seed(7);
    return torch::randint(96, {6, 16}, torch::kLong);
}

void expectSameAnalysis(const Analysis& a, const Analysis& b) {
    ASSERT_EQ(a.rows.size(), b.rows.size());
    for (size_t i = 0; i < a.rows.size(); ++i) {
        EXPECT_NEAR(a.rows[i].adjacencyMean, b.rows[i].adjacencyMean, 1e-6) << i;
        EXPECT_NEAR(a.rows[i].adjacencyStd, b.rows[i].adjacencyStd, 1e-6) << i;
        EXPECT_NEAR(a.rows[i].normScore, b.rows[i].normScore, 1e-6) << i;
        EXPECT_NEAR(a.rows[i].varianceScore, b.rows[i].varianceScore, 1e-6) << i;
    }
}

TEST_F(SavedModelTest, NanogptCheckpointComputesWhatPyTorchComputed) {
    SavedModel saved = loadSavedModel(kCkpt);
    EXPECT_EQ(saved.format, "nanogpt-ckpt");
    EXPECT_EQ(saved.file, kCkpt);
    EXPECT_EQ(saved.config.nLayer, 2);
    EXPECT_EQ(saved.config.nHead, 2);  // from model_args
    EXPECT_EQ(saved.config.nEmbd, 24);
    EXPECT_EQ(saved.config.blockSize, 32);
    EXPECT_FALSE(saved.config.bias);
    EXPECT_EQ(saved.config.positional, PositionalEncoding::None);
    EXPECT_FALSE(saved.model->is_training());
    EXPECT_EQ(saved.describe().at("format"), "nanogpt-ckpt");
    EXPECT_EQ(saved.step, 1);  // its iter_num
    EXPECT_TRUE(saved.task.empty());

    const auto reference = nlohmann::json::parse(readFile(kData / "nanogpt_reference.json"));
    const double tol = reference.at("tolerance").get<double>();
    const auto tokens =
        torch::tensor(reference.at("tokens").get<std::vector<std::vector<int64_t>>>()[0],
                      torch::kLong)
            .unsqueeze(0);  // (1, 12)
    torch::NoGradGuard noGrad;
    HiddenStates capture;
    capture.wanted = CaptureSet{CapturePoint::Attn};
    const auto hidden = saved.model->forward(tokens, &capture, Head::None);  // (1, T, C)
    expectNear(flat(capture.attn[0][0]), reference.at("attn_layer1_prompt0"), tol);
    expectNear(flat(hidden[0]), reference.at("hidden_before_ln_f_prompt0"), tol);
}

TEST_F(SavedModelTest, PlainStateDictNeedsTheHeadCount) {
    const std::string error = loadError(kStateDict);
    EXPECT_EQ(error.rfind(kStateDict.string() + ": ", 0), 0u) << error;
    EXPECT_NE(error.find("cannot be read from a plain state dict; give it with --heads"),
              std::string::npos)
        << error;

    SavedModel plain = loadSavedModel(kStateDict, {/*heads=*/2});
    EXPECT_EQ(plain.format, "state-dict");
    EXPECT_EQ(plain.config.nHead, 2);
    EXPECT_EQ(plain.config.blockSize, 256);  // NoPE and no model_args: the default context
    SavedModel ckpt = loadSavedModel(kCkpt, {/*heads=*/6});  // the file's model_args win
    EXPECT_EQ(ckpt.config.nHead, 2);
    const auto a = plain.model->named_parameters(), b = ckpt.model->named_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (const auto& item : a) {
        EXPECT_TRUE(torch::equal(item.value(), b[item.key()])) << item.key();
    }
}

TEST_F(SavedModelTest, TheToolsOwnFormatsGiveTheSameAnalysis) {
    SavedModel nano = loadSavedModel(kCkpt);
    const auto tokens = somePrompts();
    AnalysisOptions options;
    options.points = CaptureSet{CapturePoint::Embedding, CapturePoint::Attn, CapturePoint::Resid};
    const Analysis expected = analyze(*nano.model, tokens, options);

    std::vector<OptimizerParam> params;
    for (const auto& item : nano.model->named_parameters()) {
        params.push_back({item.key(), item.value(), false});
    }
    AdamW optimizer(params, 0.9, 0.95, 0.1);
    CheckpointState state;
    state.config = {
        {"task", "reversal"}, {"model", nano.config}, {"train", nlohmann::json::object()}};
    state.step = 300;
    const fs::path run = m_dir / "run";
    saveCheckpoint(run / "checkpoint.pt", *nano.model, optimizer, state);
    saveWeightsForPython(m_dir / "weights.pt", *nano.model);

    SavedModel checkpoint = loadSavedModel(run);  // a run folder without best.pt
    EXPECT_EQ(checkpoint.file, run / "checkpoint.pt");
    EXPECT_EQ(checkpoint.format, "nopescope-checkpoint");
    EXPECT_EQ(checkpoint.step, 300);  // the model names its own step and task
    EXPECT_EQ(checkpoint.task, "reversal");
    EXPECT_EQ(checkpoint.describe().at("step"), 300);
    expectSameAnalysis(analyze(*checkpoint.model, tokens, options), expected);

    fs::copy_file(run / "checkpoint.pt", run / "best.pt");
    EXPECT_EQ(loadSavedModel(run).file, run / "best.pt");  // the best checkpoint wins
    fs::copy_file(m_dir / "weights.pt", run / "weights.pt");

    SavedModel weights = loadSavedModel(m_dir / "weights.pt", {/*heads=*/2});
    EXPECT_EQ(weights.format, "nopescope-weights");
    EXPECT_EQ(weights.step, -1);  // no best.pt beside it: the file does not say
    SavedModel besideBest = loadSavedModel(run / "weights.pt", {/*heads=*/2});
    EXPECT_EQ(besideBest.step, 300);  // the best checkpoint's weights, from its best.pt
    expectSameAnalysis(analyze(*weights.model, tokens, options), expected);
}

TEST_F(SavedModelTest, WeightsInARunFolderTakeItsConfig) {
    ModelConfig config;
    config.nLayer = 1;
    config.nHead = 3;
    config.nEmbd = 12;
    config.positional = PositionalEncoding::Sinusoidal;  // nothing in the weights shows it
    Gpt model(config);
    saveWeightsForPython(m_dir / "weights.pt", *model);
    writeFileAtomic(m_dir / "config.json", nlohmann::json{{"model", config}}.dump());
    SavedModel saved = loadSavedModel(m_dir / "weights.pt");
    EXPECT_EQ(saved.config.nHead, 3);
    EXPECT_EQ(saved.config.positional, PositionalEncoding::Sinusoidal);
}

TEST_F(SavedModelTest, HalfPrecisionWeightsLoadAsFloat32) {
    SavedModel nano = loadSavedModel(kCkpt);
    for (const auto type : {torch::kBFloat16, torch::kHalf}) {
        auto weights = weightsOf(*nano.model);
        for (auto& item : weights) {
            item.setValue(item.value().to(type));
        }
        SavedModel saved = loadSavedModel(writeDict("half.pt", weights), {/*heads=*/2});
        for (const auto& item : saved.model->named_parameters()) {
            EXPECT_EQ(item.value().scalar_type(), torch::kFloat);
            EXPECT_TRUE(torch::equal(item.value(), weights.at(item.key()).to(torch::kFloat)))
                << item.key();
        }
    }
}

TEST_F(SavedModelTest, BadWeightsNameTheKeyAndTheShapes) {
    SavedModel nano = loadSavedModel(kCkpt);
    auto unknown = weightsOf(*nano.model);
    unknown.insert("transformer.h.0.attn.c_extra.weight", torch::zeros({2}));
    const std::string e1 = loadError(writeDict("unknown.pt", unknown), 2);
    EXPECT_EQ(e1.rfind((m_dir / "unknown.pt").string() + ": ", 0), 0u) << e1;
    EXPECT_NE(e1.find("unknown weight transformer.h.0.attn.c_extra.weight"), std::string::npos)
        << e1;

    auto shape = weightsOf(*nano.model);
    shape.insert_or_assign("transformer.h.1.mlp.c_fc.weight", torch::zeros({96, 20}));
    const std::string e2 = loadError(writeDict("shape.pt", shape), 2);
    EXPECT_NE(
        e2.find((m_dir / "shape.pt").string() + ": weight transformer.h.1.mlp.c_fc.weight "
                                                "has shape [96, 20], the model expects [96, 24]"),
        std::string::npos)
        << e2;

    auto missing = weightsOf(*nano.model);
    ASSERT_EQ(missing.erase("transformer.ln_f.weight"), 1u);
    const std::string e3 = loadError(writeDict("missing.pt", missing), 2);
    EXPECT_NE(e3.find("missing weight transformer.ln_f.weight"), std::string::npos) << e3;

    auto vocab = weightsOf(*nano.model);
    vocab.insert_or_assign("transformer.wte.weight", torch::zeros({65, 24}));
    const std::string e4 = loadError(writeDict("vocab.pt", vocab), 2);
    EXPECT_NE(e4.find("transformer.wte.weight has shape [65, 24]"), std::string::npos) << e4;

    auto tiedHead = weightsOf(*nano.model);
    tiedHead.insert("lm_head.weight", torch::zeros({96, 23}));
    const std::string e5 = loadError(writeDict("head.pt", tiedHead), 2);
    EXPECT_NE(e5.find("weight lm_head.weight has shape [96, 23], the model expects [96, 24]"),
              std::string::npos)
        << e5;
}

TEST_F(SavedModelTest, DamagedOrForeignFilesGiveErrorsNamingTheFile) {
    const std::string bytes = readFile(kCkpt);
    std::vector<std::pair<std::string, std::string>> files = {
        {"truncated.pt", bytes.substr(0, bytes.size() / 2)},
        {"cut-short.pt", bytes.substr(0, bytes.size() - 100)},
        {"notes.txt", "these are not weights\n"},
        {"empty.pt", ""},
        {"legacy.pt", std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14)},
    };
    std::string noise(4096, '\0');
    for (size_t i = 0; i < noise.size(); ++i) {
        noise[i] = static_cast<char>((i * 2654435761u) >> 13);
    }
    files.emplace_back("noise.pt", noise);
    for (const auto& [name, content] : files) {
        writeFileAtomic(m_dir / name, content);
        const std::string error = loadError(m_dir / name, 2);
        EXPECT_EQ(error.rfind((m_dir / name).string() + ": ", 0), 0u) << name << ": " << error;
        EXPECT_EQ(error.find('\n'), std::string::npos) << error;  // no C++ backtrace
    }
    EXPECT_NE(loadError(m_dir / "legacy.pt").find("legacy format"), std::string::npos);

    {  // a zip of the right kind, without a pickle in it
        caffe2::serialize::PyTorchStreamWriter writer((m_dir / "other.zip").string());
        writer.writeRecord("hello.txt", "hi", 2);
    }
    EXPECT_NE(loadError(m_dir / "other.zip").find("without data.pkl"), std::string::npos);
    EXPECT_NE(loadError(m_dir / "missing.pt").find("no such file"), std::string::npos);
    EXPECT_NE(loadError(m_dir).find("without best.pt or checkpoint.pt"), std::string::npos);

    std::string renamed = bytes;  // the zip's CRCs are not checked: the pickle must be
    renamed.replace(renamed.find("_rebuild_tensor_v2"), 18, "_rebuild_tensor_vX");
    writeFileAtomic(m_dir / "renamed.pt", renamed);
    EXPECT_NE(loadError(m_dir / "renamed.pt")
                  .find("is a Python object (torch._utils._rebuild_tensor_vX), not a tensor"),
              std::string::npos)
        << loadError(m_dir / "renamed.pt");

    auto list = c10::List<int64_t>({1, 2, 3});
    const std::vector<char> listBytes = torch::pickle_save(c10::IValue(list));
    writeFileAtomic(m_dir / "list.pt", std::string_view(listBytes.data(), listBytes.size()));
    EXPECT_NE(loadError(m_dir / "list.pt").find("holds a list, not a state dict"),
              std::string::npos)
        << loadError(m_dir / "list.pt");
}

// Every damaged pickle either loads (the damage hit a value that still makes sense) or gives an
// error that names the file; none crashes.
TEST_F(SavedModelTest, DamagedPicklesNeverCrash) {
    const std::string bytes = readFile(kCkpt);
    const size_t begin = bytes.find("\x80\x02", bytes.find("data.pkl"));
    const size_t end = bytes.find("PK\x03\x04", begin);
    ASSERT_NE(begin, std::string::npos);
    ASSERT_NE(end, std::string::npos);
    const fs::path file = m_dir / "damaged.pt";
    int errors = 0;
    for (size_t i = begin; i < end; i += 5) {
        std::string damaged = bytes;
        damaged[i] = static_cast<char>(damaged[i] ^ (1 << (i % 8)));
        writeFileAtomic(file, damaged);
        const std::string error = loadError(file, 2);
        EXPECT_TRUE(error.empty() || error.rfind(file.string() + ": ", 0) == 0) << error;
        errors += !error.empty();
    }
    EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace nope
