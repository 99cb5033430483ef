// What one fine-tuned classifier says about chosen records of a token store, as scored items
// for evaluate: each labelled beat (task beats), each segment (task af) or each record from
// the mean of its segments' probabilities (task record), with the reference class and the
// predicted class probabilities.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hlm/model.h"
#include "hlm/token_store.h"
#include "tasks/boosted_trees.h"
#include "tasks/scored_item.h"
#include "tasks/segment_classifier.h"
#include "tasks/segment_labels.h"
#include "tasks/tree_descriptor_columns.h"

namespace hlm {

// Records scored whole, and records of which only the last `tail` fraction is scored.
struct RecordSelection {
  std::vector<size_t> whole, tails;
  double tail = 0.0;
};

// Task record: one item per record (key: the record's index), its probabilities the mean of its
// segments' (probs: row-major [segments x classes]), in record order.
std::vector<ScoredItem> pool_by_record(const std::vector<Segment>& segments,
                                       const std::vector<float>& probs, size_t classes);

// Task af: each segment's statistics for the boosted trees, as a record's are summarised
// (span_statistics in tasks/record_statistics.h), one row per segment in order.
TreeRows segment_statistics(const TokenStore& store, const std::vector<Segment>& segments,
                            const HeadOptions& options, const StoreDescriptorColumns& medians = {});

// Task record: a labelled record of `records` too short for a segment (fewer beats than
// min_segment_beats: the QRS detector found few) gets an item all the same, its probabilities
// even over the classes, so that every labelled record counts in the scores (the Challenge
// scores every record; leaving one out would score fewer). With boosted trees, which read any
// record's statistics, the blend then follows the trees; without, the first class wins the tie.
// Items stay in record order; a warning names such records.
void add_records_too_short(const TokenStore& store, const std::vector<size_t>& records,
                           const SegmentLabeler& label_of, size_t classes,
                           std::vector<ScoredItem>& items);

// finetune_results: the finetune stage's results (task, classes, head, segment_beats, ...);
// classifier: its classifier artifact; record_labels: the store's record_labels.json (segment
// tasks); trees: the boosted trees artifact of task beats, af or record (empty: none; see
// tasks/boosted_trees.h), blended with the head as finetune_results' "trees" says.
// segment_stride (task af): a segment starts every that many beats; 0, every segment length,
// so that none overlap (each beat in one segment).
std::vector<ScoredItem> score_items(const nlohmann::json& finetune_results,
                                    const std::string& classifier, std::shared_ptr<Model> model,
                                    const TokenStore& store, const RecordSelection& selection,
                                    const std::string& record_labels, const std::string& trees = "",
                                    int64_t segment_stride = 0);

}  // namespace hlm
