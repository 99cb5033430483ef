// Segment classification (see segment_classifier.h).
#include "tasks/segment_classifier.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "distributed/preemption.h"
#include "eval/classification_metrics.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"
#include "tasks/beat_features.h"
#include "tasks/classifier_parts.h"
#include "tasks/input_scaling.h"
#include "tasks/record_statistics.h"
#include "train/autocast_guard.h"
#include "train/train_device.h"

namespace hlm {

std::vector<Segment> make_segments(const TokenStore& store, const std::vector<size_t>& records,
                                   int64_t beats, int64_t stride, int64_t min_beats,
                                   const std::function<int(size_t, uint64_t, int64_t)>& label_of,
                                   bool cover_tail) {
  std::vector<Segment> out;
  for (size_t r : records) {
    const auto rec = store.record(r);
    const int64_t n = int64_t(rec.length);
    if (n < min_beats) continue;
    for (int64_t first = 0;; first += std::max<int64_t>(1, stride)) {
      int64_t length = std::min(beats, n - first);
      if (length < std::min(beats, n)) {
        // A short tail: left to the segment before it, or with cover_tail, the last full
        // segment of the record, ending at its last beat.
        if (!cover_tail) break;
        first = n - beats;
        length = beats;
      }
      const int label = label_of(r, uint64_t(first), length);
      if (label >= 0) out.push_back({rec.offset + uint64_t(first), length, r, label});
      if (first + length >= n) break;
    }
  }
  return out;
}

SegmentClassifier::SegmentClassifier(std::shared_ptr<Model> model, uint64_t seed,
                                     HeadOptions options, int classes)
    : model_(std::move(model)), options_(std::move(options)), classes_(classes) {
  torch::manual_seed(seed);
  record_columns_ = count_record_columns();
  head_ = HeadLayers(model_->d_model() + statistic_count(), options_.hidden_units, classes_);
  device_ = device_of(model_->module());  // the head computes where the model does
  head_.to(device_);
  if (!options_.input_mean.empty() && options_.input_mean.size() != size_t(statistic_count()))
    throw DataError(
        "the segment head was fine-tuned with {} scaled statistics and reads {}; re-run the "
        "finetune stage",
        options_.input_mean.size(), statistic_count());
  set_scaling_tensors();
}

void SegmentClassifier::set_scaling_tensors() {
  input_mean_ = torch::tensor(options_.input_mean).to(device_);
  input_scale_ = torch::tensor(options_.input_scale).to(device_);
}

SegmentClassifier::Batch SegmentClassifier::Batch::to(const torch::Device& device) const {
  return {to_device(tokens, device), to_device(mask, device),        to_device(rr, device),
          to_device(rhythm, device), to_device(descriptors, device), to_device(pattern, device),
          to_device(record, device)};
}

namespace {

// The descriptors a head's record statistics take by their median: every store column it reads
// (those descriptor_prefix chose, else all of them).
StoreDescriptorColumns all_descriptors(const HeadOptions& options) {
  StoreDescriptorColumns all;
  if (options.descriptors)
    all.columns = head_descriptor_columns(options, size_t(descriptor_inputs(options)));
  return all;
}

}  // namespace

int SegmentClassifier::count_record_columns() const {
  if (!options_.record_statistics) return 0;
  return int(record_statistics_names(options_, all_descriptors(options_)).size());
}

int SegmentClassifier::statistic_count() const {
  return descriptor_count() + (options_.rr_features ? kSegmentRrInputs : 0) +
         (options_.rr_pattern_features ? kSegmentRrPatternInputs : 0) +
         (options_.record_rhythm_features ? kRecordRhythmExtremeCount : 0) + record_columns_;
}

SegmentClassifier::StoreInputs SegmentClassifier::store_inputs(const TokenStore& store) const {
  StoreInputs inputs{store_rr_features(store, options_.rr_features),
                     store_record_rhythm_extremes(store, options_.record_rhythm_features),
                     store_descriptors(store, options_),
                     store_rr_pattern_changes(store, options_.rr_pattern_features),
                     {}};
  if (options_.record_statistics) {
    std::vector<size_t> records(store.record_count());
    for (size_t r = 0; r < records.size(); ++r) records[r] = r;
    inputs.record = record_statistics(store, records, options_, all_descriptors(options_)).values;
    // A median the record has no value for (trees route it as missing): the head reads 0.
    for (float& v : inputs.record)
      if (std::isnan(v)) v = 0.0f;
  }
  return inputs;
}

SegmentClassifier::Batch SegmentClassifier::make_batch(int64_t rows, int64_t width) const {
  return {torch::empty({rows, width}, torch::kLong),
          torch::empty({rows, width}, torch::kFloat32),
          torch::empty({rows, width, kRrFeatureCount}, torch::kFloat32),
          torch::empty({rows, width, kRecordRhythmExtremeCount}, torch::kFloat32),
          torch::empty({rows, width, descriptor_count()}, torch::kFloat32),
          torch::empty({rows, width}, torch::kFloat32),
          torch::empty({rows, record_columns_}, torch::kFloat32)};
}

void SegmentClassifier::fill(const TokenStore& store, const StoreInputs& inputs,
                             const std::vector<Segment>& all, const std::vector<size_t>& rows,
                             Batch& batch) const {
  batch.tokens.fill_(int64_t(kPad));
  batch.mask.zero_();
  batch.rr.zero_();
  batch.rhythm.zero_();
  batch.descriptors.zero_();
  batch.pattern.zero_();
  batch.record.zero_();
  const int64_t width = batch.tokens.size(1), k = descriptor_count(), c = record_columns_;
  for (size_t row = 0; row < rows.size(); ++row) {
    const Segment& s = all[rows[row]];
    const int64_t first = int64_t(row) * width;
    store.copy_window(s.start, size_t(s.length), batch.tokens.data_ptr<int64_t>() + first);
    std::fill_n(batch.mask.data_ptr<float>() + first, s.length, 1.0f);
    if (!inputs.rr.empty())
      std::copy_n(inputs.rr.begin() + ptrdiff_t(s.start * kRrFeatureCount),
                  s.length * kRrFeatureCount, batch.rr.data_ptr<float>() + first * kRrFeatureCount);
    if (!inputs.rhythm.empty())
      std::copy_n(inputs.rhythm.begin() + ptrdiff_t(s.start * kRecordRhythmExtremeCount),
                  s.length * kRecordRhythmExtremeCount,
                  batch.rhythm.data_ptr<float>() + first * kRecordRhythmExtremeCount);
    if (!inputs.descriptors.empty())
      std::copy_n(inputs.descriptors.begin() + ptrdiff_t(s.start * uint64_t(k)), s.length * k,
                  batch.descriptors.data_ptr<float>() + first * k);
    if (!inputs.pattern.empty())
      std::copy_n(inputs.pattern.begin() + ptrdiff_t(s.start), s.length,
                  batch.pattern.data_ptr<float>() + first);
    if (!inputs.record.empty())
      std::copy_n(inputs.record.begin() + ptrdiff_t(s.record * size_t(c)), c,
                  batch.record.data_ptr<float>() + int64_t(row) * c);
  }
}

void SegmentClassifier::for_each_batch(
    const TokenStore& store, const StoreInputs& inputs, const std::vector<Segment>& segments,
    size_t size, const std::function<void(const Batch&, size_t)>& visit) const {
  for (size_t first = 0; first < segments.size(); first += size) {
    std::vector<size_t> rows;
    int64_t width = 1;
    for (size_t i = first; i < std::min(segments.size(), first + size); ++i) {
      rows.push_back(i);
      width = std::max(width, segments[i].length);
    }
    Batch batch = make_batch(int64_t(rows.size()), width);
    fill(store, inputs, segments, rows, batch);
    visit(batch, rows.size());
  }
}

at::Tensor successive_change_quantiles(const at::Tensor& rr, const at::Tensor& mask) {
  // |log(RR after / RR before)| of each beat: the local RR of both features cancels.
  return change_quantiles((rr.select(-1, 1) - rr.select(-1, 0)).abs(), mask);
}

at::Tensor change_quantiles(const at::Tensor& change, const at::Tensor& mask) {
  // Padding sorts last; quantile q of a row of n beats is its floor(q (n - 1))-th value.
  const auto sorted = std::get<0>(change.masked_fill(mask < 0.5f, 1e9f).sort(1));
  const auto last = (mask.sum(1, /*keepdim=*/true) - 1.0f).clamp_min(0.0f);
  std::vector<at::Tensor> out;
  for (const float q : kSuccessiveChangeQuantiles) {
    const auto at = (last * q).floor().to(torch::kLong);
    out.push_back(sorted.gather(1, at));
  }
  // On a log scale, floored at a 1 ms change in a 1 s interval: the values span decades (0.01
  // in sinus rhythm, 0.2 in AF), and a linear head weighs them like the hidden state's.
  return (torch::cat(out, 1) + 1e-3f).log();
}

namespace {

// Mean over each segment's beats, padding left out: values [rows, beats, k], mask [rows, beats].
at::Tensor masked_mean(const at::Tensor& values, const at::Tensor& mask) {
  const auto m = mask.unsqueeze(-1).to(values.dtype());
  return (values * m).sum(1) / m.sum(1).clamp_min(1.0);
}

}  // namespace

at::Tensor SegmentClassifier::statistics(const Batch& batch) const {
  const at::Tensor& mask = batch.mask;
  const at::Tensor& rr = batch.rr;
  std::vector<at::Tensor> parts;
  if (options_.descriptors) parts.push_back(masked_mean(batch.descriptors, mask));
  if (options_.rr_features) {
    const auto mean = masked_mean(rr, mask);
    parts.push_back(mean);
    parts.push_back(masked_mean((rr - mean.unsqueeze(1)).pow(2), mask).sqrt());
    parts.push_back(successive_change_quantiles(rr, mask));
  }
  if (options_.rr_pattern_features) parts.push_back(change_quantiles(batch.pattern, mask));
  // The same for every beat of a record, so the mean is the record's value.
  if (options_.record_rhythm_features) parts.push_back(masked_mean(batch.rhythm, mask));
  if (options_.record_statistics) parts.push_back(batch.record);
  if (parts.empty()) return torch::empty({mask.size(0), 0}, torch::kFloat32);
  return torch::cat(parts, -1);
}

void SegmentClassifier::fit_input_scaling(const TokenStore& store, const StoreInputs& inputs,
                                          const std::vector<Segment>& segments) {
  options_.input_mean.clear();
  options_.input_scale.clear();
  if (statistic_count() > 0) {
    torch::NoGradGuard no_grad;
    InputMoments moments{size_t(statistic_count())};
    for_each_batch(store, inputs, segments, 256, [&](const Batch& batch, size_t rows) {
      const auto values = statistics(batch).contiguous();
      for (size_t row = 0; row < rows; ++row)
        moments.add(values.data_ptr<float>() + row * size_t(statistic_count()));
    });
    moments.set(options_);
  }
  set_scaling_tensors();
}

at::Tensor SegmentClassifier::logits(const Batch& host) {
  const Batch batch = host.to(device_);
  auto pooled = masked_mean(backbone_hidden(*model_, options_, batch.tokens), batch.mask);
  if (statistic_count() == 0) return head_(pooled);
  auto stats = statistics(batch);
  if (!options_.input_mean.empty()) stats = (stats - input_mean_) / input_scale_;
  return head_(torch::cat({pooled, stats.to(pooled.dtype())}, -1));
}

FitResult SegmentClassifier::fit(const TokenStore& store, const std::vector<Segment>& segments,
                                 const TrainOptions& o, const FitHooks& hooks,
                                 const std::vector<Segment>& validation,
                                 const EarlyStopping& early) {
  if (segments.empty()) throw DataError("{}: no labelled segments to fine-tune on", store.path());
  torch::nn::Module bundle;
  bundle_classifier(bundle, *model_, head_);
  std::vector<double> counts(size_t(classes_), 0.0);
  int64_t width = 0;
  for (const auto& s : segments) {
    counts[size_t(s.label)] += 1;
    width = std::max(width, s.length);
  }
  const auto weights = torch::tensor(loss_weights(counts, options_.class_weights)).to(device_);
  const StoreInputs inputs = store_inputs(store);
  // Recomputed on a resume: the same segments give the same scaling.
  fit_input_scaling(store, inputs, segments);
  std::vector<size_t> order(segments.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(o.seed);
  std::shuffle(order.begin(), order.end(), rng);
  Batch batch = make_batch(o.batch, width);
  auto labels = torch::empty({o.batch}, torch::kLong);

  FitLoop loop;
  loop.bundle = &bundle;
  loop.params = trainable_parameters(*model_, options_, head_);
  loop.head_lr_scale = options_.lr_scale;
  loop.train_mode = [&] {
    if (options_.backbone != "frozen") model_->module().train();
  };
  loop.loss = [&](int64_t micro) {
    std::vector<size_t> rows;
    for (int64_t row = 0; row < o.batch; ++row)
      rows.push_back(order[size_t(micro * o.batch + row) % order.size()]);
    fill(store, inputs, segments, rows, batch);
    for (size_t row = 0; row < rows.size(); ++row)
      labels[int64_t(row)] = int64_t(segments[rows[row]].label);
    at::Tensor logits;
    {
      const Bf16Autocast autocast(o.bf16, device_.type());
      logits = this->logits(batch);
    }
    return torch::nn::functional::cross_entropy(
        logits.to(torch::kFloat32), to_device(labels, device_),
        torch::nn::functional::CrossEntropyFuncOptions().weight(weights));
  };
  if (!validation.empty())
    loop.validate = [&] {
      const auto probs = predict(store, validation, inputs, /*stoppable=*/false);
      eval::Confusion m{size_t(classes_)};
      for (size_t i = 0; i < validation.size(); ++i) {
        const float* p = probs.data() + i * size_t(classes_);
        m.add(size_t(validation[i].label), size_t(std::max_element(p, p + classes_) - p));
      }
      return eval::macro_f1(m);
    };
  return run_fit_loop(loop, o, hooks, early);
}

std::vector<float> SegmentClassifier::predict(const TokenStore& store,
                                              const std::vector<Segment>& segments) {
  return predict(store, segments, store_inputs(store), /*stoppable=*/true);
}

std::vector<float> SegmentClassifier::predict(const TokenStore& store,
                                              const std::vector<Segment>& segments,
                                              const StoreInputs& inputs, bool stoppable) {
  torch::NoGradGuard no_grad;
  model_->module().eval();
  std::vector<float> out;
  out.reserve(segments.size() * size_t(classes_));
  for_each_batch(store, inputs, segments, 16, [&](const Batch& batch, size_t) {
    if (stoppable && stop_signal_received())
      throw Preempted("inference stopped by a signal; nothing to keep");
    const auto probs =
        torch::softmax(logits(batch).to(torch::kFloat32), -1).to(torch::kCPU).contiguous();
    out.insert(out.end(), probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
  });
  return out;
}

void SegmentClassifier::save(const std::string& path) { save_classifier(*model_, head_, path); }

void SegmentClassifier::load(const std::string& path) { load_classifier(*model_, head_, path); }

}  // namespace hlm
