// Fuzz target: the import of files written by PyTorch (nanoGPT's ckpt.pt, state dicts,
// weights.pt): the ZIP container, the pickle reader and the model built from the tensors.
#include "fuzz_input.h"
#include "run/saved_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool once = [] {
        torch::set_num_threads(1);
        return true;
    }();
    (void)once;
    const auto file = nope::fuzz::writeInput("model.pt", nope::fuzz::asString(data, size));
    try {
        nope::SavedModelOptions options;
        options.heads = 2;
        nope::loadSavedModel(file, options);
    } catch (const std::exception&) {
    }
    return 0;
}
