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

}  // namespace

double tQuantile975(int degreesOfFreedom) {
    if (degreesOfFreedom < 1) {
        return 0.0;
    }
    return degreesOfFreedom <= kTableSize ? kT975[degreesOfFreedom - 1] : 1.96;
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
