// A head's input scaling (see input_scaling.h).
#include "tasks/input_scaling.h"

#include <algorithm>
#include <cmath>

namespace hlm {

void InputMoments::add(const float* row) {
  for (size_t j = 0; j < sum_.size(); ++j) {
    const double x = row[j];
    sum_[j] += x;
    sum_sq_[j] += x * x;
  }
  ++rows_;
}

void InputMoments::set(HeadOptions& options) const {
  options.input_mean.clear();
  options.input_scale.clear();
  if (rows_ == 0) return;
  const double n = double(rows_);
  for (size_t j = 0; j < sum_.size(); ++j) {
    const double mean = sum_[j] / n;
    const double spread = std::sqrt(std::max(0.0, sum_sq_[j] / n - mean * mean));
    options.input_mean.push_back(float(mean));
    // Relative to the mean: an input that barely varies around a large value is not blown up.
    options.input_scale.push_back(spread > 1e-6 * (1.0 + std::fabs(mean)) ? float(spread) : 1.0f);
  }
}

void standardise_inputs(std::vector<float>& values, const HeadOptions& options) {
  const size_t k = options.input_mean.size();
  if (k == 0) return;
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = (values[i] - options.input_mean[i % k]) / options.input_scale[i % k];
}

}  // namespace hlm
