// The pretraining loop (see trainer.h). train_language_model reads top to bottom: set-up,
// resume, the step loop, then held-out loss and weights; the helpers above it do one job each.
#include "train/trainer.h"

#include <spdlog/spdlog.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include "distributed/gradient_sync.h"
#include "distributed/preemption.h"
#include "hlm/errors.h"
#include "hlm/util.h"
#include "metrics/heartbeat.h"
#include "ops/compute.h"
#include "ops/fused_adamw.h"
#include "train/autocast_guard.h"
#include "train/batch_prefetcher.h"
#include "train/checkpoint.h"
#include "train/masking.h"
#include "train/nonfinite_steps.h"
#include "train/phase_timer.h"
#include "train/train_device.h"
#include "train/window_sampler.h"

namespace hlm {
namespace {

using GroupPtr = c10::intrusive_ptr<c10d::Backend>;

void check_vocabulary(const TokenStore& store, const Model& model) {
  if (store.vocab_size() > uint64_t(model.vocab_size()))
    throw ConfigError("the token store has a vocabulary of " + std::to_string(store.vocab_size()) +
                      " but the model's vocab_size is " + std::to_string(model.vocab_size()) +
                      "; raise the model's vocab_size");
}

at::Tensor forward_logits(Model& model, const at::Tensor& inputs, bool bf16,
                          const torch::Device& device) {
  const Bf16Autocast autocast(bf16, device.type());
  return model.logits(model.hidden(inputs));
}

// Next-token loss for a causal model; for a masked model, the loss on a RoBERTa-corrupted copy
// of the window whose mask depends only on mask_seed (so resume and every rank agree). The
// batch comes from the CPU (masked there) and is copied to `device`.
at::Tensor lm_loss(Model& model, const at::Tensor& inputs, const at::Tensor& targets,
                   const TrainOptions& o, const torch::Device& device, uint64_t mask_seed) {
  at::Tensor logits, wanted;
  if (model.objective() == Objective::kMasked) {
    const MaskedBatch masked =
        mask_tokens(inputs, o.mask_probability, model.vocab_size(), mask_seed);
    logits = forward_logits(model, to_device(masked.inputs, device), o.bf16, device);
    wanted = to_device(masked.targets, device);
  } else {
    logits = forward_logits(model, to_device(inputs, device), o.bf16, device);
    wanted = to_device(targets, device);
  }
  const int64_t vocab = logits.size(-1);
  return torch::nn::functional::cross_entropy(logits.to(torch::kFloat32).view({-1, vocab}),
                                              wanted.reshape({-1}));
}

// The mask seed of one micro-batch of one rank: unique per (step, micro-step, rank).
uint64_t mask_seed_of(const TrainOptions& o, const DistEnv& env, int64_t step, int64_t micro) {
  return o.seed * 1000003ULL +
         uint64_t((step * o.accumulation + micro) * env.world_size + env.rank);
}

// Rank 0 measures while the others wait, and every rank uses its figure: ranks measuring at
// once on one host measure each other's contention, and their MFU then overstates.
double peak_flops_of_rank0(bool bf16, const GroupPtr& group, int rank,
                           const torch::Device& device) {
  const double peak = rank == 0 ? device_peak_flops(device, bf16) : 0.0;
  if (!group) return peak;
  // On the training device: NCCL moves CUDA tensors only.
  std::vector<at::Tensor> value{
      torch::full({1}, peak, torch::TensorOptions().dtype(torch::kDouble).device(device))};
  group->broadcast(value, c10d::BroadcastOptions{})->wait();
  return value[0].item<double>();
}

double set_learning_rate(torch::optim::AdamW& optimizer, double learning_rate) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(learning_rate);
  return learning_rate;
}

// Every operator of the step `profile_step` names, forward and backward, with its time, as a
// chrome://tracing file in the job's folder; null for every other step.
std::unique_ptr<torch::autograd::profiler::RecordProfile> profile_if_chosen(const TrainJob& job,
                                                                            int64_t step) {
  if (step != job.options.profile_step || job.out_dir.empty()) return nullptr;
  std::filesystem::create_directories(job.out_dir);
  return std::make_unique<torch::autograd::profiler::RecordProfile>(
      job.out_dir + "/profile.rank" + std::to_string(job.env.rank) + ".step" +
      std::to_string(step) + ".json");
}

// Mean loss over eval_batches batches of held-out windows (no gradients, dropout off).
double held_out_loss(Model& model, const WindowSampler& held_out, const TrainOptions& o,
                     const torch::Device& device) {
  torch::NoGradGuard no_grad;
  auto inputs = torch::empty({o.batch, model.context()}, torch::kLong);
  auto targets = torch::empty({o.batch, model.context()}, torch::kLong);
  model.module().eval();
  double sum = 0;
  for (int64_t b = 0; b < o.eval_batches; ++b) {
    held_out.fill(uint64_t(b * o.batch), inputs, targets);
    sum += lm_loss(model, inputs, targets, o, device, uint64_t(b)).item<double>();
  }
  model.module().train();
  return sum / double(std::max<int64_t>(1, o.eval_batches));
}

}  // namespace

