// What one fine-tuned classifier says about chosen records of a token store, as scored items
// for evaluate: each labelled beat (task beats), each segment (task af) or each record from
// the mean of its segments' probabilities (task record), with the reference class and the
// predicted class probabilities.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hlm/model.h"
#include "hlm/token_store.h"

namespace hlm {

struct ScoredItem {
  uint64_t key = 0;  // beat or segment start (store-wide), or record index: same across models
  size_t record = 0;
  int truth = 0;
  std::vector<float> probs;
};

// Records scored whole, and records of which only the last `tail` fraction is scored.
struct RecordSelection {
  std::vector<size_t> whole, tails;
  double tail = 0.0;
};

// finetune_results: the finetune stage's results (task, classes, head, segment_beats, ...);
// classifier: its classifier artifact; record_labels: the store's record_labels.json (segment
// tasks).
std::vector<ScoredItem> score_items(const nlohmann::json& finetune_results,
                                    const std::string& classifier, std::shared_ptr<Model> model,
                                    const TokenStore& store, const RecordSelection& selection,
                                    const std::string& record_labels);

}  // namespace hlm
