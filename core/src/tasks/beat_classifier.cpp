// Fine-tuning and inference of the beat classifier (see beat_classifier.h).
#include "tasks/beat_classifier.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "dist/preemption.h"
#include "ecg/rr_features.h"
#include "eval/classification_metrics.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "ops/fused_adamw.h"
#include "train/autocast_guard.h"
#include "train/checkpoint.h"
#include "train/nonfinite_steps.h"
#include "util/atomic_file.h"

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

std::vector<size_t> select_records(const TokenStore& store, const std::vector<std::string>& names,
                                   bool exclude) {
  std::vector<size_t> out;
  for (size_t i = 0; i < store.record_count(); ++i) {
    const bool listed = std::find(names.begin(), names.end(), store.record(i).name) != names.end();
    if (listed != exclude) out.push_back(i);
  }
  return out;
}

BeatHeadOptions BeatHeadOptions::from_json(const nlohmann::json& p) {
  BeatHeadOptions o;
  o.backbone = p.value("backbone", o.backbone);
  o.rr_features = p.value("rr_features", o.rr_features);
  o.class_weights = p.value("class_weights", o.class_weights);
  if (o.backbone != "full" && o.backbone != "frozen" && o.backbone != "scratch")
    throw ConfigError("backbone '{}' is not one of full, frozen, scratch", o.backbone);
  if (o.class_weights != "sqrt" && o.class_weights != "inverse" && o.class_weights != "none")
    throw ConfigError("class_weights '{}' is not one of sqrt, inverse, none", o.class_weights);
  return o;
}

nlohmann::json BeatHeadOptions::to_json() const {
  return {{"backbone", backbone}, {"rr_features", rr_features}, {"class_weights", class_weights}};
}

BeatClassifier::BeatClassifier(std::shared_ptr<Model> model, uint64_t seed, BeatHeadOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  torch::manual_seed(seed);
  head_ = torch::nn::Linear(model_->d_model() + (options_.rr_features ? kRrFeatureCount : 0),
                            kBeatClassCount);
}

at::Tensor BeatClassifier::logits(const at::Tensor& tokens, const at::Tensor& features) {
  at::Tensor hidden;
  if (options_.backbone == "frozen") {
    // A linear probe: the backbone is a fixed feature extractor (no dropout, no gradients).
    torch::NoGradGuard no_grad;
    model_->module().eval();
    hidden = model_->hidden(tokens);
  } else {
    hidden = model_->hidden(tokens);
  }
  if (options_.rr_features) hidden = torch::cat({hidden, features.to(hidden.dtype())}, -1);
  return head_(hidden);
}

std::vector<torch::Tensor> BeatClassifier::trainable() {
  std::vector<torch::Tensor> params;
  if (options_.backbone != "frozen") params = model_->module().parameters();
  for (auto& p : head_->parameters()) params.push_back(p);
  return params;
}

namespace {

// RR features of every beat of the store, record by record (empty when not used).
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

// Copies window w into row `row` of tokens (and its features when there are any).
void fill_row(const TokenStore& store, const std::vector<float>& rr, const BeatWindow& w,
              int64_t row, int64_t context, at::Tensor& tokens, at::Tensor& features) {
  store.copy_window(w.start, size_t(w.length), tokens.data_ptr<int64_t>() + row * context);
  if (rr.empty()) return;
  std::copy_n(rr.begin() + ptrdiff_t(w.start * kRrFeatureCount), w.length * kRrFeatureCount,
              features.data_ptr<float>() + row * context * kRrFeatureCount);
}

void fill_batch(const TokenStore& store, const std::vector<float>& rr,
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
    fill_row(store, rr, w, row, context, tokens, features);
    for (int64_t k = 0; k < w.length; ++k) {
      const uint8_t c = beat_labels[w.start + uint64_t(k)];
      if (c < kBeatClassCount) l[row * context + k] = c;
    }
  }
}

// Loss weight per class from its frequency f in the training beats: 1/sqrt(f) (rare classes
// such as S and F count more without swamping N), 1/f (every class weighs as much in total),
// or none.
at::Tensor class_weights(const TokenStore& store, const std::vector<BeatWindow>& windows,
                         const std::string& scheme) {
  std::vector<double> counts(kBeatClassCount, 1.0);
  for (const auto& w : windows)
    for (int64_t k = w.keep_from; k < w.length; ++k) {
      const uint8_t c = store.labels()[w.start + uint64_t(k)];
      if (c < kBeatClassCount) counts[c] += 1;
    }
  double total = 0;
  for (double c : counts) total += c;
  std::vector<float> weights;
  for (double c : counts) {
    const double ratio = total / (kBeatClassCount * c);
    weights.push_back(float(scheme == "none"      ? 1.0
                            : scheme == "inverse" ? ratio
                                                  : std::sqrt(ratio)));
  }
  return torch::tensor(weights);
}

