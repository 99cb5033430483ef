// Per-beat head inputs (see beat_features.h).
#include "tasks/beat_features.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"

namespace hlm {

namespace {

// Per-record features (f(rr_seconds, beats), `count` per beat) of every beat of the store,
// record by record, beat-major.
template <typename PerRecord>
std::vector<float> store_features(const TokenStore& store, int count, PerRecord f) {
  std::vector<float> all(store.token_count() * size_t(count));
  for (size_t r = 0; r < store.record_count(); ++r) {
    const auto rec = store.record(r);
    const auto values = f(store.rr_seconds() + rec.offset, rec.length);
    std::copy(values.begin(), values.end(), all.begin() + ptrdiff_t(rec.offset * size_t(count)));
  }
  return all;
}

// Copies `group` (width values per beat) into columns [column, column + width) of `all`
// (k values per beat).
void place(const std::vector<float>& group, size_t width, size_t k, size_t column,
           std::vector<float>& all) {
  const size_t beats = group.size() / width;
  for (size_t beat = 0; beat < beats; ++beat)
    std::copy_n(group.begin() + ptrdiff_t(beat * width), width,
                all.begin() + ptrdiff_t(beat * k + column));
}

}  // namespace

std::vector<float> store_rr_features(const TokenStore& store, bool used) {
  if (!used) return {};
  return store_features(store, kRrFeatureCount, rr_features);
}

std::vector<float> store_rr_pattern_changes(const TokenStore& store, bool used) {
  if (!used) return {};
  return store_features(store, 1, rr_pattern_changes);
}

std::vector<float> store_record_rhythm_extremes(const TokenStore& store, bool used) {
  if (!used) return {};
  constexpr int k = kRecordRhythmFeatureCount;
  return store_features(store, kRecordRhythmExtremeCount, [](const float* rr, size_t beats) {
    const std::vector<float> rhythm = record_rhythm_features(rr, beats);
    std::vector<float> extremes(2 * k, 0.0f);
    if (beats > 0)
      for (int j = 0; j < k; ++j) {
        float lowest = rhythm[size_t(j)], highest = rhythm[size_t(j)];
        for (size_t b = 1; b < beats; ++b) {
          lowest = std::min(lowest, rhythm[b * k + size_t(j)]);
          highest = std::max(highest, rhythm[b * k + size_t(j)]);
        }
        extremes[size_t(j)] = lowest;
        extremes[size_t(k + j)] = highest;
      }
    std::vector<float> out(beats * 2 * k);
    for (size_t b = 0; b < beats; ++b)
      std::copy(extremes.begin(), extremes.end(), out.begin() + ptrdiff_t(b * 2 * k));
    return out;
  });
}

void expect_head_descriptors(const TokenStore& store) {
  if (store.descriptor_count() == 0)
    throw ConfigError(
        "{}: the head's descriptors input needs a token store with descriptors; this one has "
        "none (HINT: tokenize with beat-vq's template_descriptors, shape_descriptors or "
        "p_wave_descriptors: true, or set descriptors: false)",
        store.path());
}

void fit_descriptor_scaling(HeadOptions& options, const TokenStore& store,
                            const std::vector<size_t>& records, double tail) {
  expect_head_descriptors(store);
  const size_t stored = store.descriptor_count();
  const std::vector<size_t> columns = head_descriptor_columns(options, stored);
  const size_t k = columns.size();
  // Two passes (mean, then spread around it), in double: a descriptor whose mean is large
  // beside its spread keeps its precision.
  auto for_each_value = [&](auto&& visit) {
    for (size_t r : records) {
      const auto rec = store.record(r);
      const size_t beats = size_t(std::floor(double(rec.length) * (1.0 - tail)));
      const float* d = store.descriptors() + rec.offset * stored;
      for (size_t b = 0; b < beats; ++b)
        for (size_t j = 0; j < k; ++j) visit(j, double(d[b * stored + columns[j]]));
    }
  };
  std::vector<double> mean(k, 0.0), spread(k, 0.0);
  double beats = 0;
  for_each_value([&](size_t j, double v) { mean[j] += v, beats += j == 0; });
  options.descriptor_mean.assign(k, 0.0f);
  options.descriptor_scale.assign(k, 1.0f);
  if (beats == 0) return;
  for (double& m : mean) m /= beats;
  for_each_value([&](size_t j, double v) { spread[j] += (v - mean[j]) * (v - mean[j]); });
  for (size_t j = 0; j < k; ++j) {
    const double sd = std::sqrt(spread[j] / beats);
    options.descriptor_mean[j] = float(mean[j]);
    if (sd > 1e-6 * (1.0 + std::abs(mean[j]))) options.descriptor_scale[j] = float(sd);
  }
}

std::vector<size_t> head_descriptor_columns(const HeadOptions& options, size_t count) {
  if (!options.descriptor_columns.empty()) return options.descriptor_columns;
  std::vector<size_t> all(count);
  std::iota(all.begin(), all.end(), size_t{0});
  return all;
}

int descriptor_inputs(const HeadOptions& options) {
  if (!options.descriptors) return 0;
  if (options.descriptor_mean.empty())
    throw InternalError("descriptors input without its scaling (fit_descriptor_scaling first)");
  return int(options.descriptor_mean.size());
}

std::vector<std::string> descriptor_input_names(const HeadOptions& options) {
  if (options.descriptors && !options.descriptor_names.empty()) return options.descriptor_names;
  std::vector<std::string> names;
  for (int j = 0; j < descriptor_inputs(options); ++j)
    names.push_back("descriptor " + std::to_string(j));
  return names;
}

std::vector<float> store_descriptors(const TokenStore& store, const HeadOptions& options) {
  const size_t k = size_t(descriptor_inputs(options));
  if (k == 0) return {};
  const size_t stored = store.descriptor_count();
  const std::vector<size_t> columns = head_descriptor_columns(options, stored);
  const bool chosen = !options.descriptor_columns.empty();
  if (chosen ? stored <= *std::max_element(columns.begin(), columns.end()) : stored != k)
    throw DataError(
        "{}: the classifier reads {} descriptors per beat{}, this token store has {} (HINT: "
        "tokenize it with the tokenizer parameters of the fine-tuning store, "
        "template_descriptors included)",
        store.path(), k, chosen ? " among more" : "", stored);
  const uint64_t beats = store.token_count();
  std::vector<float> out(beats * k);
  for (uint64_t b = 0; b < beats; ++b) {
    const float* d = store.descriptors() + b * stored;
    for (size_t j = 0; j < k; ++j)
      out[b * k + j] = (d[columns[j]] - options.descriptor_mean[j]) / options.descriptor_scale[j];
  }
  return out;
}

BeatFeatures::BeatFeatures(const HeadOptions& options, const std::string& codebook)
    : rr_(options.rr_features),
      record_rhythm_(options.record_rhythm_features),
      rhythm_context_(options.rhythm_context_features),
      rr_within_context_(options.rr_within_context) {
  if (descriptor_inputs(options) > 0) descriptors_ = options;
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
  return (rr_ ? kRrFeatureCount : 0) + (record_rhythm_ ? kRecordRhythmFeatureCount : 0) +
         (rhythm_context_ ? kRhythmContextFeatureCount : 0) +
         (rr_within_context_ ? kRrWithinContextCount : 0) +
         (codebook_ ? kMorphologyFeatureCount : 0) + descriptor_inputs(descriptors_);
}

std::vector<float> BeatFeatures::of(const TokenStore& store) const {
  const size_t k = size_t(count());
  if (k == 0) return {};
  std::vector<float> all(store.token_count() * k);
  size_t column = 0;
  if (rr_) {
    place(store_rr_features(store, true), kRrFeatureCount, k, column, all);
    column += kRrFeatureCount;
  }
  if (record_rhythm_) {
    place(store_features(store, kRecordRhythmFeatureCount, record_rhythm_features),
          kRecordRhythmFeatureCount, k, column, all);
    column += kRecordRhythmFeatureCount;
  }
  if (rhythm_context_) {
    place(store_features(store, kRhythmContextFeatureCount, rhythm_context_features),
          kRhythmContextFeatureCount, k, column, all);
    column += kRhythmContextFeatureCount;
  }
  if (rr_within_context_) {
    place(store_features(store, kRrWithinContextCount, rr_within_context), kRrWithinContextCount, k,
          column, all);
    column += kRrWithinContextCount;
  }
  if (codebook_) {
    add_morphology(store, k, column, all);
    column += kMorphologyFeatureCount;
  }
  if (const int width = descriptor_inputs(descriptors_); width > 0)
    place(store_descriptors(store, descriptors_), size_t(width), k, column, all);
  return all;
}

void BeatFeatures::add_morphology(const TokenStore& store, size_t k, size_t column,
                                  std::vector<float>& all) const {
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
}

}  // namespace hlm
