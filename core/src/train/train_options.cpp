// Reading TrainOptions from stage params, and the learning-rate schedule.
#include "train/train_options.h"

#include <algorithm>
#include <cmath>

namespace hlm {

template <class T>
static void read(const nlohmann::json& p, const char* key, T& out) {
  if (p.contains(key) && !p.at(key).is_null()) out = p.at(key).get<T>();
}

TrainOptions TrainOptions::from_params(const nlohmann::json& p) {
  TrainOptions o;
  read(p, "steps", o.steps);
  read(p, "batch", o.batch);
  read(p, "accumulation", o.accumulation);
  read(p, "lr", o.lr);
  read(p, "min_lr_ratio", o.min_lr_ratio);
  read(p, "warmup_steps", o.warmup_steps);
  read(p, "weight_decay", o.weight_decay);
  read(p, "grad_clip", o.grad_clip);
  read(p, "bf16", o.bf16);
  read(p, "seed", o.seed);
  read(p, "threads", o.threads);
  read(p, "bind_cores", o.bind_cores);
  read(p, "bucket_cap_mb", o.bucket_cap_mb);
  read(p, "eval_batches", o.eval_batches);
  read(p, "holdout_fraction", o.holdout_fraction);
  read(p, "log_every", o.log_every);
  read(p, "checkpoint_every", o.checkpoint_every);
  read(p, "resume", o.resume);
  read(p, "keep_checkpoints", o.keep_checkpoints);
  read(p, "max_skipped_steps", o.max_skipped_steps);
  read(p, "timing_skip_steps", o.timing_skip_steps);
  read(p, "save_weights", o.save_weights);
  read(p, "profile_step", o.profile_step);
  read(p, "device", o.device);
  return o;
}

nlohmann::json TrainOptions::to_json() const {
  return {{"steps", steps},
          {"batch", batch},
          {"accumulation", accumulation},
          {"lr", lr},
          {"min_lr_ratio", min_lr_ratio},
          {"warmup_steps", warmup_steps},
          {"weight_decay", weight_decay},
          {"beta1", beta1},
          {"beta2", beta2},
          {"eps", eps},
          {"grad_clip", grad_clip},
          {"bf16", bf16},
          {"seed", seed},
          {"threads", threads},
          {"bind_cores", bind_cores},
          {"bucket_cap_mb", bucket_cap_mb},
          {"eval_batches", eval_batches},
          {"holdout_fraction", holdout_fraction},
          {"log_every", log_every},
          {"checkpoint_every", checkpoint_every},
          {"resume", resume},
          {"keep_checkpoints", keep_checkpoints},
          {"max_skipped_steps", max_skipped_steps},
          {"timing_skip_steps", timing_skip_steps},
          {"save_weights", save_weights},
          {"profile_step", profile_step},
          {"mask_probability", mask_probability},
          {"device", device}};
}

double learning_rate_at(const TrainOptions& o, int64_t step) {
  if (o.warmup_steps > 0 && step < o.warmup_steps)
    return o.lr * double(step + 1) / double(o.warmup_steps);
  const double span = std::max<int64_t>(1, o.steps - o.warmup_steps);
  const double progress = std::clamp(double(step - o.warmup_steps) / span, 0.0, 1.0);
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
  return o.lr * (o.min_lr_ratio + (1.0 - o.min_lr_ratio) * cosine);
}

}  // namespace hlm
