// The paper's scaling figures (its equations 1-3) and the statistics of repeated runs.
#pragma once
#include <vector>

namespace hlm {

// Median and range of one figure over a point's repeats.
struct Spread {
  double median = 0, min = 0, max = 0;
};
Spread spread_of(std::vector<double> values);

// How the work grows with the ranks: strong scaling keeps the total fixed (the paper's
// setting: N ranks share the same samples), weak scaling keeps each rank's share fixed.
enum class Scaling { kStrong, kWeak };
Scaling scaling_from_name(const char* name);  // "strong" or "weak"; InternalError otherwise

struct ScalingRatios {
  double speedup = 0, efficiency = 0, overhead_seconds = 0;
};
// Strong: S = T1 / TN, E = S / N, O = TN - T1 / N (the paper's equations 1-3).
// Weak (N times the work in TN): S = N T1 / TN, E = T1 / TN, O = TN - T1.
// t1 and tn are times for the same work per rank step; see scale_analysis for the scaling of
// TN when N does not divide the steps.
ScalingRatios scaling_ratios(Scaling scaling, double t1, double tn, int n);

}  // namespace hlm
