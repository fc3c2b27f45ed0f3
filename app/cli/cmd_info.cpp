// nopescope-cli info: the model configuration and its parameter count.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "model/model_config.h"
#include "util/format.h"

namespace nope::cli {

int runInfo(const Args& args) {
    ModelFlags modelFlags;
    bool json = false;
    FlagSet flags("nopescope-cli info [model flags] [--json]",
                  "Prints the model configuration and its number of parameters (the output head\n"
                  "is tied to the token embedding and counted once).");
    modelFlags.addTo(flags);
    flags.addSwitch("json", &json, "print one JSON object instead of text");
    if (auto error = flags.parse(args)) {
        return usageError("info", *error);
    }
    if (flags.helpRequested()) {
        std::cout << flags.help();
        return kExitOk;
    }
    ModelConfig config;
    if (auto error = modelFlags.build(flags, config)) {
        return usageError("info", *error);
    }
    const int64_t parameters = parameterCount(config);  // equal to the built model's (tested)
    if (json) {
        std::cout << nlohmann::json{{"model", config}, {"parameters", parameters}}.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "model:      " << config.nLayer << " layers, " << config.nHead << " heads, width "
              << config.nEmbd << ", context " << config.blockSize << ", vocabulary "
              << config.vocabSize << "\n"
              << "            dropout " << config.dropout << ", biases "
              << (config.bias ? "yes" : "no") << ", positional encoding "
              << toString(config.positional) << ", " << toString(config.attention) << " attention\n"
              << "init:       " << toString(config.init.scheme);
    if (config.init.scheme == InitScheme::Normal) {
        std::cout << " N(" << config.init.mean << ", " << config.init.std << ")";
    }
    std::cout << "\nparameters: " << parameters << " (" << withCommas(parameters) << ")\n";
    return kExitOk;
}

}  // namespace nope::cli
