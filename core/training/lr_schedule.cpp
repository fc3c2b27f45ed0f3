#include "training/lr_schedule.h"

#include <cmath>

namespace nope {

double learningRateAt(int step, const TrainConfig& c) {
    const double peak = c.learningRate;
    const double floor = peak * c.minLrRatio;
    if (step < c.warmupSteps) {
        return peak * double(step) / double(c.warmupSteps);
    }
    if (step >= c.decaySteps) {
        return floor;
    }
    const double progress = double(step - c.warmupSteps) / double(c.decaySteps - c.warmupSteps);
    const double coefficient = 0.5 * (1.0 + std::cos(M_PI * progress));  // 1 -> 0
    return floor + coefficient * (peak - floor);
}

}  // namespace nope
