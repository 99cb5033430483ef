// The pretraining loop (see trainer.h).
#include "train/trainer.h"

#include <torch/csrc/autograd/profiler_legacy.h>
#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "hlm/errors.h"
#include "hlm/gemm.h"
#include "hlm/util.h"
#include "train/autocast_guard.h"
#include "train/batch_prefetcher.h"
#include "train/checkpoint.h"
#include "train/fused_adamw.h"
#include "train/gradient_sync.h"
#include "train/masking.h"
#include "train/preemption.h"
#include "train/window_sampler.h"
#include "util/atomic_file.h"

namespace hlm {

void set_compute_threads(int threads) {
  at::set_num_threads(std::max(1, threads));
  using SetThreads = void (*)(int);
  if (auto fn = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    fn(std::max(1, threads));
}

double measure_peak_flops(bool bf16) {
  torch::NoGradGuard no_grad;
  const int64_t n = 1024;
  auto dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
  // Its own generator: drawing from the default one would move the training stream (dropout)
  // away from where a resumed run restored it.
  at::Generator generator = at::detail::createCPUGenerator(/*seed_val=*/0);
  auto a = torch::randn({n, n}, generator).to(dtype), b = torch::randn({n, n}, generator).to(dtype);
  gemm(a, b, false, false);  // warm-up; the same GEMM the models call (hlm/gemm.h)
  // The fastest of a few tenths of a second of GEMMs: freshly started ranks can share a core
  // until the scheduler spreads them (a best of 3 measured half the peak in a 2-rank run).
  double best = 1e30;
  const double start = now_seconds();
  for (int i = 0; i < 3 || now_seconds() - start < 0.3; ++i) {
    const double t0 = now_seconds();
    gemm(a, b, false, false);
    best = std::min(best, now_seconds() - t0);
  }
  return 2.0 * n * n * n / best;
}

void save_module(torch::nn::Module& module, const std::string& path) {
  torch::serialize::OutputArchive archive;
  module.save(archive);
  write_file_atomic(path, [&](const std::string& tmp) { archive.save_to(tmp); });
}

void load_module(torch::nn::Module& module, const std::string& path) {
  if (!std::filesystem::exists(path))
    throw CheckpointError(path + ": checkpoint not found; re-run the stage that writes it");
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  module.load(archive);
}

namespace {

// Median of the step times after the first few, which include allocator warm-up.
double median_after_warmup(std::vector<double> times, int64_t skip_steps) {
  const size_t skip = skip_steps >= 0 ? std::min<size_t>(times.size(), size_t(skip_steps))
                                      : std::min<size_t>(times.size() / 5, 3);
  times.erase(times.begin(), times.begin() + skip);
  if (times.empty()) return 0;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

at::Tensor forward_logits(Model& model, const at::Tensor& inputs, bool bf16) {
  const Bf16Autocast autocast(bf16);
  return model.logits(model.hidden(inputs));
}

// Next-token loss for a causal model; for a masked model, the loss on a RoBERTa-corrupted copy
// of the window whose mask depends only on mask_seed (so resume and every rank agree).
at::Tensor lm_loss(Model& model, const at::Tensor& inputs, const at::Tensor& targets, bool bf16,
                   double mask_probability, uint64_t mask_seed) {
  at::Tensor logits, wanted;
  if (model.objective() == Objective::kMasked) {
    const MaskedBatch masked = mask_tokens(inputs, mask_probability, model.vocab_size(), mask_seed);
    logits = forward_logits(model, masked.inputs, bf16);
    wanted = masked.targets;
  } else {
    logits = forward_logits(model, inputs, bf16);
    wanted = targets;
  }
  const int64_t vocab = logits.size(-1);
  return torch::nn::functional::cross_entropy(logits.to(torch::kFloat32).view({-1, vocab}),
                                              wanted.reshape({-1}));
}

// Rank 0 measures while the others wait, and every rank uses its figure: ranks measuring at
// once on one machine measured each other's contention (a 2-rank run reported MFU 0.81 where
// its tokens/s gave 0.70).
double peak_flops_of_rank0(bool bf16, const c10::intrusive_ptr<c10d::ProcessGroup>& group, int rank) {
  const double peak = rank == 0 ? measure_peak_flops(bf16) : 0.0;
  if (!group) return peak;
  std::vector<at::Tensor> value{torch::full({1}, peak, torch::kDouble)};
  group->broadcast(value, c10d::BroadcastOptions{})->wait();
  return value[0].item<double>();
}

}  // namespace

TrainResult train_language_model(Model& model, const TokenStore& store, const TrainJob& job) {
  const TrainOptions& o = job.options;
  const DistEnv& env = job.env;
  if (store.vocab_size() > uint64_t(model.vocab_size()))
    throw ConfigError("the token store has a vocabulary of " + std::to_string(store.vocab_size()) +
                      " but the model's vocab_size is " + std::to_string(model.vocab_size()) +
                      "; raise the model's vocab_size");
  const int64_t context = model.context();
  const uint64_t tokens = store.token_count();
  const uint64_t split = tokens - uint64_t(double(tokens) * o.holdout_fraction);
  WindowSampler train(store, 0, split, context, o.seed);
  std::optional<WindowSampler> held_out;
  if (tokens - split > uint64_t(context) + 2)
    held_out.emplace(store, split, tokens, context, o.seed + 1);

  auto params = model.module().parameters();
  std::unique_ptr<GradientSync> sync;
  if (job.group && env.world_size > 1) {
    sync = std::make_unique<GradientSync>(params, job.group, o.bucket_cap_mb);
    sync->broadcast_parameters();
  }
  torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(o.lr)
                                            .betas({o.beta1, o.beta2})
                                            .eps(o.eps)
                                            .weight_decay(o.weight_decay));
  const int64_t tokens_per_step = env.world_size * o.batch * o.accumulation * context;
  const auto group = env.world_size > 1 ? job.group : c10::intrusive_ptr<c10d::ProcessGroup>();

  TrainResult result;
  result.world_size = env.world_size;
  const std::string checkpoints = job.out_dir + "/checkpoints";
  int64_t start_step = 0;
  double earlier_train_seconds = 0;  // loop time of the segments before a resume
  if (o.resume && !job.out_dir.empty()) {
    if (const std::string path = latest_checkpoint(checkpoints); !path.empty()) {
      const CheckpointState state =
          load_checkpoint(path, model.module(), optimizer, env.rank, env.world_size);
      start_step = state.step;
      result.losses = state.losses;
      earlier_train_seconds = state.train_seconds;
      if (env.rank == 0) spdlog::info("resumed from {} (step {})", path, start_step);
    }
  }
  // Micro-batch k of this rank holds samples starting at (k * world + rank) * batch.
  BatchPrefetcher batches(
      train, o.batch,
      [&](int64_t k) { return uint64_t((k * env.world_size + env.rank) * o.batch); },
      start_step * o.accumulation);
  result.peak_flops = peak_flops_of_rank0(o.bf16, group, env.rank);
  const double flops_per_step = double(tokens_per_step) * model.flops_per_token();
  std::vector<double> step_times, forward_times, backward_times, optimizer_times, allreduce_times;
  const double loop_start = now_seconds();
  model.module().train();
  for (int64_t step = start_step; step < o.steps; ++step) {
    // Every operator of one step, forward and backward, with its time (chrome://tracing).
    std::optional<torch::autograd::profiler::RecordProfile> profile;
    if (step + 1 == o.profile_step && !job.out_dir.empty()) {
      std::filesystem::create_directories(job.out_dir);
      profile.emplace(job.out_dir + "/profile.rank" + std::to_string(env.rank) + ".step" +
                      std::to_string(step + 1) + ".json");
    }
    const double step_start = now_seconds();
    StepStats stats;
    stats.step = step + 1;
    stats.learning_rate = learning_rate_at(o, step);
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(stats.learning_rate);
    drop_gradients(optimizer);
    double loss_sum = 0;
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      const auto batch = batches.next(&stats.data_wait_seconds);
      const uint64_t mask_seed = o.seed * 1000003ULL + uint64_t(((step * o.accumulation + micro) * env.world_size + env.rank));
      const double forward_start = now_seconds();
      auto loss = lm_loss(model, batch.inputs, batch.targets, o.bf16, o.mask_probability, mask_seed) /
                  double(o.accumulation);
      const bool last = micro + 1 == o.accumulation;
      if (sync && last) sync->prepare_for_backward(stop_signal_received());
      const double backward_start = now_seconds();
      loss.backward();
      stats.forward_seconds += backward_start - forward_start;
      stats.backward_seconds += now_seconds() - backward_start;
      if (sync && last) stats.backward_seconds -= sync->launch_seconds();
      loss_sum += loss.item<double>();
    }
    if (sync) stats.allreduce_seconds = sync->finish();
    const double optimizer_start = now_seconds();
    stats.grad_norm = clipped_adamw_step(optimizer, params, o.grad_clip);
    stats.optimizer_seconds = now_seconds() - optimizer_start;
    stats.loss = loss_sum;
    stats.tokens = tokens_per_step;
    stats.step_seconds = now_seconds() - step_start;
    stats.mfu = flops_per_step / (stats.step_seconds * result.peak_flops * env.world_size);
    step_times.push_back(stats.step_seconds);
    forward_times.push_back(stats.forward_seconds);
    backward_times.push_back(stats.backward_seconds);
    optimizer_times.push_back(stats.optimizer_seconds);
    allreduce_times.push_back(stats.allreduce_seconds);
    result.losses.push_back(stats.loss);
    result.data_wait_seconds += stats.data_wait_seconds;
    result.allreduce_seconds += stats.allreduce_seconds;
    if (job.on_step) job.on_step(stats);
    // With a gradient all-reduce the ranks' stop votes travel in it (see GradientSync).
    const bool stop = sync ? sync->stop_voted() : stop_requested(group);
    const bool periodic = o.checkpoint_every > 0 && (step + 1) % o.checkpoint_every == 0;
    if ((stop || periodic) && !job.out_dir.empty()) {
      const double checkpoint_start = now_seconds();
      const double trained = earlier_train_seconds + now_seconds() - loop_start;
      save_checkpoint(checkpoints, {step + 1, env.world_size, result.losses, trained}, model.module(),
                      optimizer, env.rank, group, o.keep_checkpoints);
      if (job.on_checkpoint) job.on_checkpoint(now_seconds() - checkpoint_start);
    }
    if (stop)
      throw Preempted("stopped by a signal after step " + std::to_string(step + 1) +
                      (job.out_dir.empty() ? " (no checkpoint: this run has no folder)"
                                           : " (checkpoint written); continue with hlm run --resume RUN_DIR"));
  }
  result.train_seconds = earlier_train_seconds + now_seconds() - loop_start;
  result.steps = o.steps;
  result.step_seconds_median = median_after_warmup(step_times, o.timing_skip_steps);
  result.forward_seconds_median = median_after_warmup(forward_times, o.timing_skip_steps);
  result.backward_seconds_median = median_after_warmup(backward_times, o.timing_skip_steps);
  result.optimizer_seconds_median = median_after_warmup(optimizer_times, o.timing_skip_steps);
  result.allreduce_seconds_median = median_after_warmup(allreduce_times, o.timing_skip_steps);
  result.tokens_per_s =
      result.step_seconds_median > 0 ? double(tokens_per_step) / result.step_seconds_median : 0;

  if (held_out) {
    torch::NoGradGuard no_grad;
    auto inputs = torch::empty({o.batch, context}, torch::kLong);
    auto targets = torch::empty({o.batch, context}, torch::kLong);
    model.module().eval();
    double sum = 0;
    for (int64_t b = 0; b < o.eval_batches; ++b) {
      held_out->fill(uint64_t(b * o.batch), inputs, targets);
      sum += lm_loss(model, inputs, targets, o.bf16, o.mask_probability, uint64_t(b)).item<double>();
    }
    result.eval_loss = sum / double(std::max<int64_t>(1, o.eval_batches));
    model.module().train();
  }
  result.mfu = result.tokens_per_s * model.flops_per_token() /
               (result.peak_flops * double(env.world_size));
  if (env.rank == 0 && !job.out_dir.empty() && o.save_weights) {
    std::filesystem::create_directories(job.out_dir);
    result.checkpoint = job.out_dir + "/model.pt";
    save_module(model.module(), result.checkpoint);
  }
  if (job.group && env.world_size > 1) job.group->barrier()->wait();
  return result;
}

}  // namespace hlm
