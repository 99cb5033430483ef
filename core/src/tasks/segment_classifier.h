// Classification of segments of consecutive beats (atrial fibrillation in 41 to 512 beats, a
// Challenge 2017 record's class from the segments it is cut into) on a pretrained language
// model: the hidden states of a segment's beats are averaged (with, if chosen, statistics of
// their RR intervals and descriptors) and a head maps that to a class. Shares the fine-tuning
// loop and head options of the beat classifier.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hlm/dsp/rr_features.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "tasks/beat_features.h"
#include "tasks/classifier_parts.h"
#include "tasks/fit_loop.h"
#include "tasks/head_options.h"

namespace hlm {

struct Segment {
  uint64_t start = 0;  // first beat (store-wide index)
  int64_t length = 0;  // at most the segment length; shorter only for a record that is
  size_t record = 0;   // record index in the store
  int label = -1;      // class index, -1 when unknown
};

// Segments of `beats` beats every `stride` beats over the given records; a record shorter
// than `beats` (but at least `min_beats` long) gives one segment of all its beats. label_of
// (record index, first beat in the record, length) gives each segment's class or -1 (left
// out). A tail shorter than `beats` after the last segment is left out, unless cover_tail:
// then one more segment ends at the record's last beat (overlapping the one before), so every
// beat is in a segment (what a record's class is taken from).
std::vector<Segment> make_segments(const TokenStore& store, const std::vector<size_t>& records,
                                   int64_t beats, int64_t stride, int64_t min_beats,
                                   const std::function<int(size_t, uint64_t, int64_t)>& label_of,
                                   bool cover_tail = false);

// Beside the mean hidden state, a segment's head reads these statistics, each standardised over
// the training segments (HeadOptions::input_mean and scale):
// - with descriptors (HeadOptions::descriptors), their mean over the segment's beats;
// - with RR features, the mean and the spread of the beats' RR features, and these quantiles of
//   the change between successive RR intervals (|log(RR after / RR before)|, on a log scale),
//   the irregularity of AF measured so that one missed or extra beat moves it little (unlike
//   the spread);
// - with RR pattern features (HeadOptions::rr_pattern_features), the same quantiles of each
//   interval's smallest change against the few before it (rr_pattern_changes in
//   hlm/dsp/rr_features.h): bigeminy and trigeminy change as much from beat to beat as AF,
//   but repeat;
// - with record rhythm features, the record's extremes (store_record_rhythm_extremes in
//   tasks/beat_features.h);
// - with record statistics (task record), the whole record's row that its trees read
//   (record_statistics in tasks/record_statistics.h), the descriptors by their median: a
//   segment sees segment_beats beats, a record's one premature beat or changing rhythm shows in
//   its quantiles and extremes.
constexpr float kSuccessiveChangeQuantiles[] = {0.25f, 0.5f, 0.75f};
constexpr int kSegmentRrInputs =
    2 * kRrFeatureCount + int(sizeof(kSuccessiveChangeQuantiles) / sizeof(float));
constexpr int kSegmentRrPatternInputs = int(sizeof(kSuccessiveChangeQuantiles) / sizeof(float));
// The quantiles for a batch: rr [rows, beats, kRrFeatureCount], mask [rows, beats] (1 for a
// beat, 0 for padding) -> [rows, quantiles].
at::Tensor successive_change_quantiles(const at::Tensor& rr, const at::Tensor& mask);
// The same quantiles of any per-beat change, [rows, beats], on the same log scale.
at::Tensor change_quantiles(const at::Tensor& change, const at::Tensor& mask);

class SegmentClassifier {
 public:
  SegmentClassifier(std::shared_ptr<Model> model, uint64_t seed, HeadOptions options, int classes);
  // As BeatClassifier::fit, over segments (validation: macro F1 of the validation segments).
  FitResult fit(const TokenStore& store, const std::vector<Segment>& segments,
                const TrainOptions& options, const FitHooks& hooks = {},
                const std::vector<Segment>& validation = {}, const EarlyStopping& early = {});
  // Class probabilities of each segment, row-major [segments x classes].
  std::vector<float> predict(const TokenStore& store, const std::vector<Segment>& segments);
  int classes() const { return classes_; }
  // The head's options, with the input scaling fit() set (what evaluate needs to rebuild it).
  const HeadOptions& options() const { return options_; }
  void save(const std::string& path);
  void load(const std::string& path);

 private:
  // The store's per-beat inputs, beat-major (each empty when not used).
  struct StoreInputs {
    std::vector<float> rr, rhythm, descriptors, pattern;
    std::vector<float> record;  // record-major, record_columns_ per store record
  };
  // A batch of segments: tokens padded with kPad, a mask of real beats, and per-beat inputs.
  struct Batch {
    at::Tensor tokens, mask, rr, rhythm, descriptors, pattern, record;
    Batch to(const torch::Device& device) const;  // each tensor copied there
  };
  StoreInputs store_inputs(const TokenStore& store) const;
  Batch make_batch(int64_t rows, int64_t width) const;
  void fill(const TokenStore& store, const StoreInputs& inputs, const std::vector<Segment>& all,
            const std::vector<size_t>& rows, Batch& batch) const;
  // Calls visit(batch, rows) for `segments` in order, `size` at a time (rows: how many of the
  // batch's rows they fill), each batch as wide as its longest segment.
  void for_each_batch(const TokenStore& store, const StoreInputs& inputs,
                      const std::vector<Segment>& segments, size_t size,
                      const std::function<void(const Batch&, size_t)>& visit) const;
  // predict() with the store's inputs already computed (validation reuses fit's). When
  // `stoppable`, a stop signal ends it (Preempted) between batches; fine-tuning's validation is
  // not cut short: the loop checkpoints right after it, with early stopping's state as an
  // uninterrupted run has it.
  std::vector<float> predict(const TokenStore& store, const std::vector<Segment>& segments,
                             const StoreInputs& inputs, bool stoppable);
  // The statistics the head reads beside the mean hidden state, [rows, statistic_count()],
  // before scaling: the descriptors' means, the RR statistics, the RR pattern's, the record's
  // rhythm extremes.
  at::Tensor statistics(const Batch& batch) const;
  int statistic_count() const;
  // The record statistics' columns (0 without record_statistics), from the options alone.
  int count_record_columns() const;
  // Sets options_.input_mean and scale from the statistics of `segments` (a scale of 1
  // where one does not vary).
  void fit_input_scaling(const TokenStore& store, const StoreInputs& inputs,
                         const std::vector<Segment>& segments);
  // input_mean_ and input_scale_ from options_.input_mean and scale (empty when unscaled).
  void set_scaling_tensors();
  at::Tensor logits(const Batch& batch);
  int descriptor_count() const { return descriptor_inputs(options_); }
  std::shared_ptr<Model> model_;
  HeadOptions options_;
  int classes_;
  int record_columns_ = 0;  // count_record_columns(), once: the options' inputs do not change
  HeadLayers head_;
  torch::Device device_{torch::kCPU};  // the model's: batches are copied there
  at::Tensor input_mean_, input_scale_;
};

}  // namespace hlm
