// Statistics over seeds: the mean, the sample standard deviation and the 95% confidence interval
// of the mean (Student's t), as summary.csv reports them.
#pragma once

#include <vector>

namespace nope::study {

struct Interval {
    double mean = 0.0;
    double sd = 0.0;  // sample standard deviation (n - 1); 0 when n = 1
    double low = 0.0;
    double high = 0.0;
    int n = 0;
};

// The 0.975 quantile of Student's t with `degreesOfFreedom`: a table for 1 to 30, then 40, 60,
// 120 and the normal's 1.96 at infinity, interpolated in 1 / df between them.
double tQuantile975(int degreesOfFreedom);

// mean ± t(0.975, n-1) · sd / √n; [mean, mean] when n = 1; all zero with n = 0 when empty.
Interval meanInterval(const std::vector<double>& values);

}  // namespace nope::study
