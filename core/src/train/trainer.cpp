// The pretraining loop (see trainer.h). train_language_model reads top to bottom: set-up,
// resume, the step loop, then held-out loss and weights; the helpers above it do one job each.
#include "train/trainer.h"

#include <spdlog/spdlog.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
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
#include "train/step_graph.h"
#include "train/train_device.h"
#include "train/window_sampler.h"

namespace hlm {
namespace {

using GroupPtr = c10::intrusive_ptr<c10d::Backend>;

void check_vocabulary(const TokenStore& store, const Model& model) {
  if (store.vocab_size() > uint64_t(model.vocab_size()))
    throw ConfigError("the token store " + store.path() + " has a vocabulary of " +
                      std::to_string(store.vocab_size()) + " but the model's vocab_size is " +
                      std::to_string(model.vocab_size()) + "; raise the model's vocab_size");
}

// The training and held-out windows: each store's last holdout_fraction of tokens is held
// out, and a window comes from store k with share weights[k] (by default its token count, as
// if the stores were one). No held-out sampler when a store's held-out tokens hold no window.
struct Samplers {
  std::optional<WindowSampler> train, held_out;
  std::vector<WindowSampler> held_out_by_store;  // with several stores: each one's alone
};

Samplers samplers_of(const std::vector<const TokenStore*>& stores, std::vector<double> weights,
                     int64_t context, const TrainOptions& o) {
  if (!weights.empty() && weights.size() != stores.size())
    throw ConfigError("{} store weights for {} token stores; give one per store", weights.size(),
                      stores.size());
  std::vector<TokenSpan> train, held_out;
  for (size_t k = 0; k < stores.size(); ++k) {
    const uint64_t tokens = stores[k]->token_count();
    const uint64_t split = tokens - uint64_t(double(tokens) * o.holdout_fraction);
    const double w = weights.empty() ? double(split) : weights[k];
    train.push_back({stores[k], 0, split, w});
    held_out.push_back({stores[k], split, tokens, weights.empty() ? double(tokens - split) : w});
  }
  Samplers s;
  s.train.emplace(std::move(train), context, o.seed);
  const bool every_store_holds_out = std::all_of(held_out.begin(), held_out.end(), [&](auto& h) {
    return h.end - h.begin > uint64_t(context) + 2;
  });
  if (!every_store_holds_out) return s;
  if (held_out.size() > 1)
    for (const TokenSpan& h : held_out)
      s.held_out_by_store.emplace_back(std::vector<TokenSpan>{h}, context, o.seed + 1);
  s.held_out.emplace(std::move(held_out), context, o.seed + 1);
  return s;
}

// A micro-batch as the loss reads it, still on the CPU: for a masked model a RoBERTa-corrupted
// copy of the window and its targets, the mask depending only on mask_seed (so resume and every
// rank agree); for a causal model the window and its next tokens as they are.
struct LossBatch {
  at::Tensor inputs, targets;
};

LossBatch loss_batch(const Model& model, const at::Tensor& inputs, const at::Tensor& targets,
                     const TrainOptions& o, uint64_t mask_seed) {
  if (model.objective() != Objective::kMasked) return {inputs, targets};
  MaskedBatch masked = mask_tokens(inputs, o.mask_probability, model.vocab_size(), mask_seed);
  return {std::move(masked.inputs), std::move(masked.targets)};
}

// The cross-entropy of a batch already on the model's device.
at::Tensor device_loss(Model& model, const at::Tensor& inputs, const at::Tensor& targets, bool bf16,
                       const torch::Device& device) {
  at::Tensor logits;
  {
    const Bf16Autocast autocast(bf16, device.type());
    logits = model.logits(model.hidden(inputs));
  }
  const int64_t vocab = logits.size(-1);
  return torch::nn::functional::cross_entropy(logits.to(torch::kFloat32).view({-1, vocab}),
                                              targets.reshape({-1}));
}

// The loss of a CPU batch, copied to `device`.
at::Tensor lm_loss(Model& model, const at::Tensor& inputs, const at::Tensor& targets,
                   const TrainOptions& o, const torch::Device& device, uint64_t mask_seed) {
  const LossBatch b = loss_batch(model, inputs, targets, o, mask_seed);
  return device_loss(model, to_device(b.inputs, device), to_device(b.targets, device), o.bf16,
                     device);
}

// The mask seed of one micro-batch of one rank: unique per (step, micro-step, rank).
uint64_t mask_seed_of(const TrainOptions& o, const DistEnv& env, int64_t step, int64_t micro) {
  return o.seed * 1000003ULL +
         uint64_t((step * o.accumulation + micro) * env.world_size + env.rank);
}

double set_learning_rate(torch::optim::AdamW& optimizer, double learning_rate) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(learning_rate);
  return learning_rate;
}

// What the steps of the loop share.
struct StepParts {
  Model& model;
  const TrainJob& job;
  BatchPrefetcher& batches;
  GradientSync* sync;  // null on one rank
  StepGraph* graph;    // null unless the cuda_graph option is on
  PhaseTimer& timer;
  torch::optim::AdamW& optimizer;
  const std::vector<at::Tensor>& params;
  NonFiniteSteps& nonfinite;
  void report(RankActivity activity) const {
    if (job.on_activity) job.on_activity(activity);
  }
};

// Forward and backward of each micro-batch of `step`, adding into the gradients; their losses
// and the data wait go into stats. Returns whether every micro-batch's loss was finite.
bool run_micro_steps(const StepParts& m, int64_t step, TrainStep& stats) {
  const TrainOptions& o = m.job.options;
  bool finite = true;
  for (int64_t micro = 0; micro < o.accumulation; ++micro) {
    m.report(RankActivity::kData);
    const auto batch = m.batches.next(&stats.data_wait_seconds);
    const uint64_t mask_seed = mask_seed_of(o, m.job.env, step, micro);
    m.timer.start(Phase::kForward);
    m.report(RankActivity::kForward);
    double micro_loss = 0;
    if (m.graph) {  // forward and backward in one replay: the forward phase holds both
      const LossBatch b = loss_batch(m.model, batch.inputs, batch.targets, o, mask_seed);
      micro_loss = m.graph->forward_backward(b.inputs, b.targets).item<double>();
      m.timer.stop();
    } else {
      auto loss = lm_loss(m.model, batch.inputs, batch.targets, o, m.job.device, mask_seed) /
                  double(o.accumulation);
      micro_loss = loss.item<double>();
      finite = finite && std::isfinite(micro_loss);
      // The last micro-step's backward all-reduces the gradients, carrying this rank's votes.
      if (m.sync && micro + 1 == o.accumulation)
        m.sync->prepare_for_backward(stop_signal_received(), !finite);
      m.timer.start(Phase::kBackward);
      m.report(RankActivity::kBackward);
      loss.backward();
      wait_for_device(m.job.device);  // the phase is the GPU's time, not the time to queue it
      m.timer.stop();
    }
    finite = finite && std::isfinite(micro_loss);
    stats.loss += micro_loss;
  }
  return finite;
}

// Where a resumed run continues: the newest complete checkpoint's step, skipped steps and loop
// time (all zero for a fresh run).
struct Resumed {
  int64_t step = 0, skipped_steps = 0;
  double train_seconds = 0;  // loop time of the segments before the resume
};

// Loads the newest complete checkpoint of the job's folder into the model and optimizer when
// the job resumes and there is one; its losses replace `losses`.
Resumed resume_if_asked(const TrainJob& job, Model& model, torch::optim::AdamW& optimizer,
                        std::vector<double>& losses) {
  Resumed r;
  if (!job.options.resume || job.out_dir.empty()) return r;
  const std::string path = latest_checkpoint(job.out_dir + "/checkpoints");
  if (path.empty()) return r;
  const CheckpointState state =
      load_checkpoint(path, model.module(), optimizer, job.env.rank, job.env.world_size);
  r = {state.step, state.skipped_steps, state.train_seconds};
  losses = state.losses;
  if (job.env.rank == 0) spdlog::info("resumed from {} (step {})", path, r.step);
  return r;
}

// The all-reduce launched from backward's gradient hooks is not backward's time: moves it out
// of the backward phase and adds the wait for its end as the all-reduce phase. Returns the
// share of backward's wall time that ran after the first bucket was launched (what backward
// can hide of the communication), -1 when backward took no time.
double finish_allreduce(GradientSync& sync, PhaseTimer& timer) {
  const double backward_wall = timer.seconds(Phase::kBackward);
  timer.add(Phase::kBackward, -sync.launch_seconds());
  timer.add(Phase::kAllreduce, sync.finish());
  return backward_wall > 0 ? std::min(1.0, sync.launch_lead_seconds() / backward_wall) : -1;
}

void write_checkpoint(const TrainJob& job, const CheckpointState& state, Model& model,
                      torch::optim::AdamW& optimizer, const GroupPtr& group) {
  const double start = now_seconds();
  save_checkpoint(job.out_dir + "/checkpoints", state, model.module(), optimizer, job.env.rank,
                  group, job.options.keep_checkpoints);
  if (job.on_checkpoint) job.on_checkpoint(now_seconds() - start);
}

std::string stopped_message(const TrainJob& job, int64_t step) {
  return "stopped by a signal after step " + std::to_string(step) +
         (job.out_dir.empty() ? " (no checkpoint: this run has no folder)"
                              : " (checkpoint written); continue with hlm run --resume RUN_DIR");
}

// One optimizer step (0-based `step`): the micro-steps' forward and backward, the all-reduce,
// then clipping and AdamW unless the loss or the norm is not finite. Returns the step's report
// with its phase times; *applied says whether the update was taken; *overlap is
// finish_allreduce's (-1 without an all-reduce).
TrainStep optimizer_step(const StepParts& s, int64_t step, bool* applied, double* overlap) {
  const TrainOptions& o = s.job.options;
  s.timer.begin_step();
  TrainStep stats;
  stats.step = step + 1;
  stats.learning_rate = set_learning_rate(s.optimizer, learning_rate_at(o, step));
  if (s.graph)
    zero_gradients(s.params);  // a replay adds into the gradient tensors it captured
  else
    drop_gradients(s.optimizer);
  bool loss_finite = run_micro_steps(s, step, stats);
  *overlap = -1;
  if (s.sync) {
    s.report(RankActivity::kAllreduce);
    *overlap = finish_allreduce(*s.sync, s.timer);
  }
  s.timer.start(Phase::kOptimizer);
  s.report(RankActivity::kOptimizer);
  if (s.sync) loss_finite = !s.sync->nonfinite_loss_voted();  // every rank decides alike
  *applied = true;
  stats.grad_norm = clipped_adamw_step(s.optimizer, s.params, o.grad_clip, [&](double norm) {
    return *applied = s.nonfinite.admit(step + 1, loss_finite, norm);
  });
  wait_for_device(s.job.device);
  s.timer.end_step();
  stats.rank_tokens = o.batch * o.accumulation * s.model.context();
  stats.rank_samples = o.batch * o.accumulation;
  s.timer.fill(stats);
  return stats;
}

torch::optim::AdamWOptions adamw_options(const TrainOptions& o) {
  return torch::optim::AdamWOptions(o.lr)
      .betas({o.beta1, o.beta2})
      .eps(o.eps)
      .weight_decay(o.weight_decay);
}

// What one all-reduce of every gradient carries, and in how many buckets.
void describe_gradients(const std::vector<at::Tensor>& params, double bucket_cap_mb,
                        TrainResult& result) {
  for (const auto& p : params) result.gradient_bytes += double(p.numel() * p.element_size());
  if (!params.empty())
    result.gradient_buckets = int(assign_buckets(params, bucket_cap_mb).front()) + 1;
}

// The cuda_graph option's graph: one micro-batch's loss, divided over the accumulation.
std::unique_ptr<StepGraph> step_graph(Model& model, const std::vector<at::Tensor>& params,
                                      const TrainJob& job) {
  const TrainOptions& o = job.options;
  return std::make_unique<StepGraph>(
      [&model, &o, device = job.device](const at::Tensor& inputs, const at::Tensor& targets) {
        return device_loss(model, inputs, targets, o.bf16, device) / double(o.accumulation);
      },
      params, job.device);
}

// The trained weights as <out_dir>/model.pt; returns the path.
std::string save_weights(Model& model, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  const std::string path = out_dir + "/model.pt";
  save_module(model.module(), path);
  return path;
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

void TrainResult::add_timing(const PhaseTimer& timer, int64_t skip_steps,
                             std::vector<double> overlaps, double tokens_per_step,
                             double flops_per_token) {
  step_seconds_median = timer.median(Phase::kStep, skip_steps);
  forward_seconds_median = timer.median(Phase::kForward, skip_steps);
  backward_seconds_median = timer.median(Phase::kBackward, skip_steps);
  allreduce_seconds_median = timer.median(Phase::kAllreduce, skip_steps);
  optimizer_seconds_median = timer.median(Phase::kOptimizer, skip_steps);
  step_without_allreduce_quantiles =
      timer.quantiles(Phase::kStep, Phase::kAllreduce, skip_steps, 21);
  if (!overlaps.empty()) {
    std::nth_element(overlaps.begin(), overlaps.begin() + ptrdiff_t(overlaps.size() / 2),
                     overlaps.end());
    backward_overlap = overlaps[overlaps.size() / 2];
  }
  tokens_per_s = step_seconds_median > 0 ? tokens_per_step / step_seconds_median : 0;
  mfu = tokens_per_s * flops_per_token / (peak_flops * double(world_size));
}

// With several ranks: the gradient all-reduce, after every rank took rank 0's weights.
std::unique_ptr<GradientSync> gradient_sync(const std::vector<at::Tensor>& params,
                                            const GroupPtr& group, double bucket_cap_mb) {
  if (!group) return nullptr;
  auto sync = std::make_unique<GradientSync>(params, group, bucket_cap_mb);
  sync->broadcast_parameters();
  return sync;
}

// Adds a step's report to the run's totals; an applied step's loss joins the losses and the
// job's on_step sees it (a skipped step leaves no loss, as JSON has no NaN, and no sample).
void record_step(TrainStep& stats, bool applied, double flops_per_step, const TrainJob& job,
                 TrainResult& result) {
  stats.mfu_ratio = flops_per_step / (stats.step_seconds * result.peak_flops * job.env.world_size);
  result.data_wait_seconds += stats.data_wait_seconds;
  result.allreduce_seconds += stats.allreduce_seconds;
  if (!applied) return;
  result.losses.push_back(stats.loss);
  if (job.on_step) job.on_step(stats);
}

// After `done` steps: writes a checkpoint when one is due or the ranks voted to stop (with a
// gradient all-reduce the votes travel in it, see GradientSync), then stops if they did.
void checkpoint_or_stop(const StepParts& s, const GroupPtr& group, int64_t done,
                        const std::vector<double>& losses, double trained_seconds) {
  const TrainOptions& o = s.job.options;
  const bool stop = s.sync ? s.sync->stop_voted() : stop_requested(group);
  const bool periodic = o.checkpoint_every > 0 && done % o.checkpoint_every == 0;
  if ((stop || periodic) && !s.job.out_dir.empty())
    write_checkpoint(s.job,
                     {done, s.job.env.world_size, losses, trained_seconds, s.nonfinite.skipped()},
                     s.model, s.optimizer, group);
  if (stop) throw Preempted(stopped_message(s.job, done));
}

TrainResult train_language_model(Model& model, const TokenStore& store, const TrainJob& job) {
  return train_language_model(model, std::vector<const TokenStore*>{&store}, job);
}

TrainResult train_language_model(Model& model, const std::vector<const TokenStore*>& stores,
                                 const TrainJob& job) {
  const TrainOptions& o = job.options;
  const DistEnv& env = job.env;
  const GroupPtr group = env.world_size > 1 ? job.group : GroupPtr();
  for (const TokenStore* store : stores) check_vocabulary(*store, model);
  check_cuda_graph(o.cuda_graph, job.device, env.world_size, job.stage);

  // Data: the last holdout_fraction of each store's tokens is held out from training.
  const int64_t context = model.context();
  const Samplers samplers = samplers_of(stores, job.store_weights, context, o);
  const WindowSampler& train = *samplers.train;
  const std::optional<WindowSampler>& held_out = samplers.held_out;

  // Model and optimizer on the rank's device.
  const torch::Device device = job.device;
  std::unique_ptr<c10::DeviceGuard> on_gpu;  // what names no device goes to this GPU
  if (device.is_cuda()) on_gpu = std::make_unique<c10::DeviceGuard>(device);
  model.module().to(device);
  auto params = model.module().parameters();
  const std::unique_ptr<GradientSync> sync = gradient_sync(params, group, o.bucket_cap_mb);
  torch::optim::AdamW optimizer(params, adamw_options(o));

  // Resume from the newest complete checkpoint, if asked and there is one.
  TrainResult result;
  result.world_size = env.world_size;
  describe_gradients(params, o.bucket_cap_mb, result);
  const Resumed resumed = resume_if_asked(job, model, optimizer, result.losses);
  const int64_t start_step = resumed.step;
  // Micro-batch k of this rank holds samples starting at (k * world + rank) * batch.
  BatchPrefetcher batches(
      train, o.batch,
      [&](int64_t k) { return uint64_t((k * env.world_size + env.rank) * o.batch); },
      start_step * o.accumulation, /*pinned=*/device.is_cuda());
  const int64_t rank_tokens_per_step = o.batch * o.accumulation * context;
  const double flops_per_step =
      double(rank_tokens_per_step * env.world_size) * model.flops_per_token();
  result.peak_flops = peak_flops_of_rank0(o.bf16, group, env.rank, device);
  reset_peak_memory(device);  // the probe's matrices are not the model's memory

  const std::unique_ptr<StepGraph> graph = o.cuda_graph ? step_graph(model, params, job) : nullptr;

  NonFiniteSteps nonfinite(o.max_skipped_steps,
                           job.out_dir.empty() ? "" : job.out_dir + "/checkpoints",
                           resumed.skipped_steps);
  PhaseTimer timer;
  const StepParts parts{model, job,       batches, sync.get(), graph.get(),
                        timer, optimizer, params,  nonfinite};
  const double loop_start = now_seconds();
  model.module().train();
  std::vector<double> overlaps;  // per step: GradientSync::launch_lead_seconds / backward
  for (int64_t step = start_step; step < o.steps; ++step) {
    const auto profile = profile_if_chosen(job, step + 1);
    bool applied = true;
    double overlap = -1;
    TrainStep stats = optimizer_step(parts, step, &applied, &overlap);
    if (step - start_step >= o.timing_skip_steps && overlap >= 0) overlaps.push_back(overlap);
    record_step(stats, applied, flops_per_step, job, result);
    checkpoint_or_stop(parts, group, step + 1, result.losses,
                       resumed.train_seconds + now_seconds() - loop_start);
  }

  result.train_seconds = resumed.train_seconds + now_seconds() - loop_start;
  result.steps = o.steps;
  result.skipped_steps = nonfinite.skipped();
  result.add_timing(timer, o.timing_skip_steps, std::move(overlaps),
                    double(rank_tokens_per_step * env.world_size), model.flops_per_token());
  if (held_out) result.eval_loss = held_out_loss(model, *held_out, o, device);
  for (const WindowSampler& store_held_out : samplers.held_out_by_store)
    result.eval_loss_by_store.push_back(held_out_loss(model, store_held_out, o, device));
  if (env.rank == 0 && !job.out_dir.empty() && o.save_weights)
    result.checkpoint = save_weights(model, job.out_dir);
  if (group) group->barrier()->wait();
  return result;
}

}  // namespace hlm