// The macro F1 of the predictions for the labelled beats of these windows.
double macro_f1_of(const TokenStore& store,
                   const std::vector<std::pair<uint64_t, int>>& predicted) {
  eval::Confusion m(kBeatClassCount);
  for (const auto& [beat, cls] : predicted)
    if (store.labels()[beat] < kBeatClassCount) m.add(store.labels()[beat], size_t(cls));
  return eval::macro_f1(m);
}

// Early-stopping progress, kept beside the checkpoints so a resumed run stops where an
// uninterrupted one would: the state as of `step` and the best weights so far.
struct StoppingState {
  int64_t step = 0, best_step = 0;
  double best = -1;
  int since_best = 0;
  std::vector<std::pair<int64_t, double>> history;
  std::vector<torch::Tensor> best_weights;

  void save(const std::string& dir) const {
    const std::string weights = dir + "/early_stopping.pt";
    torch::save(best_weights, weights + ".tmp");
    std::filesystem::rename(weights + ".tmp", weights);
    write_file_atomic(dir + "/early_stopping.json", nlohmann::json{{"step", step},
                                                                   {"best_step", best_step},
                                                                   {"best", best},
                                                                   {"since_best", since_best},
                                                                   {"history", history}}
                                                        .dump());
  }
  // The state saved with the checkpoint of `at_step`; false when there is none for that step.
  bool load(const std::string& dir, int64_t at_step) {
    const std::string json_path = dir + "/early_stopping.json";
    if (!std::filesystem::exists(json_path)) return false;
    std::ifstream in(json_path);
    const auto j = nlohmann::json::parse(in);
    if (j.at("step").get<int64_t>() != at_step) return false;
    step = at_step;
    best_step = j.at("best_step");
    best = j.at("best");
    since_best = j.at("since_best");
    history = j.at("history").get<std::vector<std::pair<int64_t, double>>>();
    if (best_step > 0) torch::load(best_weights, dir + "/early_stopping.pt");
    return true;
  }
};

}  // namespace

