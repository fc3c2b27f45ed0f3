#include "study/stats.h"

#include <cmath>

namespace nope::study {

namespace {

// t(0.975, df) for df = 1..30.
constexpr double kT975[] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060,
                            2.2622,  2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199,
                            2.1098,  2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639,
                            2.0595,  2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
constexpr int kTableSize = static_cast<int>(sizeof kT975 / sizeof kT975[0]);

// Beyond 30: t(0.975, df) at 30, 40, 60, 120 and infinity, interpolated linearly in 1 / df (the
// usual way to read a t table; within 0.001 of the exact quantile).
constexpr double kTailDf[] = {30, 40, 60, 120};
constexpr double kTailT[] = {2.0423, 2.0211, 2.0003, 1.9799};
constexpr double kNormal975 = 1.9600;

}  // namespace

double tQuantile975(int degreesOfFreedom) {
    if (degreesOfFreedom < 1) {
        return 0.0;
    }
    if (degreesOfFreedom <= kTableSize) {
        return kT975[degreesOfFreedom - 1];
    }
    const double x = 1.0 / degreesOfFreedom;
    for (int i = 0; i + 1 < 4; ++i) {
        if (degreesOfFreedom <= kTailDf[i + 1]) {
            const double x0 = 1.0 / kTailDf[i], x1 = 1.0 / kTailDf[i + 1];
            return kTailT[i + 1] + (kTailT[i] - kTailT[i + 1]) * (x - x1) / (x0 - x1);
        }
    }
    const double x0 = 1.0 / kTailDf[3];  // 120 to infinity (x = 0)
    return kNormal975 + (kTailT[3] - kNormal975) * x / x0;
}

Interval meanInterval(const std::vector<double>& values) {
    Interval out;
    out.n = static_cast<int>(values.size());
    if (values.empty()) {
        return out;
    }
    double sum = 0.0;
    for (double v : values) {
        sum += v;
    }
    out.mean = sum / out.n;
    if (out.n > 1) {
        double squares = 0.0;
        for (double v : values) {
            squares += (v - out.mean) * (v - out.mean);
        }
        out.sd = std::sqrt(squares / (out.n - 1));
    }
    const double half = tQuantile975(out.n - 1) * out.sd / std::sqrt(static_cast<double>(out.n));
    out.low = out.mean - half;
    out.high = out.mean + half;
    return out;
}

}  // namespace nope::study
