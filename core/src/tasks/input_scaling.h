// A head's input scaling: each scalar input a head reads beside the backbone's hidden state
// (a beat head's per-beat features, a segment head's statistics) standardised by its mean and
// standard deviation over the training items. Left as they are, these inputs span 0.01 to 5,
// and the head's weights on the small ones learn slowly beside the hidden state's.
#pragma once
#include <cstddef>
#include <vector>

#include "tasks/head_options.h"

namespace hlm {

// Mean and standard deviation of each of `columns` inputs over the rows added.
class InputMoments {
 public:
  explicit InputMoments(size_t columns) : sum_(columns, 0.0), sum_sq_(columns, 0.0) {}
  void add(const float* row);
  // Sets options.input_mean and input_scale (a scale of 1 where an input does not vary against
  // its mean);
  // clears them when no row was added or there are no columns.
  void set(HeadOptions& options) const;

 private:
  std::vector<double> sum_, sum_sq_;
  size_t rows_ = 0;
};

// Standardises `values` (rows of options.input_mean.size() inputs) in place as options say;
// leaves them as they are when options hold no scaling (a head fine-tuned before it existed).
void standardise_inputs(std::vector<float>& values, const HeadOptions& options);

}  // namespace hlm
