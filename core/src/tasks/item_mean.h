// Items scored by several models of one label (a fold's seeds; on another dataset, every fold
// and seed), each item once with the mean of the probabilities of the models that scored it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "tasks/scored_item.h"

namespace hlm {

class ItemMean {
 public:
  // One model's items; an item already seen (same key) adds its probabilities to the sum.
  void add(std::vector<ScoredItem> scored);
  // Every item seen, in the order first seen, its probabilities (and parts) the mean.
  std::vector<ScoredItem> take();

 private:
  std::vector<ScoredItem> items_;
  std::vector<int> votes_;               // models that scored each item
  std::map<uint64_t, size_t> index_of_;  // key -> index in items_
};

}  // namespace hlm
