#include "tasks/task.h"

#include <algorithm>
#include <stdexcept>

namespace nope {

namespace {

std::string reversed(std::string_view s) {
    return std::string(s.rbegin(), s.rend());
}

bool allDigits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Strips "head" and "tail" from the ends of a prompt, or throws naming the expected format.
std::string_view inner(std::string_view prompt, std::string_view head, std::string_view tail,
                       std::string_view format) {
    if (prompt.size() < head.size() + tail.size() || prompt.substr(0, head.size()) != head ||
        prompt.substr(prompt.size() - tail.size()) != tail) {
        throw std::invalid_argument("prompt '" + std::string(prompt) + "' is not of the form " +
                                    std::string(format));
    }
    return prompt.substr(head.size(), prompt.size() - head.size() - tail.size());
}

std::pair<std::string_view, std::string_view> splitComma(std::string_view s, char sep,
                                                         std::string_view prompt) {
    const size_t at = s.find(sep);
    if (at == std::string_view::npos) {
        throw std::invalid_argument("prompt '" + std::string(prompt) + "' lacks '" +
                                    std::string(1, sep) + "'");
    }
    return {s.substr(0, at), s.substr(at + 1)};
}

}  // namespace

const std::vector<TaskKind>& allTasks() {
    static const std::vector<TaskKind> kTasks = {TaskKind::Addition, TaskKind::Reversal,
                                                 TaskKind::Indexing, TaskKind::Ordering};
    return kTasks;
}

std::string taskName(TaskKind task) {
    switch (task) {
        case TaskKind::Addition:
            return "addition";
        case TaskKind::Reversal:
            return "reversal";
        case TaskKind::Indexing:
            return "indexing";
        case TaskKind::Ordering:
            return "ordering";
    }
    return "?";
}

std::optional<TaskKind> parseTask(std::string_view name) {
    for (TaskKind t : allTasks()) {
        if (taskName(t) == name) {
            return t;
        }
    }
    return std::nullopt;
}

std::string taskNamesJoined() {
    std::string out;
    for (TaskKind t : allTasks()) {
        out += (out.empty() ? "" : ", ") + taskName(t);
    }
    return out;
}

int longestPrompt(TaskKind task) {
    switch (task) {
        case TaskKind::Addition:
            return 9;  // $999+999=
        case TaskKind::Reversal:
            return 22;  // rev(<16 digits>)=
        case TaskKind::Indexing:
            return 20;  // wherex(<9 digits>,d)=
        case TaskKind::Ordering:
            return 19;  // order(<5 digits>,<5 digits>)=
    }
    return 0;
}

int answerBudget(TaskKind task) {
    switch (task) {
        case TaskKind::Addition:
            return 5;  // "8991$": four digits and the closing '$'
        case TaskKind::Reversal:
            return 17;  // sixteen digits and '\n'
        case TaskKind::Indexing:
            return 2;  // one digit and '\n'
        case TaskKind::Ordering:
            return 6;  // five digits and '\n'
    }
    return 0;
}

Example splitExample(std::string_view line) {
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
        throw std::invalid_argument("example '" + std::string(line) + "' has no '='");
    }
    return {std::string(line.substr(0, eq + 1)), std::string(line.substr(eq + 1))};
}

std::string extractAnswer(TaskKind task, std::string_view continuation) {
    const char stop = task == TaskKind::Addition ? '$' : '\n';
    return std::string(continuation.substr(0, continuation.find(stop)));
}

std::string readAnswer(TaskKind task, std::string_view answer) {
    return task == TaskKind::Addition ? reversed(answer) : std::string(answer);
}

bool isCorrect(TaskKind task, const Example& example, std::string_view continuation) {
    // Both sides go through the same cut, so the reference answer's terminator ('$') drops out;
    // reading both back (un-reversing addition) would not change whether they match.
    return extractAnswer(task, continuation) == extractAnswer(task, example.answer);
}

std::string solve(TaskKind task, std::string_view prompt) {
    switch (task) {
        case TaskKind::Addition: {
            auto [a, b] = splitComma(inner(prompt, "$", "=", "$A+B="), '+', prompt);
            if (!allDigits(a) || !allDigits(b)) {
                throw std::invalid_argument("operands of '" + std::string(prompt) +
                                            "' are not numbers");
            }
            return reversed(
                       std::to_string(std::stoll(std::string(a)) + std::stoll(std::string(b)))) +
                   "$";
        }
        case TaskKind::Reversal: {
            const std::string_view n = inner(prompt, "rev(", ")=", "rev(N)=");
            if (!allDigits(n)) {
                throw std::invalid_argument("'" + std::string(prompt) +
                                            "' does not reverse a number");
            }
            return reversed(n);
        }
        case TaskKind::Indexing: {
            auto [n, d] = splitComma(inner(prompt, "wherex(", ")=", "wherex(N,d)="), ',', prompt);
            const size_t at = n.find(d);
            if (!allDigits(n) || d.size() != 1 || at == std::string_view::npos) {
                throw std::invalid_argument("'" + std::string(prompt) +
                                            "' does not ask for a digit of its number");
            }
            return std::to_string(at);
        }
        case TaskKind::Ordering: {
            auto [original, shuffled] =
                splitComma(inner(prompt, "order(", ")=", "order(N,M)="), ',', prompt);
            std::string sortedA(original), sortedB(shuffled);
            std::sort(sortedA.begin(), sortedA.end());
            std::sort(sortedB.begin(), sortedB.end());
            if (!allDigits(original) || sortedA != sortedB ||
                std::adjacent_find(sortedA.begin(), sortedA.end()) != sortedA.end()) {
                throw std::invalid_argument("'" + std::string(prompt) +
                                            "' is not a number with distinct digits and a shuffle");
            }
            std::string answer;
            for (char c : shuffled) {
                answer += std::to_string(original.find(c));
            }
            return answer;
        }
    }
    return {};
}

PromptAnswer judgeAnswer(TaskKind task, const std::string& prompt, std::string_view continuation) {
    PromptAnswer out;
    out.prompt = prompt;
    out.answer = extractAnswer(task, continuation);
    try {
        out.expected = extractAnswer(task, solve(task, prompt));
    } catch (const std::exception&) {  // not a prompt of the task (or a number too long to add)
        out.expected.clear();
    }
    out.correct = !out.expected.empty() && out.answer == out.expected;
    return out;
}

}  // namespace nope
