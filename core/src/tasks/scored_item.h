// One item a fine-tuned classifier scored (a beat, a segment of beats or a record) with its
// reference class and predicted class probabilities: what evaluate's metrics read.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hlm {

struct ScoredItem {
  uint64_t key = 0;  // beat or segment start (store-wide), or record index: same across models
  size_t record = 0;
  int truth = 0;
  std::vector<float> probs;
  // A blended model's parts (with boosted trees: "head" and "trees"), each its own
  // probabilities, so evaluate can show what each part scores alone; empty otherwise.
  std::map<std::string, std::vector<float>> parts;
  int64_t length = 1;  // beats from `key` the item spans (task af: its segment's; else 1)
};

// The class an item's probabilities predict: the most probable, the first of equals. The
// confusion matrices and the predictions CSV both count it so, and so agree.
inline size_t most_probable(const std::vector<float>& probs) {
  return size_t(std::max_element(probs.begin(), probs.end()) - probs.begin());
}

}  // namespace hlm
