// Fine-tuning and inference of the beat classifier (see beat_classifier.h).
#include "tasks/beat_classifier.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "dist/preemption.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "ops/fused_adamw.h"
#include "train/autocast_guard.h"
#include "train/checkpoint.h"
#include "train/nonfinite_steps.h"

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

BeatClassifier::BeatClassifier(std::shared_ptr<Model> model, uint64_t seed)
    : model_(std::move(model)) {
  torch::manual_seed(seed);
  head_ = torch::nn::Linear(model_->d_model(), kBeatClassCount);
}

at::Tensor BeatClassifier::logits(const at::Tensor& tokens) {
  return head_(model_->hidden(tokens));
}

namespace {

void fill_batch(const TokenStore& store, const std::vector<BeatWindow>& windows,
                const std::vector<size_t>& order, size_t first, int64_t context, at::Tensor& tokens,
                at::Tensor& labels) {
  tokens.fill_(int64_t(kPad));
  labels.fill_(kIgnoreLabel);
  auto* t = tokens.data_ptr<int64_t>();
  auto* l = labels.data_ptr<int64_t>();
  const uint8_t* beat_labels = store.labels();
  for (int64_t row = 0; row < tokens.size(0); ++row) {
    const BeatWindow& w = windows[order[(first + size_t(row)) % order.size()]];
    store.copy_window(w.start, size_t(w.length), t + row * context);
    for (int64_t k = 0; k < w.length; ++k) {
      const uint8_t c = beat_labels[w.start + uint64_t(k)];
      if (c < kBeatClassCount) l[row * context + k] = c;
    }
  }
}

// Inverse-square-root class frequency: rare classes (S, F) count more without swamping N.
at::Tensor class_weights(const TokenStore& store, const std::vector<BeatWindow>& windows) {
  std::vector<double> counts(kBeatClassCount, 1.0);
  for (const auto& w : windows)
    for (int64_t k = w.keep_from; k < w.length; ++k) {
      const uint8_t c = store.labels()[w.start + uint64_t(k)];
      if (c < kBeatClassCount) counts[c] += 1;
    }
  double total = 0;
  for (double c : counts) total += c;
  std::vector<float> weights;
  for (double c : counts) weights.push_back(float(std::sqrt(total / (kBeatClassCount * c))));
  return torch::tensor(weights);
}

}  // namespace

std::vector<double> BeatClassifier::fit(const TokenStore& store,
                                        const std::vector<BeatWindow>& windows,
                                        const TrainOptions& o, const FitHooks& hooks) {
  if (windows.empty()) throw DataError("{}: no labelled beats to fine-tune on", store.path());
  const int64_t context = model_->context();
  std::vector<torch::Tensor> params = model_->module().parameters();
  for (auto& p : head_->parameters()) params.push_back(p);
  torch::optim::AdamW optimizer(params,
                                torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  // Model and head in one archive, so a checkpoint holds the whole classifier.
  torch::nn::Module bundle;
  bundle.register_module("model",
                         std::shared_ptr<torch::nn::Module>(&model_->module(), [](auto*) {}));
  bundle.register_module("head", head_.ptr());

  const auto weights = class_weights(store, windows);
  std::vector<size_t> order(windows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(o.seed);
  std::shuffle(order.begin(), order.end(), rng);
  auto tokens = torch::empty({o.batch, context}, torch::kLong);
  auto labels = torch::empty({o.batch, context}, torch::kLong);
  std::vector<double> losses;
  int64_t start_step = 0, skipped_before = 0;
  if (o.resume && !hooks.checkpoint_dir.empty())
    if (const std::string path = latest_checkpoint(hooks.checkpoint_dir); !path.empty()) {
      const CheckpointState state = load_checkpoint(path, bundle, optimizer, 0, 1);
      start_step = state.step;
      losses = state.losses;
      skipped_before = state.skipped_steps;
      if (hooks.on_log)
        hooks.on_log("resumed from " + path + " (step " + std::to_string(start_step) + ")");
    }
  NonFiniteSteps nonfinite(o.max_skipped_steps, hooks.checkpoint_dir, skipped_before);
  model_->module().train();
  for (int64_t step = start_step; step < o.steps; ++step) {
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(learning_rate_at(o, step));
    drop_gradients(optimizer);
    double loss_sum = 0;
    bool loss_finite = true;
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      fill_batch(store, windows, order, size_t((step * o.accumulation + micro) * o.batch), context,
                 tokens, labels);
      at::Tensor logits;
      {
        const Bf16Autocast autocast(o.bf16);
        logits = this->logits(tokens);
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
    if (applied) losses.push_back(loss_sum);
    if (hooks.on_log &&
        ((step + 1) % std::max<int64_t>(1, o.log_every) == 0 || step + 1 == o.steps))
      hooks.on_log("step " + std::to_string(step + 1) + "/" + std::to_string(o.steps) + " loss " +
                   std::to_string(loss_sum));
    const bool stop = stop_signal_received();
    const bool periodic = o.checkpoint_every > 0 && (step + 1) % o.checkpoint_every == 0;
    if ((stop || periodic) && !hooks.checkpoint_dir.empty())
      save_checkpoint(hooks.checkpoint_dir, {step + 1, 1, losses, 0, nonfinite.skipped()}, bundle,
                      optimizer, 0, {}, o.keep_checkpoints);
    if (stop)
      throw Preempted(
          "fine-tuning stopped by a signal after step {}{}; continue with hlm run --resume RUN_DIR",
          step + 1, (hooks.checkpoint_dir.empty() ? "" : " (checkpoint written)"));
  }
  return losses;
}

std::vector<std::pair<uint64_t, int>> BeatClassifier::predict(
    const TokenStore& store, const std::vector<BeatWindow>& windows) {
  torch::NoGradGuard no_grad;
  model_->module().eval();
  std::vector<std::pair<uint64_t, int>> out;
  std::vector<int64_t> buffer;
  for (const auto& w : windows) {
    if (stop_signal_received()) throw Preempted("inference stopped by a signal; nothing to keep");
    buffer.resize(size_t(w.length));
    store.copy_window(w.start, buffer.size(), buffer.data());
    auto tokens = torch::from_blob(buffer.data(), {1, w.length}, torch::kLong);
    auto predicted = logits(tokens).argmax(-1).view({-1});
    auto* p = predicted.data_ptr<int64_t>();
    for (int64_t k = w.keep_from; k < w.length; ++k)
      out.emplace_back(w.start + uint64_t(k), int(p[k]));
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
