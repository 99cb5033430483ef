// The mean over models of each item's probabilities (see item_mean.h).
#include "tasks/item_mean.h"

#include <utility>

namespace hlm {

void ItemMean::add(std::vector<ScoredItem> scored) {
  for (auto& item : scored) {
    const auto [it, fresh] = index_of_.try_emplace(item.key, items_.size());
    if (fresh) {
      items_.push_back(std::move(item));
      votes_.push_back(1);
      continue;
    }
    ScoredItem& sum = items_[it->second];
    for (size_t c = 0; c < item.probs.size(); ++c) sum.probs[c] += item.probs[c];
    // Every model of one label blends alike, so an item's parts match across them.
    for (const auto& [part, probs] : item.parts)
      for (size_t c = 0; c < probs.size(); ++c) sum.parts.at(part)[c] += probs[c];
    ++votes_[it->second];
  }
}

std::vector<ScoredItem> ItemMean::take() {
  for (size_t i = 0; i < items_.size(); ++i) {
    for (float& p : items_[i].probs) p /= float(votes_[i]);
    for (auto& [part, probs] : items_[i].parts)
      for (float& p : probs) p /= float(votes_[i]);
  }
  votes_.clear();
  index_of_.clear();
  return std::exchange(items_, {});
}

}  // namespace hlm
