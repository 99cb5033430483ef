// Per-beat head inputs (see beat_features.h).
#include "tasks/beat_features.h"

#include <algorithm>

#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"

namespace hlm {

std::vector<float> store_rr_features(const TokenStore& store, bool used) {
  std::vector<float> all;
  if (!used) return all;
  all.resize(store.token_count() * kRrFeatureCount);
  for (size_t r = 0; r < store.record_count(); ++r) {
    const auto rec = store.record(r);
    const auto f = rr_features(store.rr_seconds() + rec.offset, rec.length);
    std::copy(f.begin(), f.end(), all.begin() + ptrdiff_t(rec.offset * kRrFeatureCount));
  }
  return all;
}

BeatFeatures::BeatFeatures(const HeadOptions& options, const std::string& codebook)
    : rr_(options.rr_features) {
  if (!options.morphology_features) return;
  if (codebook.empty())
    throw ConfigError(
        "morphology_features need the beat-vq codebook the tokens were made with; this token "
        "store's tokenize stage has none (tokenize with plugin beat-vq, or set "
        "morphology_features: false)");
  std::string metadata;
  auto cb = std::make_shared<dsp::Codebook>(dsp::load_codebook(codebook, &metadata));
  layout_ = codebook_shape_layout(metadata, cb->dim, codebook);
  codebook_ = std::move(cb);
}

int BeatFeatures::count() const {
  return (rr_ ? kRrFeatureCount : 0) + (codebook_ ? kMorphologyFeatureCount : 0);
}

std::vector<float> BeatFeatures::of(const TokenStore& store) const {
  const size_t k = size_t(count());
  if (!codebook_) return store_rr_features(store, rr_);  // RR alone: already beat-major
  std::vector<float> all(store.token_count() * k);
  const std::vector<float> rr = store_rr_features(store, rr_);
  const size_t column = rr_ ? kRrFeatureCount : 0;  // where the shape values start
  for (size_t beat = 0; rr_ && beat < store.token_count(); ++beat)
    std::copy_n(rr.begin() + ptrdiff_t(beat * kRrFeatureCount), kRrFeatureCount,
                all.begin() + ptrdiff_t(beat * k));
  std::vector<int64_t> code;
  for (size_t r = 0; r < store.record_count(); ++r) {
    const auto rec = store.record(r);
    float* out = all.data() + rec.offset * k;
    // Token ids to codebook rows; special tokens (unknown beats) have no shape.
    code.resize(rec.length);
    store.copy_window(rec.offset, rec.length, code.data());
    for (auto& c : code)
      c = c >= int64_t(kFirstContentToken) && c - kFirstContentToken < codebook_->codes()
              ? c - kFirstContentToken
              : -1;
    const auto f = relative_morphology(codebook_->centroids.data(), layout_, code);
    for (size_t i = 0; i < rec.length; ++i)
      std::copy_n(f.begin() + ptrdiff_t(i * kMorphologyFeatureCount), kMorphologyFeatureCount,
                  out + i * k + column);
  }
  return all;
}

}  // namespace hlm
