#include "tasks/addition_data.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace nope {

namespace {

constexpr int kCarryClasses = 4;

uint32_t pairOf(uint64_t a, uint64_t b) {
    return static_cast<uint32_t>(a * kAdditionOperands + b);
}

int carriesOf(uint32_t pair) {
    return carryCount(pair / kAdditionOperands, pair % kAdditionOperands);
}

// Every pair with both operands below `limit`, in a seeded random order.
std::vector<uint32_t> shuffledPairsBelow(uint64_t limit, Rng& rng) {
    std::vector<uint32_t> pairs;
    pairs.reserve(limit * limit);
    for (uint64_t a = 0; a < limit; ++a) {
        for (uint64_t b = 0; b < limit; ++b) {
            pairs.push_back(pairOf(a, b));
        }
    }
    shuffleInPlace(pairs, rng);
    return pairs;
}

// Accepts pairs for the carry-balanced set: each new and its carry count below the quota.
class CarryBalance {
public:
    CarryBalance(std::vector<bool>& taken, int quota) : m_taken(taken), m_quota(quota) {}

    // Walks `candidates` in order (a uniform draw without replacement) and accepts up to
    // `count` of them into `out`; returns how many it accepted.
    int accept(const std::vector<uint32_t>& candidates, int count, std::vector<uint32_t>& out) {
        int got = 0;
        for (uint32_t pair : candidates) {
            if (got == count) {
                break;
            }
            const int carries = carriesOf(pair);
            if (m_taken[pair] || m_counts[carries] >= m_quota) {
                continue;
            }
            take(pair, out);
            ++got;
        }
        return got;
    }
    // Takes a pair whatever its carry count (the one-digit pairs all go in).
    void take(uint32_t pair, std::vector<uint32_t>& out) {
        m_taken[pair] = true;
        ++m_counts[carriesOf(pair)];
        out.push_back(pair);
    }

private:
    std::vector<bool>& m_taken;
    int m_quota;
    std::array<int, kCarryClasses> m_counts = {0, 0, 0, 0};
};

// Uniform sample of `count` pairs not yet taken.
void drawUntaken(std::vector<bool>& taken, int count, Rng& rng, std::vector<uint32_t>& out) {
    for (uint32_t pair : shuffledPairsBelow(kAdditionOperands, rng)) {
        if (static_cast<int>(out.size()) == count) {
            return;
        }
        if (!taken[pair]) {
            taken[pair] = true;
            out.push_back(pair);
        }
    }
    throw std::invalid_argument("addition has no more unique operand pairs");
}

// The operand-size buckets of the bucket scheme: operands below 10, 100 and 1000.
constexpr std::array<uint64_t, 3> kBucketLimit = {10, 100, 1000};
constexpr std::array<int, 2> kBucketQuota = {100, 900};  // the third takes the rest

uint64_t bucketPoolSize(int bucket) {
    const uint64_t hi = kBucketLimit[bucket] * kBucketLimit[bucket];
    const uint64_t lo = bucket == 0 ? 0 : kBucketLimit[bucket - 1] * kBucketLimit[bucket - 1];
    return hi - lo;
}

// The bucket scheme: uniform pairs within each bucket (the larger operand has the bucket's digit
// count), quotas 100 and 900, the third bucket takes the rest.
void drawBuckets(int count, Rng& rng, std::vector<bool>& taken, std::array<uint64_t, 3>& used,
                 std::vector<uint32_t>& out) {
    int remaining = count;
    for (int bucket = 0; bucket < 3 && remaining > 0; ++bucket) {
        const uint64_t available = bucketPoolSize(bucket) - used[bucket];
        uint64_t quota = bucket < 2 ? std::min<uint64_t>(kBucketQuota[bucket], remaining)
                                    : static_cast<uint64_t>(remaining);
        quota = std::min(quota, available);
        const uint64_t limit = kBucketLimit[bucket];
        const uint64_t below = bucket == 0 ? 0 : kBucketLimit[bucket - 1];
        uint64_t got = 0;
        while (got < quota) {
            const uint64_t a = uniformInt(rng, 0, limit - 1);
            const uint64_t b = uniformInt(rng, 0, limit - 1);
            if (std::max(a, b) < below || taken[pairOf(a, b)]) {
                continue;  // belongs to a smaller bucket, or drawn already
            }
            taken[pairOf(a, b)] = true;
            out.push_back(pairOf(a, b));
            ++got;
        }
        used[bucket] += got;
        remaining -= static_cast<int>(got);
    }
    if (remaining > 0) {
        throw std::invalid_argument("addition has no more unique operand pairs");
    }
}

}  // namespace

AdditionPairs drawBalancedAddition(int trainSize, int testSize, Rng& rng) {
    std::vector<bool> taken(kAdditionPairs, false);
    AdditionPairs out;
    out.train.reserve(trainSize);
    // Each carry count may hold a quarter of the set (rounded up). The one-digit pairs all go in
    // first whatever their carries; the two-digit bucket is 9% of the set (900 of 10,000), drawn
    // from every pair of operands below 100; the three-digit bucket, from every pair below 1000,
    // takes the rest. Each bucket is a uniform draw without replacement, a pair kept only while
    // its carry count is under the quota.
    CarryBalance balance(taken, (trainSize + kCarryClasses - 1) / kCarryClasses);
    const std::vector<uint32_t> oneDigit = shuffledPairsBelow(10, rng);
    for (size_t i = 0; i < oneDigit.size() && static_cast<int>(i) < trainSize; ++i) {
        balance.take(oneDigit[i], out.train);
    }
    const int twoDigit = static_cast<int>(int64_t{trainSize} * 900 / 10000);
    const int left = trainSize - static_cast<int>(out.train.size());
    balance.accept(shuffledPairsBelow(100, rng), std::min(twoDigit, left), out.train);
    const int rest = trainSize - static_cast<int>(out.train.size());
    if (balance.accept(shuffledPairsBelow(kAdditionOperands, rng), rest, out.train) < rest) {
        throw std::invalid_argument("the carry-balanced addition set cannot hold " +
                                    std::to_string(trainSize) + " examples");
    }
    out.test.reserve(testSize);
    drawUntaken(taken, testSize, rng, out.test);
    return out;
}

AdditionPairs drawBucketAddition(int trainSize, int testSize, Rng& rng) {
    std::vector<bool> taken(kAdditionPairs, false);
    std::array<uint64_t, 3> used = {0, 0, 0};
    AdditionPairs out;
    drawBuckets(trainSize, rng, taken, used, out.train);
    drawBuckets(testSize, rng, taken, used, out.test);
    return out;
}

const std::vector<int64_t>& pairsPerCarryCount() {
    static const std::vector<int64_t> kCounts = [] {
        std::vector<int64_t> counts(kCarryClasses, 0);
        for (uint32_t pair = 0; pair < kAdditionPairs; ++pair) {
            ++counts[carriesOf(pair)];
        }
        return counts;
    }();
    return kCounts;
}

Example additionExample(uint32_t pair) {
    const uint64_t a = pair / kAdditionOperands;
    const uint64_t b = pair % kAdditionOperands;
    std::string sum = std::to_string(a + b);
    std::reverse(sum.begin(), sum.end());
    return {"$" + std::to_string(a) + "+" + std::to_string(b) + "=", sum + "$"};
}

}  // namespace nope
