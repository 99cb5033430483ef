// A bounded, deterministic sample of beat features for fitting a tokenizer's codebook: each
// beat gets a pseudo-random priority from (record, index) and the `capacity` lowest are kept,
// so the sample is uniform, does not depend on which thread finished first, and memory stays
// at capacity x feature_dim floats however large the dataset is.
#pragma once
#include <cstdint>
#include <mutex>
#include <queue>
#include <string>
#include <vector>

#include "hlm/tokenizer.h"

namespace hlm {

class FitSample {
 public:
  explicit FitSample(size_t capacity) : capacity_(capacity) {}
  // Offers every beat of a record (thread-safe). Beats without features are ignored.
  void add(const std::string& record, const Beats& beats);
  // The kept beats as one Beats (features and placeholder positions), lowest priority first.
  Beats take();
  size_t size() const { return heap_.size(); }

 private:
  struct Row {
    uint64_t priority;
    std::vector<float> features;
    bool operator<(const Row& other) const { return priority < other.priority; }
  };
  size_t capacity_;
  int feature_dim_ = 0;
  std::priority_queue<Row> heap_;  // the highest kept priority on top, evicted first
  std::mutex mutex_;
};

}  // namespace hlm
