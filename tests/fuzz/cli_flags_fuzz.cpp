// Fuzz target: the CLI's flag parser with the train command's flags (model, training, probes),
// then the checks that turn flags into a run's settings. Arguments are the input's lines.
#include "cli/model_flags.h"
#include "cli/train_flags.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> args;
    std::string arg;
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == '\n') {
            args.push_back(arg);
            arg.clear();
        } else {
            arg += static_cast<char>(data[i]);
        }
    }
    if (!arg.empty()) {
        args.push_back(arg);
    }
    try {
        nope::RunSpec spec;
        nope::cli::ModelFlags modelFlags(&spec);
        nope::cli::TrainFlags trainFlags(&spec, args);
        nope::cli::FlagSet flags("fuzz", "the train command's flags");
        modelFlags.addTo(flags);
        trainFlags.addTo(flags);
        if (flags.parse(args)) {
            return 0;  // a usage error, named
        }
        nope::ModelConfig model;
        if (!modelFlags.build(flags, model)) {
            trainFlags.build(flags);
        }
    } catch (const std::exception&) {
    }
    return 0;
}
