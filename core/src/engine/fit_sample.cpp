// Priority sampling of beat features (see fit_sample.h).
#include "engine/fit_sample.h"

#include <algorithm>

#include "hlm/util.h"

namespace hlm {

void FitSample::add(const std::string& record, const Beats& beats) {
  if (beats.feature_dim == 0 || capacity_ == 0) return;
  const uint64_t record_hash = fnv1a64(record);
  std::lock_guard<std::mutex> lock(mutex_);
  feature_dim_ = beats.feature_dim;
  for (size_t i = 0; i < beats.size(); ++i) {
    const uint64_t priority = fnv1a64(&i, sizeof(i), record_hash);
    if (heap_.size() >= capacity_ && priority >= heap_.top().priority) continue;
    const float* row = &beats.features[i * size_t(beats.feature_dim)];
    heap_.push({priority, std::vector<float>(row, row + beats.feature_dim)});
    if (heap_.size() > capacity_) heap_.pop();
  }
}

Beats FitSample::take() {
  std::vector<Row> rows;
  while (!heap_.empty()) {
    rows.push_back(std::move(const_cast<Row&>(heap_.top())));
    heap_.pop();
  }
  std::reverse(rows.begin(), rows.end());
  Beats out;
  out.record = "fit-sample";
  out.feature_dim = feature_dim_;
  for (const auto& r : rows) {
    out.positions.push_back(0);
    out.features.insert(out.features.end(), r.features.begin(), r.features.end());
  }
  return out;
}

}  // namespace hlm
