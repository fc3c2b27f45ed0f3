// The four synthetic tasks of the study and their text formats (one example per line):
//   addition  $123+456=975$                            the sum written in reverse, closed by '$'
//   reversal  rev(5973245481290159)=9510921845423795   the digits in reverse order
//   indexing  wherex(360465066,6)=1                    0-based index of the digit's first
//   occurrence ordering  order(74283,87234)=30241                 answer[i] = index in the original
//   of shuffle[i]
// Every prompt ends with '='; the answer is what follows it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nope {

enum class TaskKind { Addition, Reversal, Indexing, Ordering };

// One example split at the first '=': prompt includes the '=', answer is the rest of the line.
struct Example {
    std::string prompt;  // e.g. "$123+456="
    std::string answer;  // e.g. "975$"
    std::string text() const { return prompt + answer; }
};

const std::vector<TaskKind>& allTasks();
std::string taskName(TaskKind task);
std::optional<TaskKind> parseTask(std::string_view name);
std::string taskNamesJoined();  // "addition, reversal, indexing, ordering"

// Length of the task's longest prompt: analysis prompts are left-padded to it.
int longestPrompt(TaskKind task);
// Tokens to generate after a prompt so that the longest answer and its terminator fit.
int answerBudget(TaskKind task);

// Splits a line at its first '='; throws std::invalid_argument when there is none.
Example splitExample(std::string_view line);

// The answer a model produced: its continuation cut at the task's terminator ('$' for addition,
// '\n' for the others). The addition answer stays reversed, as written in the data.
std::string extractAnswer(TaskKind task, std::string_view continuation);

// The number an answer stands for, in normal reading order: reverses the addition answer.
std::string readAnswer(TaskKind task, std::string_view answer);

// Exact match of the whole answer, the rule of the accuracy metric.
bool isCorrect(TaskKind task, const Example& example, std::string_view continuation);

// A prompt's answer under the exact-match rule: `expected` is the task's answer (cut at its
// terminator) when the prompt is in the task's format, empty otherwise.
struct PromptAnswer {
    std::string prompt;
    std::string answer;    // the continuation cut at the task's terminator
    std::string expected;  // empty when the prompt is not one of the task's
    bool correct = false;
};
PromptAnswer judgeAnswer(TaskKind task, const std::string& prompt, std::string_view continuation);

// The correct answer of a prompt, computed from the prompt alone (a check independent of the
// generator). Throws std::invalid_argument for a prompt that is not in the task's format.
std::string solve(TaskKind task, std::string_view prompt);

}  // namespace nope
