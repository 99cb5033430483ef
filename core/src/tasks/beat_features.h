// The per-beat inputs a beat classifier's head reads beside the backbone's hidden state, in this
// order: RR features (hlm/dsp/rr_features.h) when HeadOptions::rr_features, the beat's rhythm
// against its whole record (record_rhythm_features, same header) when
// HeadOptions::record_rhythm_features, the rhythm around it (rhythm_context_features, same
// header) when HeadOptions::rhythm_context_features, where its intervals fall among those around
// it (rr_within_context, same header) when HeadOptions::rr_within_context, the beat's shape
// against its record's template
// (hlm/dsp/beat_morphology.h) when HeadOptions::morphology_features, which needs the codebook
// the store was tokenized with, then the store's own descriptors when HeadOptions::descriptors.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "hlm/dsp/beat_morphology.h"
#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/token_store.h"
#include "tasks/head_options.h"

namespace hlm {

// RR features (hlm/dsp/rr_features.h) of every beat of the store, record by record,
// beat-major; empty when not used. The segment classifier reads them too.
std::vector<float> store_rr_features(const TokenStore& store, bool used);
// Each beat's rhythm against its whole record (record_rhythm_features in hlm/dsp/rr_features.h),
// over the record: its smallest values, then its largest (the earliest beat and the longest
// pause against the record's median RR, the most and least irregular stretch), the same for
// every beat of the record; beat-major, empty when not used. A segment head of task record
// reads them: one premature beat or one pause is all that marks many records of Challenge
// 2017's "other rhythm" class, and a mean over the segment dilutes it.
constexpr int kRecordRhythmExtremeCount = 2 * kRecordRhythmFeatureCount;
std::vector<float> store_record_rhythm_extremes(const TokenStore& store, bool used);
// Whether each beat's interval repeats one of the few before it (rr_pattern_changes in
// hlm/dsp/rr_features.h), one value per beat, record by record; empty when not used.
std::vector<float> store_rr_pattern_changes(const TokenStore& store, bool used);

// ConfigError naming the store when it has no descriptors for a head's descriptors input.
void expect_head_descriptors(const TokenStore& store);
// Sets options.descriptor_mean and descriptor_scale from the store's descriptors over the
// beats of `records` but the last `tail` fraction of each (held out; a scale of 1 where a
// descriptor does not vary). ConfigError naming the store when it has no descriptors.
void fit_descriptor_scaling(HeadOptions& options, const TokenStore& store,
                            const std::vector<size_t>& records, double tail = 0.0);
// The store columns a head with these options reads as its descriptors, in its input order:
// options.descriptor_columns (descriptor_prefix), else every one of the store's `count`.
std::vector<size_t> head_descriptor_columns(const HeadOptions& options, size_t count);
// Descriptor values per beat a head with these options reads: 0 when options.descriptors is
// off. InternalError when it is on and fit_descriptor_scaling has not set its scaling.
int descriptor_inputs(const HeadOptions& options);
// The names of those descriptors, in the head's input order, as the trees name their columns:
// the tokenize manifest's (options.descriptor_names, known before the scaling is fitted), else
// "descriptor J" for each of descriptor_inputs(options).
std::vector<std::string> descriptor_input_names(const HeadOptions& options);
// The store's descriptors standardised as options say, beat-major; empty when
// options.descriptors is off. DataError naming the store when it has not the descriptors the
// head was trained on.
std::vector<float> store_descriptors(const TokenStore& store, const HeadOptions& options);

class BeatFeatures {
 public:
  BeatFeatures() = default;
  // codebook: the beat-vq codebook file of the store's tokens; needed (ConfigError naming the
  // problem otherwise) only when options.morphology_features.
  BeatFeatures(const HeadOptions& options, const std::string& codebook);
  int count() const;
  // count() values per beat of the store, beat-major; empty when count() is 0.
  std::vector<float> of(const TokenStore& store) const;

 private:
  // Writes the shape values of every beat of the store into `all` (k values per beat), from
  // column `column` on.
  void add_morphology(const TokenStore& store, size_t k, size_t column,
                      std::vector<float>& all) const;
  bool rr_ = false;
  bool record_rhythm_ = false;
  bool rhythm_context_ = false;
  bool rr_within_context_ = false;
  HeadOptions descriptors_;  // what store_descriptors needs, when options.descriptors
  std::shared_ptr<const dsp::Codebook> codebook_;  // set when morphology features are used
  BeatShapeLayout layout_;
};

}  // namespace hlm
