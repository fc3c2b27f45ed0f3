// Fuzz target: the tool's own checkpoint reader (header, weights, AdamW state). Each input is
// read as it is and, when it ends like a ZIP archive, sealed with its checksum first, so that the
// archive reader behind the checksum is reached too. Every rejection is an exception; a crash, a
// hang or a sanitizer report is a finding.
#include "fuzz_input.h"
#include "model/gpt.h"
#include "training/checkpoint.h"
#include "util/zip_seal.h"

namespace {

void read(const std::filesystem::path& file) {
    using namespace nope;
    try {
        const CheckpointState state = readCheckpointState(file);
        const ModelConfig config = state.config.at("model").get<ModelConfig>();
        if (parameterCount(config) > 2'000'000) {
            return;  // a model too large to build here: refused by the memory check in the tool
        }
        Gpt model(config);
        std::vector<OptimizerParam> params;
        for (auto& item : model->named_parameters()) {
            params.push_back({item.key(), item.value(), false});
        }
        AdamW optimizer(params, 0.9, 0.99, 0.1);
        loadCheckpoint(file, *model, optimizer);
    } catch (const std::exception&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool once = [] {
        torch::set_num_threads(1);
        return true;
    }();
    (void)once;
    const std::string bytes = nope::fuzz::asString(data, size);
    read(nope::fuzz::writeInput("checkpoint.pt", bytes));
    try {
        read(nope::fuzz::writeInput("sealed.pt", nope::sealZipArchive(bytes)));
    } catch (const std::invalid_argument&) {
        // not a ZIP archive's end: the raw reading above is all
    }
    return 0;
}
