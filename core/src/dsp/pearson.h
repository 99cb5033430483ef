// Pearson correlation of two equally long sequences of samples, in double precision.
#pragma once
#include <cmath>
#include <cstddef>

namespace hlm::dsp {

// 0 when either sequence is flat (no variance), so a flat beat or template reads as unrelated.
// (align_r_peaks keeps its own form: one template against many lags, centred once.)
template <class A, class B>
double pearson_correlation(const A* a, const B* b, size_t n) {
  double mean_a = 0, mean_b = 0;
  for (size_t j = 0; j < n; ++j) mean_a += a[j], mean_b += b[j];
  mean_a /= double(n), mean_b /= double(n);
  double cov = 0, var_a = 0, var_b = 0;
  for (size_t j = 0; j < n; ++j) {
    const double da = a[j] - mean_a, db = b[j] - mean_b;
    cov += da * db, var_a += da * da, var_b += db * db;
  }
  return var_a > 0 && var_b > 0 ? cov / std::sqrt(var_a * var_b) : 0.0;
}

}  // namespace hlm::dsp
