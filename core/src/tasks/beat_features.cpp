// Per-beat head inputs (see beat_features.h).
#include "tasks/beat_features.h"

#include <algorithm>

#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"

namespace hlm {

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

std::vector<std::string> BeatFeatures::names() const {
  std::vector<std::string> out;
  if (rr_) out.insert(out.end(), kRrFeatureNames, kRrFeatureNames + kRrFeatureCount);
  if (codebook_)
    out.insert(out.end(), kMorphologyFeatureNames,
               kMorphologyFeatureNames + kMorphologyFeatureCount);
  return out;
}

std::vector<float> BeatFeatures::of(const TokenStore& store) const {
  const size_t k = size_t(count());
  std::vector<float> all(store.token_count() * k);
  if (k == 0) return all;
  std::vector<int64_t> code;
  for (size_t r = 0; r < store.record_count(); ++r) {
    const auto rec = store.record(r);
    float* out = all.data() + rec.offset * k;
    size_t column = 0;
    if (rr_) {
      const auto f = rr_features(store.rr_seconds() + rec.offset, rec.length);
      for (size_t i = 0; i < rec.length; ++i)
        std::copy_n(f.begin() + ptrdiff_t(i * kRrFeatureCount), kRrFeatureCount,
                    out + i * k + column);
      column += kRrFeatureCount;
    }
    if (codebook_) {
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
  }
  return all;
}

}  // namespace hlm
