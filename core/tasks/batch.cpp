#include "tasks/batch.h"

#include <algorithm>
#include <stdexcept>

#include "tasks/vocab.h"
#include "util/rng.h"

namespace nope {

torch::Tensor encodeBatch(const std::vector<std::string>& texts) {
    if (texts.empty()) {
        return torch::empty({0, 0}, torch::kLong);
    }
    const int64_t T = static_cast<int64_t>(texts.front().size());
    auto out = torch::empty({static_cast<int64_t>(texts.size()), T}, torch::kLong);
    auto* ids = out.data_ptr<int64_t>();
    for (size_t n = 0; n < texts.size(); ++n) {
        if (static_cast<int64_t>(texts[n].size()) != T) {
            throw std::invalid_argument("encodeBatch: texts differ in length (" +
                                        std::to_string(T) + " and " +
                                        std::to_string(texts[n].size()) + ")");
        }
        for (int64_t t = 0; t < T; ++t) {
            ids[n * T + t] = vocab::encode(texts[n][t]);
        }
    }
    return out;
}

PromptSet makePromptSet(const TaskData& data, int samples, uint64_t seed) {
    PromptSet set;
    set.examples = sampleExamples(data.test, samples, seed);
    const int length = longestPrompt(data.task);
    set.padded.reserve(set.examples.size());
    for (const auto& e : set.examples) {
        set.padded.push_back(leftPad(e.prompt, length));
    }
    set.tokens = encodeBatch(set.padded);
    return set;
}

PromptSet makePromptSet(const std::vector<std::string>& prompts, int length) {
    PromptSet set;
    for (const auto& p : prompts) {
        if (const std::string problem = vocab::outsideMessage(p); !problem.empty()) {
            throw std::invalid_argument("prompt '" + p + "': " + problem);
        }
        length = std::max(length, static_cast<int>(p.size()));
    }
    for (const auto& p : prompts) {
        set.examples.push_back({p, ""});
        set.padded.push_back(leftPad(p, length));
    }
    set.tokens = encodeBatch(set.padded);
    return set;
}

uint64_t analysisPromptSeed(uint64_t dataSeed) {
    return deriveSeed(dataSeed, 0x70);
}

}  // namespace nope