FitResult BeatClassifier::fit(const TokenStore& store, const std::vector<BeatWindow>& windows,
                              const TrainOptions& o, const FitHooks& hooks,
                              const EarlyStopping& early) {
  if (windows.empty()) throw DataError("{}: no labelled beats to fine-tune on", store.path());
  const int64_t context = model_->context();
  std::vector<torch::Tensor> params = trainable();
  torch::optim::AdamW optimizer(params,
                                torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  // Model and head in one archive, so a checkpoint holds the whole classifier.
  torch::nn::Module bundle;
  bundle.register_module("model",
                         std::shared_ptr<torch::nn::Module>(&model_->module(), [](auto*) {}));
  bundle.register_module("head", head_.ptr());

  const auto weights = class_weights(store, windows, options_.class_weights);
  const std::vector<float> rr = store_rr_features(store, options_.rr_features);
  std::vector<size_t> order(windows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(o.seed);
  std::shuffle(order.begin(), order.end(), rng);
  auto tokens = torch::empty({o.batch, context}, torch::kLong);
  auto features = torch::empty({o.batch, context, kRrFeatureCount}, torch::kFloat32);
  auto labels = torch::empty({o.batch, context}, torch::kLong);
  FitResult result;
  StoppingState stopping;
  int64_t start_step = 0, skipped_before = 0;
  if (o.resume && !hooks.checkpoint_dir.empty())
    if (const std::string path = latest_checkpoint(hooks.checkpoint_dir); !path.empty()) {
      const CheckpointState state = load_checkpoint(path, bundle, optimizer, 0, 1);
      start_step = state.step;
      result.losses = state.losses;
      skipped_before = state.skipped_steps;
      if (!early.windows.empty() && !stopping.load(hooks.checkpoint_dir, start_step) &&
          hooks.on_log)
        hooks.on_log("no early-stopping state for step " + std::to_string(start_step) +
                     "; validation starts afresh");
      if (hooks.on_log)
        hooks.on_log("resumed from " + path + " (step " + std::to_string(start_step) + ")");
    }
  NonFiniteSteps nonfinite(o.max_skipped_steps, hooks.checkpoint_dir, skipped_before);
  const auto bundle_params = bundle.parameters();
  bool stopped_early = false;
  int64_t step = start_step;
  for (; step < o.steps && !stopped_early; ++step) {
    if (options_.backbone != "frozen") model_->module().train();
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(learning_rate_at(o, step));
    drop_gradients(optimizer);
    double loss_sum = 0;
    bool loss_finite = true;
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      fill_batch(store, rr, windows, order, size_t((step * o.accumulation + micro) * o.batch),
                 context, tokens, features, labels);
      at::Tensor logits;
      {
        const Bf16Autocast autocast(o.bf16);
        logits = this->logits(tokens, features);
      }
      auto loss = torch::nn::functional::cross_entropy(
                      logits.to(torch::kFloat32).view({-1, kBeatClassCount}), labels.view({-1}),
                      torch::nn::functional::CrossEntropyFuncOptions().weight(weights).ignore_index(
                          kIgnoreLabel)) /
                  double(o.accumulation);
      loss.backward();
      const double micro_loss = loss.item<double>();
      loss_sum += micro_loss;
      loss_finite = loss_finite && std::isfinite(micro_loss);
    }
    bool applied = true;
    clipped_adamw_step(optimizer, params, o.grad_clip, [&](double norm) {
      return applied = nonfinite.admit(step + 1, loss_finite, norm);
    });
    if (applied) result.losses.push_back(loss_sum);
    if (hooks.on_log &&
        ((step + 1) % std::max<int64_t>(1, o.log_every) == 0 || step + 1 == o.steps))
      hooks.on_log("step " + std::to_string(step + 1) + "/" + std::to_string(o.steps) + " loss " +
                   std::to_string(loss_sum));
    if (!early.windows.empty() &&
        ((step + 1) % std::max<int64_t>(1, early.every) == 0 || step + 1 == o.steps)) {
      const double score = macro_f1_of(store, predict(store, early.windows));
      stopping.history.emplace_back(step + 1, score);
      if (score > stopping.best) {
        stopping.best = score;
        stopping.best_step = step + 1;
        stopping.since_best = 0;
        stopping.best_weights.clear();
        for (const auto& p : bundle_params) stopping.best_weights.push_back(p.detach().clone());
      } else {
        stopped_early = ++stopping.since_best >= early.patience;
      }
      if (hooks.on_log)
        hooks.on_log(
            "step " + std::to_string(step + 1) + " validation macro F1 " + std::to_string(score) +
            (stopped_early ? " (stopping: no gain in " + std::to_string(early.patience) + " checks)"
                           : ""));
    }
    const bool stop = stop_signal_received();
    const bool periodic = o.checkpoint_every > 0 && (step + 1) % o.checkpoint_every == 0;
    if ((stop || periodic) && !hooks.checkpoint_dir.empty()) {
      if (!early.windows.empty()) {
        stopping.step = step + 1;
        stopping.save(hooks.checkpoint_dir);
      }
      save_checkpoint(hooks.checkpoint_dir, {step + 1, 1, result.losses, 0, nonfinite.skipped()},
                      bundle, optimizer, 0, {}, o.keep_checkpoints);
    }
    if (stop)
      throw Preempted(
          "fine-tuning stopped by a signal after step {}{}; continue with hlm run --resume RUN_DIR",
          step + 1, (hooks.checkpoint_dir.empty() ? "" : " (checkpoint written)"));
  }
  result.steps_run = step;
  result.validation = stopping.history;
  result.best_step = stopping.best_step;
  if (!stopping.best_weights.empty()) {
    // Keep the weights that validated best, not the last ones.
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < bundle_params.size(); ++i)
      bundle_params[i].copy_(stopping.best_weights[i]);
  }
  return result;
}

std::vector<std::pair<uint64_t, int>> BeatClassifier::predict(
    const TokenStore& store, const std::vector<BeatWindow>& windows) {
  torch::NoGradGuard no_grad;
  model_->module().eval();
  const std::vector<float> rr = store_rr_features(store, options_.rr_features);
  std::vector<std::pair<uint64_t, int>> out;
  // Windows are scored in batches of equal length (a record's last window may be shorter).
  constexpr size_t kBatch = 16;
  for (size_t first = 0; first < windows.size();) {
    if (stop_signal_received()) throw Preempted("inference stopped by a signal; nothing to keep");
    const int64_t length = windows[first].length;
    size_t last = first;
    while (last < windows.size() && last - first < kBatch && windows[last].length == length) ++last;
    const int64_t rows = int64_t(last - first);
    auto tokens = torch::empty({rows, length}, torch::kLong);
    auto features = torch::zeros({rows, length, kRrFeatureCount}, torch::kFloat32);
    for (int64_t row = 0; row < rows; ++row)
      fill_row(store, rr, windows[first + size_t(row)], row, length, tokens, features);
    auto predicted = logits(tokens, features).argmax(-1).contiguous();
    const auto* p = predicted.data_ptr<int64_t>();
    for (int64_t row = 0; row < rows; ++row) {
      const BeatWindow& w = windows[first + size_t(row)];
      for (int64_t k = w.keep_from; k < w.length; ++k)
        out.emplace_back(w.start + uint64_t(k), int(p[row * length + k]));
    }
    first = last;
  }
  return out;
}

void BeatClassifier::save(const std::string& path) {
  save_module(model_->module(), path + ".model");
  save_module(*head_, path + ".head");
}

void BeatClassifier::load(const std::string& path) {
  load_module(model_->module(), path + ".model");
  load_module(*head_, path + ".head");
}

}  // namespace hlm
