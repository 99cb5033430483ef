// RR features of each beat (see rr_features.h).
#include "hlm/dsp/rr_features.h"

#include <algorithm>
#include <cmath>

namespace hlm {

std::vector<float> rr_features(const float* rr_seconds, size_t beats) {
  std::vector<float> out(beats * kRrFeatureCount, 0.0f);
  if (beats < 2) return out;  // one beat has no interval: all features 0 (the typical value)
  // rr[i]: interval before beat i; the first beat borrows the one after it.
  std::vector<double> rr(beats);
  for (size_t i = 0; i < beats; ++i)
    rr[i] = std::clamp(double(rr_seconds[i == 0 ? 1 : i]), 0.15, 3.0);
  // Prefix sums give each beat's local mean in O(1).
  std::vector<double> prefix(beats + 1, 0.0);
  for (size_t i = 0; i < beats; ++i) prefix[i + 1] = prefix[i] + rr[i];
  const auto clamp_log = [](double x) { return float(std::clamp(std::log(x), -2.0, 2.0)); };
  for (size_t i = 0; i < beats; ++i) {
    const size_t lo = i >= size_t(kLocalRrBeats) ? i - kLocalRrBeats : 0;
    const size_t hi = std::min(beats, i + kLocalRrBeats + 1);
    const double local = (prefix[hi] - prefix[lo]) / double(hi - lo);
    const double after = i + 1 < beats ? rr[i + 1] : rr[i];
    float* f = out.data() + i * kRrFeatureCount;
    f[0] = clamp_log(rr[i] / local);
    f[1] = clamp_log(after / local);
    f[2] = clamp_log(local);
  }
  return out;
}

}  // namespace hlm
