// How a classification head is built and trained on a pretrained backbone; the finetune
// stage's params of the same names, kept in its results so evaluate rebuilds the same head.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hlm {

struct HeadOptions {
  std::string backbone = "full";  // full (fine-tuned), frozen (linear probe), scratch
  bool rr_features = false;       // RR features of each beat (dsp/rr_features.h) as input
  // Each beat's rhythm against its whole record (record_rhythm_features in dsp/rr_features.h)
  // as input: task beats; a segment head (task record) reads their extremes over the record
  // (store_record_rhythm_extremes in tasks/beat_features.h).
  bool record_rhythm_features = false;
  // The irregularity of the rhythm around each beat, its own intervals left out
  // (rhythm_context_features in dsp/rr_features.h), as input: task beats.
  bool rhythm_context_features = false;
  // Where each beat's RR before and after fall among the intervals around it (rr_within_context
  // in dsp/rr_features.h), as input: task beats.
  bool rr_within_context = false;
  // Whether the rhythm repeats (rr_pattern_changes in dsp/rr_features.h): segment heads (tasks
  // af and record) read its quartiles over the segment, a record's trees its quantiles over
  // the record. Beside rr_features.
  bool rr_pattern_features = false;
  // Each beat's shape against its record's template (dsp/beat_morphology.h) as input: task
  // beats, beat-vq tokens.
  bool morphology_features = false;
  // The token store's per-beat descriptors (hlm/tokenizer.h's Beats::descriptors, such as
  // beat-vq's template_descriptors) as input, each standardised by the mean and scale it has
  // over the training records' beats (set by fit_descriptor_scaling, kept in the results).
  bool descriptors = false;
  // The store's columns the head reads as its descriptors (finetune's descriptor_prefix: those
  // whose names begin with it), in order; empty: every one. Kept in the results for evaluate.
  std::vector<size_t> descriptor_columns;
  // The tokenize manifest's names of the columns the head reads, in order (empty where the
  // manifest names none): the trees' columns carry them (trees_leave_out can name them), and
  // evaluate reads another store only where it names the same ones.
  std::vector<std::string> descriptor_names;
  std::vector<float> descriptor_mean, descriptor_scale;
  // Task record: its record's statistics, the row a record's trees read
  // (tasks/record_statistics.h: each per-beat input above summarised over the whole record,
  // the descriptors by their median), beside each segment's own statistics.
  bool record_statistics = false;
  // The head's scalar inputs (a beat head's per-beat features, a segment head's statistics),
  // each standardised by its mean and scale over the training items (tasks/input_scaling.h):
  // set by the classifier's fit, kept in the results for evaluate. Empty: unscaled (a head
  // fine-tuned before the scaling existed, or one without such inputs).
  std::vector<float> input_mean, input_scale;
  // Units of a hidden layer between the inputs and the classes (classifier_parts.h); 0: the
  // head is one linear layer.
  int hidden_units = 0;
  std::string class_weights = "sqrt";  // loss weight per class: sqrt, inverse (frequency), none
  // The head's learning rate over the backbone's. A fresh head on a pretrained backbone wants
  // larger steps (discriminative rates, Howard & Ruder 2018): Adam moves each weight about
  // lr per step, so at the backbone's rate a head weight on a handful of RR statistics stays
  // small beside the hundreds of hidden-state weights.
  double lr_scale = 1.0;
  static HeadOptions from_json(const nlohmann::json& params);  // ConfigError on bad values
  nlohmann::json to_json() const;
  // Refuses (ConfigError) a feature that does not describe `task`'s items: the single-beat
  // features with a segment task, rr_pattern_features without a segment task's rr_features,
  // record_rhythm_features with task af, record_statistics but with task record and something
  // to summarise.
  void check_task(const std::string& task) const;
};

// Loss weight per class from its count n among the training items (each count taken as n + 1,
// so an absent class stays finite), with f its share: 1/sqrt(f) (rare classes such as S and F
// count more without swamping N), 1/f (every class weighs as much in total), or 1 ("none").
std::vector<float> loss_weights(const std::vector<double>& counts, const std::string& scheme);

}  // namespace hlm
