// The pretraining loop: language-model objective over sliding windows of a token store, AdamW
// with warm-up + cosine, clipping, accumulation, optional bf16 autocast, and data-parallel
// gradient all-reduce when a process group is given. One call trains one rank.
#pragma once
#include <functional>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <vector>

#include "distributed/dist_env.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "metrics/train_step.h"
#include "train/phase_timer.h"
#include "train/train_options.h"

namespace hlm {

struct TrainResult {
  int64_t steps = 0;
  int world_size = 1;
  std::vector<double> losses;  // per applied optimizer step (rank 0's view: the local loss)
  int64_t skipped_steps = 0;   // steps not applied: NaN or infinite loss or gradient norm
  double eval_loss = 0;
  std::vector<double> eval_loss_by_store;  // with several stores: each one's held-out loss
  double train_seconds = 0;                // wall time of the loop, all steps
  double step_seconds_median = 0;          // steps after the first few (warm-up excluded)
  double tokens_per_s = 0;                 // world * batch * accumulation * context / median step
  double mfu = 0;                          // against peak_flops
  double peak_flops = 0;
  double data_wait_seconds = 0, allreduce_seconds = 0;
  // Medians over the same steps as step_seconds_median (see TrainStep).
  double forward_seconds_median = 0, backward_seconds_median = 0, optimizer_seconds_median = 0;
  double allreduce_seconds_median = 0;
  double gradient_bytes = 0;  // what one all-reduce of all gradients carries
  int gradient_buckets = 0;   // in how many all-reduces (GradientSync's buckets)
  // Step time less all-reduce wait: 21 quantiles, minimum to maximum (PhaseTimer::quantiles).
  std::vector<double> step_without_allreduce_quantiles;
  // With a gradient all-reduce: the share of a step's backward (wall time, all micro-steps)
  // that ran after the first bucket's all-reduce was launched, the median over the same
  // steps. What backward can hide of the communication: the performance model's overlap.
  double backward_overlap = 0;
  std::string checkpoint;  // model weights (rank 0)

  // The medians, quantiles, overlap, throughput and MFU of a finished loop, from its timer
  // (steps after the first skip_steps) and the per-step overlaps.
  void add_timing(const PhaseTimer& timer, int64_t skip_steps, std::vector<double> overlaps,
                  double tokens_per_step, double flops_per_token);
};

enum class RankActivity : int32_t;  // heartbeat.h

struct TrainJob {
  TrainOptions options;
  torch::Device device{torch::kCPU};  // where the model trains (train_device.h's rank_device)
  std::string out_dir;                // checkpoints and weights go here
  std::string stage = "pretrain";     // the stage's id, for messages
  DistEnv env;
  c10::intrusive_ptr<c10d::Backend> group;            // null for a single process
  std::function<void(const TrainStep&)> on_step;      // metrics hook, may be empty
  std::function<void(double seconds)> on_checkpoint;  // may be empty
  // Each phase of a step as it starts (kData before a batch, kBetweenSteps after a step); may
  // be empty.
  std::function<void(RankActivity)> on_activity;
  // With several token stores, each one's share of the windows (empty: its token count).
  std::vector<double> store_weights;
};

TrainResult train_language_model(Model& model, const TokenStore& store, const TrainJob& job);
// One model on several stores (a foundation's beat and rhythm tokens), each holding out its own
// last holdout_fraction; a window never spans two stores.
TrainResult train_language_model(Model& model, const std::vector<const TokenStore*>& stores,
                                 const TrainJob& job);

}  // namespace hlm
