// Beat classification on top of a pretrained language model: a linear head maps each token's
// hidden state (and, if chosen, its beat's RR features, its rhythm against the record, the
// rhythm around it and its shape: tasks/beat_features.h) to the AAMI class (N, S, V, F, Q) of the
// beat. The backbone is fine-tuned, frozen (a linear probe) or trained from random weights (to
// measure what pretraining brings). Used by finetune and evaluate.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hlm/model.h"
#include "hlm/token_store.h"
#include "tasks/beat_features.h"
#include "tasks/classifier_parts.h"
#include "tasks/fit_loop.h"
#include "tasks/head_options.h"
#include "train/train_options.h"

namespace hlm {

constexpr int64_t kIgnoreLabel = -100;

// A window of consecutive beats of one record; predictions are kept from `keep_from` on, so
// each beat is predicted once and with context before it.
struct BeatWindow {
  uint64_t start = 0;  // first beat (store-wide index)
  int64_t length = 0;
  int64_t keep_from = 0;
};

// Windows of up to `context` beats over the given records, overlapping by half, restricted
// to the part [from, to) of each record (as fractions of its beats).
std::vector<BeatWindow> beat_windows(const TokenStore& store, const std::vector<size_t>& records,
                                     int64_t context, double from = 0.0, double to = 1.0);
// The beats whose predictions the windows keep (each from its keep_from on), in window order:
// every beat of the windows once.
std::vector<uint64_t> kept_beats(const std::vector<BeatWindow>& windows);

// Record indices of the store whose names are (or, with exclude, are not) in names.
std::vector<size_t> select_records(const TokenStore& store, const std::vector<std::string>& names,
                                   bool exclude);

class BeatClassifier {
 public:
  // codebook: the beat-vq codebook of the tokens, needed when options.morphology_features
  // (see BeatFeatures).
  BeatClassifier(std::shared_ptr<Model> model, uint64_t seed, HeadOptions options = {},
                 const std::string& codebook = "");
  // Trains model + head on the labelled beats of `windows` (a window without any is left
  // out); returns the loss per step. With
  // a checkpoint dir it checkpoints every options.checkpoint_every steps and, on a stop
  // signal, after the current step (then throws Preempted); options.resume continues from
  // the newest complete checkpoint there, early-stopping state included. With validation
  // windows, training stops early on their macro F1 (see fit_loop.h).
  FitResult fit(const TokenStore& store, const std::vector<BeatWindow>& windows,
                const TrainOptions& options, const FitHooks& hooks = {},
                const std::vector<BeatWindow>& validation = {},
                const EarlyStopping& early_stopping = {});
  // The class probabilities (softmax, kBeatClassCount per beat) of every kept position:
  // (beat index, probabilities). Several classifiers' probabilities can be averaged.
  std::vector<std::pair<uint64_t, std::vector<float>>> probabilities(
      const TokenStore& store, const std::vector<BeatWindow>& windows);
  void save(const std::string& path);
  void load(const std::string& path);
  // The head's options, with the input scaling fit() set (what evaluate needs to rebuild it).
  const HeadOptions& options() const { return options_; }

 private:
  // The store's per-beat features (see BeatFeatures), standardised as options_ say.
  std::vector<float> inputs(const TokenStore& store) const;
  // Sets options_.input_mean and scale from the features of the beats `windows` train on (each
  // beat once), and standardises `features` (the store's, beat-major) with them.
  void fit_input_scaling(std::vector<float>& features, const std::vector<BeatWindow>& windows);
  // The logits of every kept position, with the store's beat features already computed
  // (validation reuses fit's): calls visit(beat index, kBeatClassCount logits). When
  // `stoppable`, a stop signal ends it (Preempted) between batches.
  void score(const TokenStore& store, const std::vector<BeatWindow>& windows,
             const std::vector<float>& features, bool stoppable,
             const std::function<void(uint64_t, const float*)>& visit);
  // Predicted class per beat for every kept position of the windows: (beat index, class). For
  // fine-tuning's validation, which a stop signal does not cut short: the loop checkpoints
  // right after it, with early stopping's state as an uninterrupted run has it.
  std::vector<std::pair<uint64_t, int>> predict(const TokenStore& store,
                                                const std::vector<BeatWindow>& windows,
                                                const std::vector<float>& features);
  at::Tensor logits(const at::Tensor& tokens, const at::Tensor& features);
  std::shared_ptr<Model> model_;
  HeadOptions options_;
  BeatFeatures features_;
  HeadLayers head_;
  torch::Device device_{torch::kCPU};  // the model's: batches are copied there
};

}  // namespace hlm
