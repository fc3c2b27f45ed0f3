// Addition's operand pairs, drawn by one of the two schemes of AdditionData (tasks/dataset.h).
// Internal to tasks/dataset.cpp; a header so that the tests can count the buckets.
#pragma once

#include <cstdint>
#include <vector>

#include "tasks/dataset.h"
#include "util/rng.h"

namespace nope {

// Operands below 1000: a pair (a, b) is the index a * 1000 + b.
inline constexpr uint32_t kAdditionOperands = 1000;
inline constexpr uint32_t kAdditionPairs = kAdditionOperands * kAdditionOperands;

struct AdditionPairs {
    std::vector<uint32_t> train;  // in draw order
    std::vector<uint32_t> test;
};

// The authors' carry-balanced training set and a uniform test set from the pairs left.
AdditionPairs drawBalancedAddition(int trainSize, int testSize, Rng& rng);
// The operand-size buckets alone (one-digit pairs, 900 of at most two digits, the rest), for
// training and test alike.
AdditionPairs drawBucketAddition(int trainSize, int testSize, Rng& rng);

// Pairs with each carry count (0 to 3) among all operand pairs below 1000.
const std::vector<int64_t>& pairsPerCarryCount();

Example additionExample(uint32_t pair);

}  // namespace nope
