// Fine-tuning and inference of the beat classifier (see beat_classifier.h).
#include "tasks/beat_classifier.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "distributed/preemption.h"
#include "eval/classification_metrics.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "tasks/classifier_parts.h"
#include "tasks/input_scaling.h"
#include "train/autocast_guard.h"
#include "train/train_device.h"

namespace hlm {

std::vector<BeatWindow> beat_windows(const TokenStore& store, const std::vector<size_t>& records,
                                     int64_t context, double from, double to) {
  std::vector<BeatWindow> windows;
  const int64_t stride = std::max<int64_t>(1, context / 2);
  for (size_t r : records) {
    const auto rec = store.record(r);
    const int64_t first = int64_t(double(rec.length) * from);
    const int64_t n = int64_t(double(rec.length) * to) - first, length = std::min(context, n);
    const uint64_t offset = rec.offset + uint64_t(first);
    int64_t covered = 0;  // beats of this record already kept by an earlier window
    for (int64_t s = 0; covered < n; s += stride) {
      const int64_t start = std::min(s, n - length);
      windows.push_back({offset + uint64_t(start), length, covered - start});
      covered = start + length;
    }
  }
  return windows;
}

std::vector<uint64_t> kept_beats(const std::vector<BeatWindow>& windows) {
  std::vector<uint64_t> beats;
  for (const auto& w : windows)
    for (int64_t i = w.keep_from; i < w.length; ++i) beats.push_back(w.start + uint64_t(i));
  return beats;
}

std::vector<size_t> select_records(const TokenStore& store, const std::vector<std::string>& names,
                                   bool exclude) {
  std::vector<size_t> out;
  for (size_t i = 0; i < store.record_count(); ++i) {
    const bool listed = std::find(names.begin(), names.end(), store.record(i).name) != names.end();
    if (listed != exclude) out.push_back(i);
  }
  return out;
}

BeatClassifier::BeatClassifier(std::shared_ptr<Model> model, uint64_t seed, HeadOptions options,
                               const std::string& codebook)
    : model_(std::move(model)), options_(std::move(options)), features_(options_, codebook) {
  torch::manual_seed(seed);
  head_ = HeadLayers(model_->d_model() + features_.count(), options_.hidden_units, kBeatClassCount);
  device_ = device_of(model_->module());  // the head computes where the model does
  head_.to(device_);
  if (!options_.input_mean.empty() && options_.input_mean.size() != size_t(features_.count()))
    throw DataError(
        "the beat head was fine-tuned with {} scaled inputs per beat and reads {}; re-run the "
        "finetune stage",
        options_.input_mean.size(), features_.count());
}

std::vector<float> BeatClassifier::inputs(const TokenStore& store) const {
  std::vector<float> features = features_.of(store);
  standardise_inputs(features, options_);
  return features;
}

void BeatClassifier::fit_input_scaling(std::vector<float>& features,
                                       const std::vector<BeatWindow>& windows) {
  const size_t k = size_t(features_.count());
  // The descriptors among them are standardised already (store_descriptors, over the same
  // beats); this leaves them nearly as they are.
  InputMoments moments(k);
  if (k > 0)
    for (uint64_t beat : kept_beats(windows)) moments.add(features.data() + beat * k);
  moments.set(options_);
  standardise_inputs(features, options_);
}

at::Tensor BeatClassifier::logits(const at::Tensor& tokens, const at::Tensor& features) {
  at::Tensor hidden = backbone_hidden(*model_, options_, to_device(tokens, device_));
  if (features_.count() > 0)
    hidden = torch::cat({hidden, to_device(features, device_).to(hidden.dtype())}, -1);
  return head_(hidden);
}

namespace {

// Copies window w into row `row` of tokens (and its beat features when there are any:
// features has shape {rows, context, k}).
void fill_row(const TokenStore& store, const std::vector<float>& beat_features, const BeatWindow& w,
              int64_t row, int64_t context, at::Tensor& tokens, at::Tensor& features) {
  store.copy_window(w.start, size_t(w.length), tokens.data_ptr<int64_t>() + row * context);
  if (beat_features.empty()) return;
  const int64_t k = features.size(2);
  std::copy_n(beat_features.begin() + ptrdiff_t(int64_t(w.start) * k), w.length * k,
              features.data_ptr<float>() + row * context * k);
}

void fill_batch(const TokenStore& store, const std::vector<float>& beat_features,
                const std::vector<BeatWindow>& windows, const std::vector<size_t>& order,
                size_t first, int64_t context, at::Tensor& tokens, at::Tensor& features,
                at::Tensor& labels) {
  tokens.fill_(int64_t(kPad));
  features.fill_(0.0f);
  labels.fill_(kIgnoreLabel);
  auto* l = labels.data_ptr<int64_t>();
  const uint8_t* beat_labels = store.labels();
  for (int64_t row = 0; row < tokens.size(0); ++row) {
    const BeatWindow& w = windows[order[(first + size_t(row)) % order.size()]];
    fill_row(store, beat_features, w, row, context, tokens, features);
    for (int64_t k = 0; k < w.length; ++k) {
      const uint8_t c = beat_labels[w.start + uint64_t(k)];
      if (c < kBeatClassCount) l[row * context + k] = c;
    }
  }
}

// Loss weight per class from its count in the training beats (see HeadOptions).
at::Tensor class_weights(const TokenStore& store, const std::vector<BeatWindow>& windows,
                         const std::string& scheme) {
  std::vector<double> counts(kBeatClassCount, 0.0);
  for (const auto& w : windows)
    for (int64_t k = w.keep_from; k < w.length; ++k) {
      const uint8_t c = store.labels()[w.start + uint64_t(k)];
      if (c < kBeatClassCount) counts[c] += 1;
    }
  return torch::tensor(loss_weights(counts, scheme));
}

// The windows with at least one labelled beat. A batch of windows without any (a record read
// without annotations, a long stretch of beats of no class) has no loss to average: NaN.
std::vector<BeatWindow> windows_with_labels(const TokenStore& store,
                                            const std::vector<BeatWindow>& windows) {
  std::vector<BeatWindow> out;
  for (const auto& w : windows)
    for (int64_t k = 0; k < w.length; ++k)
      if (store.labels()[w.start + uint64_t(k)] < kBeatClassCount) {
        out.push_back(w);
        break;
      }
  return out;
}

// The macro F1 of the predictions for the labelled beats of these windows.
double macro_f1_of(const TokenStore& store,
                   const std::vector<std::pair<uint64_t, int>>& predicted) {
  eval::Confusion m(kBeatClassCount);
  for (const auto& [beat, cls] : predicted)
    if (store.labels()[beat] < kBeatClassCount) m.add(store.labels()[beat], size_t(cls));
  return eval::macro_f1(m);
}

}  // namespace

FitResult BeatClassifier::fit(const TokenStore& store, const std::vector<BeatWindow>& all_windows,
                              const TrainOptions& o, const FitHooks& hooks,
                              const std::vector<BeatWindow>& validation,
                              const EarlyStopping& early) {
  const std::vector<BeatWindow> windows = windows_with_labels(store, all_windows);
  if (windows.empty()) throw DataError("{}: no labelled beats to fine-tune on", store.path());
  if (windows.size() < all_windows.size() && hooks.on_log)
    hooks.on_log(std::to_string(all_windows.size() - windows.size()) + " of the " +
                 std::to_string(all_windows.size()) +
                 " windows hold no labelled beat and are left out");
  const int64_t context = model_->context();
  // Model and head in one archive, so a checkpoint holds the whole classifier.
  torch::nn::Module bundle;
  bundle_classifier(bundle, *model_, head_);
  const auto weights = class_weights(store, windows, options_.class_weights).to(device_);
  std::vector<float> beat_features = features_.of(store);
  // Recomputed on a resume: the same windows give the same scaling.
  fit_input_scaling(beat_features, windows);
  std::vector<size_t> order(windows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(o.seed);
  std::shuffle(order.begin(), order.end(), rng);
  auto tokens = torch::empty({o.batch, context}, torch::kLong);
  auto features = torch::empty({o.batch, context, features_.count()}, torch::kFloat32);
  auto labels = torch::empty({o.batch, context}, torch::kLong);

  FitLoop loop;
  loop.bundle = &bundle;
  loop.params = trainable_parameters(*model_, options_, head_);
  loop.head_lr_scale = options_.lr_scale;
  loop.train_mode = [&] {
    if (options_.backbone != "frozen") model_->module().train();
  };
  loop.loss = [&](int64_t micro) {
    fill_batch(store, beat_features, windows, order, size_t(micro * o.batch), context, tokens,
               features, labels);
    at::Tensor logits;
    {
      const Bf16Autocast autocast(o.bf16, device_.type());
      logits = this->logits(tokens, features);
    }
    return torch::nn::functional::cross_entropy(
        logits.to(torch::kFloat32).view({-1, kBeatClassCount}),
        to_device(labels, device_).view({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().weight(weights).ignore_index(
            kIgnoreLabel));
  };
  if (!validation.empty())
    loop.validate = [&] { return macro_f1_of(store, predict(store, validation, beat_features)); };
  return run_fit_loop(loop, o, hooks, early);
}

std::vector<std::pair<uint64_t, std::vector<float>>> BeatClassifier::probabilities(
    const TokenStore& store, const std::vector<BeatWindow>& windows) {
  std::vector<std::pair<uint64_t, std::vector<float>>> out;
  score(store, windows, inputs(store), /*stoppable=*/true, [&](uint64_t beat, const float* logits) {
    // Softmax, shifted by the largest logit so exp cannot overflow.
    const float top = *std::max_element(logits, logits + kBeatClassCount);
    std::vector<float> p(kBeatClassCount);
    float sum = 0.0f;
    for (int c = 0; c < kBeatClassCount; ++c) sum += p[size_t(c)] = std::exp(logits[c] - top);
    for (float& v : p) v /= sum;
    out.emplace_back(beat, std::move(p));
  });
  return out;
}

std::vector<std::pair<uint64_t, int>> BeatClassifier::predict(
    const TokenStore& store, const std::vector<BeatWindow>& windows,
    const std::vector<float>& beat_features) {
  std::vector<std::pair<uint64_t, int>> out;
  score(store, windows, beat_features, /*stoppable=*/false,
        [&](uint64_t beat, const float* logits) {
          out.emplace_back(beat, int(std::max_element(logits, logits + kBeatClassCount) - logits));
        });
  return out;
}

void BeatClassifier::score(const TokenStore& store, const std::vector<BeatWindow>& windows,
                           const std::vector<float>& beat_features, bool stoppable,
                           const std::function<void(uint64_t, const float*)>& visit) {
  torch::NoGradGuard no_grad;
  model_->module().eval();
  // Windows are scored in batches of equal length (a record's last window may be shorter).
  constexpr size_t kBatch = 16;
  for (size_t first = 0; first < windows.size();) {
    if (stoppable && stop_signal_received())
      throw Preempted("inference stopped by a signal; nothing to keep");
    const int64_t length = windows[first].length;
    size_t last = first;
    while (last < windows.size() && last - first < kBatch && windows[last].length == length) ++last;
    const int64_t rows = int64_t(last - first);
    auto tokens = torch::empty({rows, length}, torch::kLong);
    auto features = torch::zeros({rows, length, features_.count()}, torch::kFloat32);
    for (int64_t row = 0; row < rows; ++row)
      fill_row(store, beat_features, windows[first + size_t(row)], row, length, tokens, features);
    const auto logits =
        this->logits(tokens, features).to(torch::kFloat32).to(torch::kCPU).contiguous();
    const float* z = logits.data_ptr<float>();
    for (int64_t row = 0; row < rows; ++row) {
      const BeatWindow& w = windows[first + size_t(row)];
      for (int64_t k = w.keep_from; k < w.length; ++k)
        visit(w.start + uint64_t(k), z + (row * length + k) * kBeatClassCount);
    }
    first = last;
  }
}

void BeatClassifier::save(const std::string& path) { save_classifier(*model_, head_, path); }

void BeatClassifier::load(const std::string& path) { load_classifier(*model_, head_, path); }

}  // namespace hlm
