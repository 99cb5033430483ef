// A beat's row for boosted trees (see beat_tree_inputs.h).
#include "tasks/beat_tree_inputs.h"

#include <limits>

#include "hlm/dsp/beat_morphology.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"
#include "tasks/beat_features.h"

namespace hlm {

BeatTreeInputs::BeatTreeInputs(const TokenStore& store, const HeadOptions& options,
                               const std::string& codebook,
                               const StoreDescriptorColumns& store_columns)
    : store_(store) {
  expect_tree_descriptors(store, store_columns);
  const BeatFeatures features(options, codebook);
  inputs_width_ = size_t(features.count());
  if (!codebook.empty()) codebook_ = dsp::load_codebook(codebook);
  if (inputs_width_ == 0 && codebook_.empty())
    throw ConfigError(
        "boosted trees over beats need per-beat inputs or a codebook: set rr_features, "
        "record_rhythm_features, rhythm_context_features, rr_within_context, "
        "morphology_features or descriptors, "
        "or tokenize with beat-vq");
  names_ = names_of(options, codebook_.dim, store_columns);
  if (names_.size() != inputs_width_ + (options.descriptors ? 0 : store_columns.columns.size()) +
                           size_t(codebook_.dim))
    throw InternalError("BeatTreeInputs: {} names for {} head inputs", names_.size(),
                        inputs_width_);
  if (!options.descriptors) store_columns_ = store_columns.columns;
  inputs_ = features.of(store);
}

std::vector<std::string> BeatTreeInputs::names_of(const HeadOptions& options, int codebook_dim,
                                                  const StoreDescriptorColumns& store_columns) {
  std::vector<std::string> names;
  // The head inputs' names, in BeatFeatures' order (tasks/beat_features.h).
  auto add = [&names](const char* const* from, int count) {
    names.insert(names.end(), from, from + count);
  };
  if (options.rr_features) add(kRrFeatureNames, kRrFeatureCount);
  if (options.record_rhythm_features) add(kRecordRhythmFeatureNames, kRecordRhythmFeatureCount);
  if (options.rhythm_context_features) add(kRhythmContextFeatureNames, kRhythmContextFeatureCount);
  if (options.rr_within_context) add(kRrWithinContextNames, kRrWithinContextCount);
  if (options.morphology_features) add(kMorphologyFeatureNames, kMorphologyFeatureCount);
  for (const std::string& name : descriptor_input_names(options)) names.push_back(name);
  if (!options.descriptors)
    for (size_t j = 0; j < store_columns.columns.size(); ++j)
      names.push_back(store_columns.name(j));
  for (int j = 0; j < codebook_dim; ++j) names.push_back("code centroid " + std::to_string(j));
  return names;
}

std::vector<std::string> BeatTreeInputs::column_names(const HeadOptions& options,
                                                      const std::string& codebook,
                                                      const StoreDescriptorColumns& store_columns) {
  return names_of(options, codebook.empty() ? 0 : dsp::load_codebook(codebook).dim, store_columns);
}

TreeRows BeatTreeInputs::rows(const std::vector<uint64_t>& beats) const {
  const size_t k = inputs_width_, dim = size_t(codebook_.dim);
  const int64_t codes = codebook_.codes();
  TreeRows rows;
  rows.names = names_;
  rows.values.reserve(beats.size() * rows.columns());
  for (uint64_t beat : beats) {
    rows.values.insert(rows.values.end(), inputs_.begin() + ptrdiff_t(beat * k),
                       inputs_.begin() + ptrdiff_t((beat + 1) * k));
    if (!store_columns_.empty()) {
      const float* descriptors = store_.descriptors() + beat * store_.descriptor_count();
      for (size_t column : store_columns_) rows.values.push_back(descriptors[column]);
    }
    if (dim == 0) continue;
    int64_t token = 0;
    store_.copy_window(beat, 1, &token);
    const int64_t code = token - int64_t(kFirstContentToken);
    if (code >= 0 && code < codes)
      rows.values.insert(rows.values.end(), codebook_.centroids.begin() + ptrdiff_t(code * dim),
                         codebook_.centroids.begin() + ptrdiff_t((code + 1) * dim));
    else
      rows.values.insert(rows.values.end(), dim, std::numeric_limits<float>::quiet_NaN());
  }
  return rows;
}

}  // namespace hlm
