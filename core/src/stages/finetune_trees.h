// finetune's boosted trees beside the head: fitted on the training items' rows (a beat's inputs,
// a record's or a segment's statistics), cut back on the validation items, boosted again on
// both with trees_refit, and their share of the blend with the head fixed (trees_weight) or fit
// on the validation items' log loss.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/stage.h"
#include "hlm/token_store.h"
#include "tasks/annotated_beat_rows.h"
#include "tasks/beat_classifier.h"
#include "tasks/boosted_trees.h"
#include "tasks/head_options.h"
#include "tasks/segment_classifier.h"
#include "tasks/segment_labels.h"
#include "tasks/tree_descriptor_columns.h"
#include "train/train_options.h"

namespace hlm {

// The trees' share that says "fit it on the validation records".
constexpr double kWeightFromValidation = -1.0;

// The trees boosted on the training items, cut back on the validation items; with
// trees_refit, boosted again on both together for the rounds the validation items kept, so the
// trees learn from every labelled record (on DS1 the validation records are two of 17-18
// patients). The blend's share is still fit on the first trees (`held_out`), which were only
// cut back on the validation records, not trained on them, and is applied unchanged to the
// refit trees.
struct FittedTrees {
  BoostedTrees held_out;
  std::optional<BoostedTrees> refit;  // with trees_refit: the trees saved and evaluated
  const BoostedTrees& kept() const { return refit ? *refit : held_out; }
};

// The trees' share of the blend, and how many validation items (beats, or records) it was fit
// on: 0 when trees_weight fixed it.
struct BlendWeight {
  double share = 0.0;
  size_t items = 0;
};

// The columns the trees do not read (trees_leave_out: name prefixes).
std::vector<std::string> trees_leave_out(const StageContext& ctx);

// finetune's trees_annotated_beats: a list of {dir, records, annotator}.
std::vector<AnnotatedBeatSource> annotated_sources(const StageContext& ctx);

// What the results keep of the trees: the share and where it came from, the rounds, the
// class weights, the columns' names.
nlohmann::json trees_results(const StageContext& ctx, const HeadOptions& head,
                             const FittedTrees& trees, const BlendWeight& weight,
                             const std::vector<std::string>& names);

// The store's descriptor columns evaluate gives the trees (score_items' fitted_store_columns).
void keep_store_columns(const StoreDescriptorColumns& store_columns, nlohmann::json& trees);

// Task beats: the trees over the training beats' rows, saved to `path`, and their results.
nlohmann::json fit_beat_trees(const StageContext& ctx, const TokenStore& store,
                              const HeadOptions& head, const std::string& codebook,
                              const StoreDescriptorColumns& store_columns,
                              BeatClassifier& classifier, const std::vector<BeatWindow>& windows,
                              const std::vector<BeatWindow>& validation_windows,
                              const TrainOptions& train_options, const std::string& path);

// Task record: the trees over the training records' statistics; `names` gets their names.
FittedTrees fit_record_trees(const StageContext& ctx, const TokenStore& store,
                             const HeadOptions& head, const StoreDescriptorColumns& store_columns,
                             const SegmentLabeler& label_of, const std::vector<std::string>& train,
                             const std::vector<std::string>& validation, int classes,
                             const TrainOptions& train_options, std::vector<std::string>& names);

// Task af: the trees over the training segments' statistics; `names` gets their names.
FittedTrees fit_segment_trees(const StageContext& ctx, const TokenStore& store,
                              const HeadOptions& head, const StoreDescriptorColumns& store_columns,
                              const std::vector<Segment>& train,
                              const std::vector<Segment>& validation, int classes,
                              const TrainOptions& train_options, std::vector<std::string>& names);

// Task af: the share with the lowest log loss on the validation segments.
BlendWeight validation_segment_blend_weight(const StageContext& ctx, SegmentClassifier& classifier,
                                            const BoostedTrees& trees, const TokenStore& store,
                                            const HeadOptions& head,
                                            const StoreDescriptorColumns& store_columns,
                                            const std::vector<Segment>& validation_segments);

// Task record: the share with the lowest log loss on the validation records, each scored as
// evaluate scores a record.
BlendWeight validation_blend_weight(const StageContext& ctx, SegmentClassifier& classifier,
                                    const BoostedTrees& trees, const TokenStore& store,
                                    const HeadOptions& head,
                                    const StoreDescriptorColumns& store_columns,
                                    const std::vector<Segment>& validation_segments,
                                    const std::vector<size_t>& validation_records,
                                    const SegmentLabeler& label_of);

}  // namespace hlm
