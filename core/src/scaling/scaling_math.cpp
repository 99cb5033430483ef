// Scaling figures and repeat statistics (see scaling_math.h).
#include "scaling/scaling_math.h"

#include <algorithm>
#include <string>

#include "hlm/errors.h"

namespace hlm {

Spread spread_of(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {median, values.front(), values.back()};
}

Scaling scaling_from_name(const char* name) {
  const std::string s = name;
  if (s == "strong") return Scaling::kStrong;
  if (s == "weak") return Scaling::kWeak;
  throw InternalError("unknown scaling '{}' (strong or weak)", s);
}

ScalingRatios scaling_ratios(Scaling scaling, double t1, double tn, int n) {
  if (tn <= 0 || n < 1) return {};
  if (scaling == Scaling::kWeak) return {n * t1 / tn, t1 / tn, tn - t1};
  const double speedup = t1 / tn;
  return {speedup, speedup / n, tn - t1 / n};
}

}  // namespace hlm
