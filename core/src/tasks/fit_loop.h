// The fine-tuning loop the beat and segment classifiers share: AdamW on the pretraining
// schedule (warm-up, cosine decay), accumulation, gradient clipping and skipping of
// non-finite steps; checkpoints, stop signals and exact resume; and early stopping on a
// validation score, keeping the weights that scored best.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tasks/classifier_parts.h"
#include "train/train_options.h"

namespace hlm {

// Where fine-tuning keeps checkpoints (none when empty) and where its log lines go.
struct FitHooks {
  std::string checkpoint_dir;
  std::function<void(const std::string&)> on_log;
};

// Every `every` steps the validation score is measured; training stops after `patience`
// measurements without a better one.
struct EarlyStopping {
  int64_t every = 50;
  int patience = 5;
};

struct FitResult {
  std::vector<double> losses;                          // per applied step
  std::vector<std::pair<int64_t, double>> validation;  // (step, score) when measured
  int64_t best_step = 0, steps_run = 0;                // best_step 0: no validation
};

struct FitLoop {
  torch::nn::Module* bundle = nullptr;  // what a checkpoint holds (model and head)
  TrainableParameters params;           // what the optimizer updates
  double head_lr_scale = 1.0;           // the head's learning rate over the backbone's
  std::function<void()> train_mode;     // before each step (validation switches to eval)
  // The loss of micro-batch number `micro` (0, 1, ... over the whole run), forward included.
  std::function<at::Tensor(int64_t micro)> loss;
  // Higher is better (macro F1 of the validation records); empty: no early stopping.
  std::function<double()> validate;
};

// Runs the loop; on return the bundle holds the best validated weights (or the last ones).
// Throws Preempted after checkpointing when a stop signal arrives.
FitResult run_fit_loop(const FitLoop& loop, const TrainOptions& options, const FitHooks& hooks,
                       const EarlyStopping& early);

}  // namespace hlm
