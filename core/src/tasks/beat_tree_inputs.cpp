// A beat's row for boosted trees (see beat_tree_inputs.h).
#include "tasks/beat_tree_inputs.h"

#include <limits>

#include "hlm/dsp/beat_morphology.h"
#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"
#include "tasks/beat_features.h"

namespace hlm {

TreeRows beat_tree_rows(const TokenStore& store, const std::vector<uint64_t>& beats,
                        const HeadOptions& options, const std::string& codebook) {
  const BeatFeatures features(options, codebook);
  const size_t k = size_t(features.count());
  dsp::Codebook code_shapes;
  if (!codebook.empty()) code_shapes = dsp::load_codebook(codebook);
  const size_t dim = size_t(code_shapes.dim);
  if (k == 0 && dim == 0)
    throw ConfigError(
        "boosted trees over beats need per-beat inputs or a codebook: set rr_features, "
        "record_rhythm_features, morphology_features or descriptors, or tokenize with beat-vq");
  TreeRows rows;
  // The head inputs' names, in BeatFeatures' order (tasks/beat_features.h).
  auto add = [&rows](const char* const* names, int count) {
    rows.names.insert(rows.names.end(), names, names + count);
  };
  if (options.rr_features) add(kRrFeatureNames, kRrFeatureCount);
  if (options.record_rhythm_features) add(kRecordRhythmFeatureNames, kRecordRhythmFeatureCount);
  if (options.morphology_features) add(kMorphologyFeatureNames, kMorphologyFeatureCount);
  for (int j = 0; j < descriptor_inputs(options); ++j)
    rows.names.push_back("descriptor " + std::to_string(j));
  if (rows.names.size() != k)
    throw InternalError("beat_tree_rows: {} names for {} head inputs", rows.names.size(), k);
  for (size_t j = 0; j < dim; ++j) rows.names.push_back("code centroid " + std::to_string(j));
  const std::vector<float> inputs = features.of(store);
  const int64_t codes = code_shapes.codes();
  rows.values.reserve(beats.size() * rows.columns());
  for (uint64_t beat : beats) {
    rows.values.insert(rows.values.end(), inputs.begin() + ptrdiff_t(beat * k),
                       inputs.begin() + ptrdiff_t((beat + 1) * k));
    if (dim == 0) continue;
    int64_t token = 0;
    store.copy_window(beat, 1, &token);
    const int64_t code = token - int64_t(kFirstContentToken);
    if (code >= 0 && code < codes)
      rows.values.insert(rows.values.end(), code_shapes.centroids.begin() + ptrdiff_t(code * dim),
                         code_shapes.centroids.begin() + ptrdiff_t((code + 1) * dim));
    else
      rows.values.insert(rows.values.end(), dim, std::numeric_limits<float>::quiet_NaN());
  }
  return rows;
}

}  // namespace hlm