TrainResult train_language_model(Model& model, const TokenStore& store, const TrainJob& job) {
  const TrainOptions& o = job.options;
  const DistEnv& env = job.env;
  const GroupPtr group = env.world_size > 1 ? job.group : GroupPtr();
  check_vocabulary(store, model);

  // Data: the last holdout_fraction of the tokens is held out from training.
  const int64_t context = model.context();
  const uint64_t tokens = store.token_count();
  const uint64_t split = tokens - uint64_t(double(tokens) * o.holdout_fraction);
  WindowSampler train(store, 0, split, context, o.seed);
  std::optional<WindowSampler> held_out;
  if (tokens - split > uint64_t(context) + 2)
    held_out.emplace(store, split, tokens, context, o.seed + 1);

  // Model and optimizer on the rank's device: every rank starts from rank 0's weights.
  const torch::Device device = job.device;
  std::unique_ptr<c10::DeviceGuard> on_gpu;  // what names no device goes to this GPU
  if (device.is_cuda()) on_gpu = std::make_unique<c10::DeviceGuard>(device);
  model.module().to(device);
  auto params = model.module().parameters();
  std::unique_ptr<GradientSync> sync;
  if (group) {
    sync = std::make_unique<GradientSync>(params, group, o.bucket_cap_mb);
    sync->broadcast_parameters();
  }
  torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(o.lr)
                                            .betas({o.beta1, o.beta2})
                                            .eps(o.eps)
                                            .weight_decay(o.weight_decay));

  // Resume from the newest complete checkpoint, if asked and there is one.
  TrainResult result;
  result.world_size = env.world_size;
  for (const auto& p : params) result.gradient_bytes += double(p.numel() * p.element_size());
  if (!params.empty())
    result.gradient_buckets = int(assign_buckets(params, o.bucket_cap_mb).front()) + 1;
  const std::string checkpoints = job.out_dir + "/checkpoints";
  int64_t start_step = 0;
  int64_t skipped_before = 0;
  double earlier_train_seconds = 0;  // loop time of the segments before a resume
  if (o.resume && !job.out_dir.empty()) {
    if (const std::string path = latest_checkpoint(checkpoints); !path.empty()) {
      const CheckpointState state =
          load_checkpoint(path, model.module(), optimizer, env.rank, env.world_size);
      start_step = state.step;
      result.losses = state.losses;
      earlier_train_seconds = state.train_seconds;
      skipped_before = state.skipped_steps;
      if (env.rank == 0) spdlog::info("resumed from {} (step {})", path, start_step);
    }
  }
  // Micro-batch k of this rank holds samples starting at (k * world + rank) * batch.
  BatchPrefetcher batches(
      train, o.batch,
      [&](int64_t k) { return uint64_t((k * env.world_size + env.rank) * o.batch); },
      start_step * o.accumulation, /*pinned=*/device.is_cuda());
  const int64_t rank_tokens_per_step = o.batch * o.accumulation * context;
  const double flops_per_step =
      double(rank_tokens_per_step * env.world_size) * model.flops_per_token();
  result.peak_flops = peak_flops_of_rank0(o.bf16, group, env.rank, device);

  NonFiniteSteps nonfinite(o.max_skipped_steps, job.out_dir.empty() ? "" : checkpoints,
                           skipped_before);
  PhaseTimer timer;
  const auto report = [&](RankActivity activity) {
    if (job.on_activity) job.on_activity(activity);
  };
  const double loop_start = now_seconds();
  model.module().train();
  std::vector<double> overlaps;  // per step: GradientSync::launch_lead_seconds / backward
  for (int64_t step = start_step; step < o.steps; ++step) {
    const auto profile = profile_if_chosen(job, step + 1);
    timer.begin_step();
    TrainStep stats;
    stats.step = step + 1;
    stats.learning_rate = set_learning_rate(optimizer, learning_rate_at(o, step));
    drop_gradients(optimizer);
    bool loss_finite = true;
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      const bool last_micro = micro + 1 == o.accumulation;
      report(RankActivity::kData);
      const auto batch = batches.next(&stats.data_wait_seconds);
      timer.start(Phase::kForward);
      report(RankActivity::kForward);
      auto loss = lm_loss(model, batch.inputs, batch.targets, o, device,
                          mask_seed_of(o, env, step, micro)) /
                  double(o.accumulation);
      const double micro_loss = loss.item<double>();
      loss_finite = loss_finite && std::isfinite(micro_loss);
      // The last micro-step's backward all-reduces the gradients, carrying this rank's votes.
      if (sync && last_micro) sync->prepare_for_backward(stop_signal_received(), !loss_finite);
      timer.start(Phase::kBackward);
      report(RankActivity::kBackward);
      loss.backward();
      wait_for_device(device);  // the phase is the GPU's time, not the time to queue it
      timer.stop();
      stats.loss += micro_loss;
    }
    if (sync) {  // all-reduce launched from backward's gradient hooks is not backward's time
      report(RankActivity::kAllreduce);
      const double backward_wall = timer.seconds(Phase::kBackward);
      timer.add(Phase::kBackward, -sync->launch_seconds());
      timer.add(Phase::kAllreduce, sync->finish());
      if (step - start_step >= o.timing_skip_steps && backward_wall > 0)
        overlaps.push_back(std::min(1.0, sync->launch_lead_seconds() / backward_wall));
    }
    timer.start(Phase::kOptimizer);
    report(RankActivity::kOptimizer);
    if (sync) loss_finite = !sync->nonfinite_loss_voted();  // every rank decides alike
    bool applied = true;
    stats.grad_norm = clipped_adamw_step(optimizer, params, o.grad_clip, [&](double norm) {
      return applied = nonfinite.admit(step + 1, loss_finite, norm);
    });
    wait_for_device(device);
    timer.end_step();

    stats.rank_tokens = rank_tokens_per_step;
    stats.rank_samples = o.batch * o.accumulation;
    stats.step_seconds = timer.seconds(Phase::kStep);
    stats.forward_seconds = timer.seconds(Phase::kForward);
    stats.backward_seconds = timer.seconds(Phase::kBackward);
    stats.allreduce_seconds = timer.seconds(Phase::kAllreduce);
    stats.optimizer_seconds = timer.seconds(Phase::kOptimizer);
    stats.mfu_ratio = flops_per_step / (stats.step_seconds * result.peak_flops * env.world_size);
    result.data_wait_seconds += stats.data_wait_seconds;
    result.allreduce_seconds += stats.allreduce_seconds;
    // A skipped step leaves no loss (JSON has no NaN) and no metrics sample.
    if (applied) {
      result.losses.push_back(stats.loss);
      if (job.on_step) job.on_step(stats);
    }

    // With a gradient all-reduce the ranks' stop votes travel in it (see GradientSync).
    const bool stop = sync ? sync->stop_voted() : stop_requested(group);
    const bool periodic = o.checkpoint_every > 0 && (step + 1) % o.checkpoint_every == 0;
    if ((stop || periodic) && !job.out_dir.empty()) {
      const double checkpoint_start = now_seconds();
      const double trained = earlier_train_seconds + now_seconds() - loop_start;
      save_checkpoint(checkpoints,
                      {step + 1, env.world_size, result.losses, trained, nonfinite.skipped()},
                      model.module(), optimizer, env.rank, group, o.keep_checkpoints);
      if (job.on_checkpoint) job.on_checkpoint(now_seconds() - checkpoint_start);
    }
    if (stop)
      throw Preempted("stopped by a signal after step " + std::to_string(step + 1) +
                      (job.out_dir.empty()
                           ? " (no checkpoint: this run has no folder)"
                           : " (checkpoint written); continue with hlm run --resume RUN_DIR"));
  }

  result.train_seconds = earlier_train_seconds + now_seconds() - loop_start;
  result.steps = o.steps;
  result.skipped_steps = nonfinite.skipped();
  result.step_seconds_median = timer.median(Phase::kStep, o.timing_skip_steps);
  result.forward_seconds_median = timer.median(Phase::kForward, o.timing_skip_steps);
  result.backward_seconds_median = timer.median(Phase::kBackward, o.timing_skip_steps);
  result.allreduce_seconds_median = timer.median(Phase::kAllreduce, o.timing_skip_steps);
  result.optimizer_seconds_median = timer.median(Phase::kOptimizer, o.timing_skip_steps);
  result.step_without_allreduce_quantiles =
      timer.quantiles(Phase::kStep, Phase::kAllreduce, o.timing_skip_steps, 21);
  if (!overlaps.empty()) {
    std::nth_element(overlaps.begin(), overlaps.begin() + ptrdiff_t(overlaps.size() / 2),
                     overlaps.end());
    result.backward_overlap = overlaps[overlaps.size() / 2];
  }
  const double tokens_per_step = double(rank_tokens_per_step * env.world_size);
  result.tokens_per_s =
      result.step_seconds_median > 0 ? tokens_per_step / result.step_seconds_median : 0;
  result.mfu =
      result.tokens_per_s * model.flops_per_token() / (result.peak_flops * double(env.world_size));
  if (held_out) result.eval_loss = held_out_loss(model, *held_out, o, device);
  if (env.rank == 0 && !job.out_dir.empty() && o.save_weights) {
    std::filesystem::create_directories(job.out_dir);
    result.checkpoint = job.out_dir + "/model.pt";
    save_module(model.module(), result.checkpoint);
  }
  if (group) group->barrier()->wait();
  return result;
}

}  // namespace hlm
