// The four task generators, the vocabulary, padding and answer checking.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>

#include "tasks/addition_data.h"
#include "tasks/dataset.h"
#include "tasks/task.h"
#include "tasks/vocab.h"

namespace nope {
namespace {

const TaskData& dataFor(TaskKind task) {
    static std::map<TaskKind, TaskData> cache;
    auto it = cache.find(task);
    if (it == cache.end()) {
        it = cache.emplace(task, makeTaskData(task, DataConfig{})).first;
    }
    return it->second;
}

TEST(Vocabulary, IdsFollowCodePointOrder) {
    EXPECT_EQ(vocab::kSize, 96);
    EXPECT_EQ(vocab::encode('\n'), 0);
    EXPECT_EQ(vocab::encode(' '), 1);
    EXPECT_EQ(vocab::encode('!'), 2);
    EXPECT_EQ(vocab::encode('0'), 17);
    EXPECT_EQ(vocab::encode('9'), 26);
    EXPECT_EQ(vocab::encode('='), 30);
    EXPECT_EQ(vocab::encode('~'), 95);
    for (int id = 0; id < vocab::kSize; ++id) {
        EXPECT_EQ(vocab::encode(vocab::decode(id)), id);
        if (id > 0) {
            EXPECT_LT(vocab::decode(id - 1), vocab::decode(id));
        }
    }
    EXPECT_THROW(vocab::encode('\t'), std::invalid_argument);
    EXPECT_THROW(vocab::decode(96), std::out_of_range);
    EXPECT_EQ(vocab::decode(vocab::encode("rev(12)=21")), "rev(12)=21");
}

TEST(Tasks, NamesAndPromptLengths) {
    EXPECT_EQ(parseTask("ordering"), TaskKind::Ordering);
    EXPECT_FALSE(parseTask("sorting").has_value());
    EXPECT_EQ(longestPrompt(TaskKind::Addition), 9);
    EXPECT_EQ(longestPrompt(TaskKind::Reversal), 22);
    EXPECT_EQ(longestPrompt(TaskKind::Indexing), 20);
    EXPECT_EQ(longestPrompt(TaskKind::Ordering), 19);
}

TEST(Tasks, ExamplesFromTheReference) {
    EXPECT_EQ(solve(TaskKind::Addition, "$123+456="), "975$");
    EXPECT_EQ(solve(TaskKind::Reversal, "rev(5973245481290159)="), "9510921845423795");
    EXPECT_EQ(solve(TaskKind::Indexing, "wherex(360465066,6)="), "1");
    EXPECT_EQ(solve(TaskKind::Ordering, "order(74283,87234)="), "30241");
    EXPECT_EQ(solve(TaskKind::Reversal, "rev(1200)="), "0021");  // leading zeros kept
    EXPECT_EQ(solve(TaskKind::Addition, "$999+1="), "0001$");
    EXPECT_THROW(solve(TaskKind::Indexing, "wherex(123,7)="), std::invalid_argument);
    EXPECT_THROW(solve(TaskKind::Ordering, "order(112,121)="), std::invalid_argument);
}

TEST(Tasks, EveryExampleHasTheTaskFormat) {
    const std::map<TaskKind, std::regex> formats = {
        {TaskKind::Addition, std::regex(R"(\$\d{1,3}\+\d{1,3}=\d{1,4}\$)")},
        {TaskKind::Reversal, std::regex(R"(rev\(\d{1,16}\)=\d{1,16})")},
        {TaskKind::Indexing, std::regex(R"(wherex\(\d{1,9},\d\)=\d)")},
        {TaskKind::Ordering, std::regex(R"(order\(\d{1,5},\d{1,5}\)=\d{1,5})")},
    };
    for (TaskKind task : allTasks()) {
        const TaskData& data = dataFor(task);
        size_t longest = 0;
        for (const auto* set : {&data.train, &data.test}) {
            for (const Example& e : *set) {
                ASSERT_TRUE(std::regex_match(e.text(), formats.at(task))) << e.text();
                ASSERT_EQ(e.prompt.back(), '=');
                longest = std::max(longest, e.prompt.size());
            }
        }
        EXPECT_EQ(longest, size_t(longestPrompt(task))) << taskName(task);
    }
}

TEST(Tasks, EveryAnswerIsCorrect) {
    for (TaskKind task : allTasks()) {
        const TaskData& data = dataFor(task);
        for (const auto* set : {&data.train, &data.test}) {
            for (const Example& e : *set) {
                ASSERT_EQ(solve(task, e.prompt), e.answer) << e.text();
                std::string wrong = e.answer;
                wrong[0] = wrong[0] == '0' ? '1' : '0';
                ASSERT_FALSE(isCorrect(task, e, wrong + "\n")) << e.text();
            }
        }
    }
}

TEST(Tasks, SizesUniqueAndDisjoint) {
    for (TaskKind task : allTasks()) {
        const TaskData& data = dataFor(task);
        EXPECT_EQ(data.train.size(), 10000u);
        EXPECT_EQ(data.test.size(), 10000u);
        std::set<std::string> train, test;
        for (const auto& e : data.train) {
            train.insert(e.prompt);
        }
        for (const auto& e : data.test) {
            test.insert(e.prompt);
            EXPECT_EQ(train.count(e.prompt), 0u) << taskName(task) << " " << e.prompt;
        }
        EXPECT_EQ(train.size(), data.train.size()) << taskName(task);
        EXPECT_EQ(test.size(), data.test.size()) << taskName(task);
    }
}

TEST(Tasks, DeterministicBySeed) {
    for (TaskKind task : allTasks()) {
        const DataConfig config{200, 100, 99};
        const TaskData a = makeTaskData(task, config);
        const TaskData b = makeTaskData(task, config);
        const TaskData c = makeTaskData(task, DataConfig{200, 100, 100});
        ASSERT_EQ(a.train.size(), b.train.size());
        bool same = true, differs = false;
        for (size_t i = 0; i < a.train.size(); ++i) {
            same = same && a.train[i].text() == b.train[i].text();
            differs = differs || a.train[i].text() != c.train[i].text();
        }
        EXPECT_TRUE(same) << taskName(task);
        EXPECT_TRUE(differs) << taskName(task);
    }
}

TEST(Tasks, AdditionBucketsBalanceOperandDigits) {
    DataConfig config;
    config.addition = AdditionData::Buckets;
    const TaskData data = makeTaskData(TaskKind::Addition, config);
    auto bucketOf = [](const Example& e) {
        const size_t plus = e.prompt.find('+');
        const size_t a = plus - 1, b = e.prompt.size() - plus - 2;
        return std::max(a, b);  // digits of the longer operand
    };
    std::map<size_t, int> train, test;
    for (const auto& e : data.train) {
        ++train[bucketOf(e)];
    }
    for (const auto& e : data.test) {
        ++test[bucketOf(e)];
    }
    EXPECT_EQ(train[1], 100);  // every one-digit pair
    EXPECT_EQ(train[2], 900);
    EXPECT_EQ(train[3], 9000);
    EXPECT_EQ(test[1], 0);  // none left for the test set
    EXPECT_EQ(test[2], 900);
    EXPECT_EQ(test[3], 9100);
}

int operandDigits(const Example& e) {
    const size_t plus = e.prompt.find('+');
    return static_cast<int>(std::max(plus - 1, e.prompt.size() - plus - 2));
}

std::array<int, 4> carryHistogram(const std::vector<Example>& examples) {
    std::array<int, 4> counts = {0, 0, 0, 0};
    for (const auto& e : examples) {
        const size_t plus = e.prompt.find('+');
        const uint64_t a = std::stoull(e.prompt.substr(1, plus - 1));
        const uint64_t b = std::stoull(e.prompt.substr(plus + 1));
        ++counts[carryCount(a, b)];
    }
    return counts;
}

TEST(Tasks, CarryCount) {
    EXPECT_EQ(carryCount(0, 0), 0);
    EXPECT_EQ(carryCount(123, 456), 0);
    EXPECT_EQ(carryCount(5, 5), 1);
    EXPECT_EQ(carryCount(95, 5), 2);
    EXPECT_EQ(carryCount(999, 1), 3);
    EXPECT_EQ(carryCount(555, 545), 3);
    EXPECT_EQ(carryCount(909, 91), 3);  // 9+1, 0+9+1, 9+0+1
    const std::vector<int64_t> expected = {166375, 358875, 338625, 136125};
    EXPECT_EQ(pairsPerCarryCount(), expected);
}

// The authors' training set: every one-digit pair, a quarter of the set per carry count, and
// a test set drawn uniformly from the pairs left.
TEST(Tasks, AdditionBalancedByCarries) {
    const TaskData& data = dataFor(TaskKind::Addition);  // the default: balanced
    const std::array<int, 4> train = carryHistogram(data.train);
    for (int carries = 0; carries < 4; ++carries) {
        EXPECT_EQ(train[carries], 2500) << carries << " carries";
    }
    std::map<int, int> digits;
    int belowHundred = 0;
    for (const auto& e : data.train) {
        ++digits[operandDigits(e)];
        belowHundred += operandDigits(e) <= 2 ? 1 : 0;
    }
    EXPECT_EQ(digits[1], 100);  // every one-digit pair
    // 900 drawn below 100, and the three-digit bucket draws below 1000, small pairs included
    EXPECT_GE(belowHundred, 1000);
    EXPECT_LT(belowHundred, 1200);
    // the test set: none of the training pairs, and carries as they fall among all pairs
    // (16.6%, 35.9%, 33.9%, 13.6%; the 10,000 training pairs shift them by well under 1%)
    const std::array<int, 4> test = carryHistogram(data.test);
    const std::vector<int64_t>& all = pairsPerCarryCount();
    for (int carries = 0; carries < 4; ++carries) {
        EXPECT_NEAR(test[carries] / 10000.0, all[carries] / 1e6, 0.02) << carries << " carries";
    }
    EXPECT_EQ(std::count_if(data.test.begin(), data.test.end(),
                            [](const Example& e) { return operandDigits(e) == 1; }),
              0);
    // a set not divisible by four: each carry count holds at most a quarter, rounded up
    const TaskData small = makeTaskData(TaskKind::Addition, DataConfig{202, 50, 3});
    const std::array<int, 4> counts = carryHistogram(small.train);
    EXPECT_EQ(small.train.size(), 202u);
    EXPECT_LE(counts[1], 51);
    EXPECT_LE(counts[2], 51);
    EXPECT_LE(counts[3], 51);
    EXPECT_EQ(counts[0], 55);  // the one-digit pairs without a carry all go in regardless
}

TEST(Tasks, RejectsImpossibleSizes) {
    EXPECT_THROW(makeTaskData(TaskKind::Reversal, DataConfig{0, 10, 1}), std::invalid_argument);
    EXPECT_THROW(makeTaskData(TaskKind::Reversal, DataConfig{10, kMaxExamples, 1}),
                 std::invalid_argument);
    // balanced addition: four times the 136,125 pairs with three carries
    EXPECT_EQ(maxTrainExamples(TaskKind::Addition), 544500);
    EXPECT_EQ(maxTrainExamples(TaskKind::Addition, AdditionData::Buckets), 991000);
    EXPECT_THROW(makeTaskData(TaskKind::Addition, DataConfig{544501, 10, 1}),
                 std::invalid_argument);
}

TEST(Answers, ExactMatchWithTheTaskTerminator) {
    const Example add = splitExample("$123+456=975$");
    EXPECT_EQ(add.prompt, "$123+456=");
    EXPECT_EQ(add.answer, "975$");
    EXPECT_TRUE(isCorrect(TaskKind::Addition, add, "975$\n$1+"));
    EXPECT_FALSE(isCorrect(TaskKind::Addition, add, "579$"));   // not reversed
    EXPECT_FALSE(isCorrect(TaskKind::Addition, add, "9750$"));  // extra digit
    EXPECT_FALSE(isCorrect(TaskKind::Addition, add, "975\n"));  // never closed
    EXPECT_EQ(readAnswer(TaskKind::Addition, extractAnswer(TaskKind::Addition, "975$")), "579");

    const Example rev = splitExample("rev(1200)=0021");
    EXPECT_TRUE(isCorrect(TaskKind::Reversal, rev, "0021\nrev"));
    EXPECT_FALSE(isCorrect(TaskKind::Reversal, rev, "21\n"));
    EXPECT_FALSE(isCorrect(TaskKind::Reversal, rev, "00211\n"));
    EXPECT_THROW(splitExample("no equals sign"), std::invalid_argument);
}

TEST(Prompts, LeftPaddingAndSampling) {
    EXPECT_EQ(leftPad("$1+2=", 9), "\n\n\n\n$1+2=");
    EXPECT_EQ(leftPad("$123+456=", 9), "$123+456=");
    const TaskData& data = dataFor(TaskKind::Indexing);
    const auto a = sampleExamples(data.test, 256, 5);
    const auto b = sampleExamples(data.test, 256, 5);
    std::set<std::string> distinct;
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].text(), b[i].text());
        distinct.insert(a[i].prompt);
    }
    EXPECT_EQ(distinct.size(), 256u);
    EXPECT_THROW(sampleExamples(data.test, 10001, 5), std::invalid_argument);
}

}  // namespace
}  // namespace nope
