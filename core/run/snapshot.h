// What the trainer reports: value types only (numbers, strings, float vectors), so that they
// cross threads by value, go to files, and are drawn by widgets. No tensor ever leaves the
// trainer.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "probe/probe_result.h"
#include "tasks/task.h"

namespace nope {

struct LengthAccuracy {
    int answerLength = 0;  // characters of the expected answer (without its terminator)
    int correct = 0;
    int total = 0;
};

struct Prediction {
    std::string prompt;
    std::string expected;  // the answer as written in the data
    std::string produced;  // the model's answer, cut at the terminator
    bool correct = false;
};

struct EvalResult {
    int step = 0;
    double testLoss = std::numeric_limits<double>::quiet_NaN();
    double accuracy = 0.0;  // exact match, percent of the evaluated test examples
    int correct = 0;
    int total = 0;
    std::vector<LengthAccuracy> byLength;
    std::vector<Prediction> predictions;  // the first few, for display
    double seconds = 0.0;
    bool cancelled = false;  // stopped before the end: the numbers are incomplete
};

// A user's own prompts analysed with the current weights (the window's Explore tab): each prompt
// on its own, unpadded, every capture point, its matrices kept; and the model's greedy answer.
struct PromptAnalysis {
    int step = 0;                        // the model's optimizer steps
    TaskKind task = TaskKind::Addition;  // whose format the answers are judged by
    std::vector<std::string> prompts;
    std::vector<Analysis> analyses;  // one per prompt
    std::vector<PromptAnswer> answers;
    double seconds = 0.0;  // analysis and decoding, on the training thread
};

struct Snapshot {
    int step = 0;  // optimizer steps done; 0 is the model at initialization
    int totalSteps = 0;
    double trainLoss = std::numeric_limits<double>::quiet_NaN();  // mean since the last snapshot
    double learningRate = 0.0;
    double tokensPerSecond = 0.0;  // training throughput since the last snapshot
    double elapsedSeconds = 0.0;   // wall time of the run so far
    double etaSeconds = 0.0;       // estimated time left (to the time limit where that ends first)
    int limitStep = 0;   // near where the time limit stops the run (0: its steps end first)
    EvalResult eval;     // the latest evaluation (eval.step tells when)
    bool best = false;   // this step holds the best test accuracy so far
    Analysis analysis;   // scores and mean matrices on the fixed prompts
    ProbeReport probes;  // position probes, when this snapshot ran them (else empty)
};

}  // namespace nope
