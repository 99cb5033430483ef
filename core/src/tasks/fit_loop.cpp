// The shared fine-tuning loop (see fit_loop.h).
#include "tasks/fit_loop.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "distributed/preemption.h"
#include "ops/fused_adamw.h"
#include "train/checkpoint.h"
#include "train/nonfinite_steps.h"
#include "util/atomic_file.h"

namespace hlm {
namespace {

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

FitResult run_fit_loop(const FitLoop& loop, const TrainOptions& o, const FitHooks& hooks,
                       const EarlyStopping& early) {
  torch::nn::Module& bundle = *loop.bundle;
  // One parameter group per learning rate: the backbone's (when trained), then the head's.
  std::vector<torch::Tensor> params = loop.params.backbone;
  params.insert(params.end(), loop.params.head.begin(), loop.params.head.end());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  std::vector<double> lr_scales;
  const auto options = torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay);
  if (!loop.params.backbone.empty()) {
    groups.emplace_back(loop.params.backbone,
                        std::make_unique<torch::optim::AdamWOptions>(options));
    lr_scales.push_back(1.0);
  }
  groups.emplace_back(loop.params.head, std::make_unique<torch::optim::AdamWOptions>(options));
  lr_scales.push_back(loop.head_lr_scale);
  torch::optim::AdamW optimizer(std::move(groups), options);
  const bool validating = bool(loop.validate);
  FitResult result;
  StoppingState stopping;
  int64_t start_step = 0, skipped_before = 0;
  if (o.resume && !hooks.checkpoint_dir.empty())
    if (const std::string path = latest_checkpoint(hooks.checkpoint_dir); !path.empty()) {
      const CheckpointState state = load_checkpoint(path, bundle, optimizer, 0, 1);
      start_step = state.step;
      result.losses = state.losses;
      skipped_before = state.skipped_steps;
      if (validating && !stopping.load(hooks.checkpoint_dir, start_step) && hooks.on_log)
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
    loop.train_mode();
    for (size_t g = 0; g < optimizer.param_groups().size(); ++g)
      static_cast<torch::optim::AdamWOptions&>(optimizer.param_groups()[g].options())
          .lr(learning_rate_at(o, step) * lr_scales[g]);
    drop_gradients(optimizer);
    double loss_sum = 0;
    bool loss_finite = true;
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      auto loss = loop.loss(step * o.accumulation + micro) / double(o.accumulation);
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
    if (validating &&
        ((step + 1) % std::max<int64_t>(1, early.every) == 0 || step + 1 == o.steps)) {
      const double score = loop.validate();
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
      // The first checkpoint makes the folder; early stopping's state is written before it.
      std::filesystem::create_directories(hooks.checkpoint_dir);
      if (validating) {
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

}  // namespace hlm
