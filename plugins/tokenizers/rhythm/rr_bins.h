// RR-ratio binning for the rhythm tokenizer (spec/tokenizers.md, "rhythm"): each beat's RR
// interval over the running median of the RR intervals before it, in log-spaced bins.
// Header-only: the plugin and its unit tests share it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hlm/ecg.h"
#include "hlm/tokenizer.h"

namespace hlm::rhythm {

// `bins` bins spaced evenly in log(ratio) from min_ratio to max_ratio. Bin k holds
// [edges[k], edges[k+1]); ratios below min_ratio fall in bin 0, at or above max_ratio in the
// last bin.
class RrBins {
 public:
  RrBins(int bins, double min_ratio, double max_ratio) : edges_(size_t(bins) + 1) {
    // min * (max/min)^(k/bins): with the default 0.5..2.0 and 16 bins the middle edge is
    // exactly 1.0, so a steady rhythm always lands in bin 8.
    for (int k = 0; k <= bins; ++k)
      edges_[size_t(k)] = min_ratio * std::pow(max_ratio / min_ratio, double(k) / double(bins));
    edges_.back() = max_ratio;
  }
  int bins() const { return int(edges_.size()) - 1; }
  const std::vector<double>& edges() const { return edges_; }
  int bin(double ratio) const {
    // The inner edges only: everything below edges[1] is bin 0, at or above edges[bins-1]
    // the last bin.
    const auto first = edges_.begin() + 1, last = edges_.end() - 1;
    return int(std::upper_bound(first, last, ratio) - first);
  }

 private:
  std::vector<double> edges_;
};

// For each beat (positions in samples, non-decreasing), its RR interval divided by the median
// of the up to `median_window` RR intervals before it (an even count takes the mean of the two
// middle values). Beats with no RR interval or no earlier one to compare with (the first two
// of a record) and beats whose median is 0 get 1.0: nothing says they are early or late.
inline std::vector<double> rr_ratios(const std::vector<int64_t>& positions, int median_window) {
  std::vector<double> ratios(positions.size(), 1.0);
  std::vector<int64_t> history;  // the last median_window RR intervals, oldest first
  std::vector<int64_t> sorted;
  history.reserve(size_t(median_window));
  for (size_t i = 1; i < positions.size(); ++i) {
    const int64_t rr = positions[i] - positions[i - 1];
    if (!history.empty()) {
      sorted.assign(history.begin(), history.end());
      const size_t h = sorted.size() / 2;
      std::nth_element(sorted.begin(), sorted.begin() + long(h), sorted.end());
      double median = double(sorted[h]);
      if (sorted.size() % 2 == 0)
        median =
            0.5 * (median + double(*std::max_element(sorted.begin(), sorted.begin() + long(h))));
      if (median > 0) ratios[i] = double(rr) / median;
    }
    if (history.size() == size_t(median_window)) history.erase(history.begin());
    history.push_back(rr);
  }
  return ratios;
}

// The token of a beat of class `c` (kN..kQ) whose ratio fell in `bin`: classes are rows of
// `bins` tokens from `first_token` on (after the special tokens, or after another tokenizer's
// tokens in a vocabulary shared with it).
inline uint32_t rhythm_token(BeatClass c, int bin, int bins,
                             uint32_t first_token = kFirstContentToken) {
  return first_token + uint32_t(c) * uint32_t(bins) + uint32_t(bin);
}

}  // namespace hlm::rhythm
