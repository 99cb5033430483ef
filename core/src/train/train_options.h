// Hyper-parameters of a training run, read from a stage's validated params.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace hlm {

struct TrainOptions {
  int64_t steps = 100;       // optimizer steps
  int64_t batch = 16;        // sequences per rank per micro-step
  int64_t accumulation = 1;  // micro-steps per optimizer step
  double lr = 3e-4;
  double min_lr_ratio = 0.1;  // cosine decays to lr * min_lr_ratio
  int64_t warmup_steps = 10;
  double weight_decay = 0.1;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double grad_clip = 1.0;  // max global L2 norm; 0 = off
  bool bf16 = false;       // bf16 autocast for the forward pass
  uint64_t seed = 0;
  int threads = 1;             // intra-op threads per rank
  bool bind_cores = true;      // ranks sharing a host keep to disjoint cores (core_binding.h)
  double bucket_cap_mb = 4.0;  // gradient all-reduce bucket size (small enough to overlap)
  int64_t eval_batches = 4;
  double holdout_fraction = 0.05;  // tail of the token stream kept for evaluation
  int64_t log_every = 10;
  int64_t checkpoint_every = 0;    // steps between checkpoints; 0 = only on a stop signal
  bool resume = true;              // continue from the newest complete checkpoint
  int keep_checkpoints = 3;        // newest complete checkpoints kept (0 = all)
  int64_t max_skipped_steps = 0;   // non-finite steps skipped before the run stops
  int64_t timing_skip_steps = -1;  // steps left out of the median step time; -1 = automatic
  bool save_weights = true;        // write model.pt at the end
  int64_t profile_step = 0;        // step recorded by LibTorch's profiler (0 = none)
  double mask_probability = 0.15;  // masked objective: share of content tokens predicted
  std::string device = "cpu";      // the stage's device param: cpu, cuda or auto

  static TrainOptions from_params(const nlohmann::json& params);
  // Every field, under its param name: what a run actually used.
  nlohmann::json to_json() const;
};

// The learning rate at `step`: linear warm-up, then cosine decay to lr * min_lr_ratio.
double learning_rate_at(const TrainOptions& options, int64_t step);

}  // namespace hlm
