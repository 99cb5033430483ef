// The table of training parameters, and the learning-rate schedule (see train_options.h).
#include "train/train_options.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "hlm/errors.h"

namespace hlm {

namespace {

using S = TrainFieldScope;
using O = TrainOptions;

const std::vector<TrainField> kFields = {
    {"steps", "int[1,]", "100", "optimizer steps", S::kTraining, &O::steps},
    {"batch", "int[1,]", "16", "sequences per rank per micro-step", S::kTraining, &O::batch},
    {"accumulation", "int[1,]", "1", "micro-steps per optimizer step", S::kTraining,
     &O::accumulation},
    {"lr", "float(0,]", "3e-4", "peak learning rate (AdamW)", S::kTraining, &O::lr},
    {"warmup_steps", "int[0,]", "10", "linear warm-up steps before cosine decay", S::kTraining,
     &O::warmup_steps},
    {"weight_decay", "float[0,]", "0.1", "AdamW weight decay", S::kTraining, &O::weight_decay},
    {"grad_clip", "float[0,]", "1.0", "max gradient L2 norm (0 = off)", S::kTraining,
     &O::grad_clip},
    {"bf16", "bool", "false", "bf16 autocast for the forward pass", S::kTraining, &O::bf16},
    {"seed", "int", "0", "initial weights and data order", S::kTraining, &O::seed},
    {"threads", "int[1,]", "1", "intra-op threads per rank", S::kTraining, &O::threads},
    {"bind_cores", "bool", "true",
     "when several ranks share a host and their threads fit its cores, pin each rank to cores "
     "of its own",
     S::kLanguageModelOnly, &O::bind_cores},
    {"bucket_cap_mb", "float(0,]", "4",
     "gradient all-reduce bucket size (MB); smaller buckets start communication earlier in "
     "backward",
     S::kLanguageModelOnly, &O::bucket_cap_mb},
    {"eval_batches", "int[0,]", "4", "held-out batches evaluated at the end", S::kLanguageModelOnly,
     &O::eval_batches},
    {"holdout_fraction", "float[0,1)", "0.05", "tail of the tokens kept for evaluation",
     S::kLanguageModelOnly, &O::holdout_fraction},
    {"log_every", "int[1,]", "10", "steps between log lines", S::kTraining, &O::log_every},
    {"checkpoint_every", "int[0,]", "0", "steps between checkpoints (0 = only when stopped)",
     S::kTraining, &O::checkpoint_every},
    {"profile_step", "int[0,]", "0",
     "record this step with LibTorch's profiler into profile.rank<R>.step<N>.json "
     "(chrome://tracing); 0 = off",
     S::kLanguageModelOnly, &O::profile_step},
    {"resume", "bool", "true", "continue from the stage's newest complete checkpoint", S::kTraining,
     &O::resume},
    {"keep_checkpoints", "int[0,]", "3",
     "newest complete checkpoints kept, older ones removed (0 = all)", S::kTraining,
     &O::keep_checkpoints},
    {"max_skipped_steps", "int[0,]", "0",
     "steps with a NaN or infinite loss or gradient norm that are skipped (not applied) before "
     "the run stops; 0 stops at the first, naming it and keeping the last good checkpoint",
     S::kTraining, &O::max_skipped_steps},
    {"device", "string", "\"auto\"",
     "where the model runs: cpu, cuda or auto (cuda when a GPU is visible); cuda is refused "
     "before any work where no GPU is visible",
     S::kDevice, &O::device},
    {"cuda_graph", "bool", "false",
     "capture each micro-batch's forward and backward in a CUDA graph once and replay it "
     "(device cuda, one rank; a small model's step is then not bound by kernel launches)",
     S::kLanguageModelOnly, &O::cuda_graph},
    {"min_lr_ratio", "float[0,1]", "0.1", "cosine decay ends at lr * min_lr_ratio", S::kInternal,
     &O::min_lr_ratio},
    {"beta1", "float[0,1)", "0.9", "AdamW's first-moment decay", S::kInternal, &O::beta1},
    {"beta2", "float[0,1)", "0.999", "AdamW's second-moment decay", S::kInternal, &O::beta2},
    {"eps", "float(0,]", "1e-8", "AdamW's epsilon", S::kInternal, &O::eps},
    {"timing_skip_steps", "int", "-1", "steps left out of the median step time; -1 = automatic",
     S::kInternal, &O::timing_skip_steps},
    {"save_weights", "bool", "true", "write model.pt at the end", S::kInternal, &O::save_weights},
    {"mask_probability", "float[0,1]", "0.15",
     "masked objective: share of content tokens predicted (the bert plugin's)", S::kInternal,
     &O::mask_probability},
};

// Sets the field `member` names from a JSON value of its type.
void set(TrainOptions& o, const TrainMember& member, const nlohmann::json& value) {
  std::visit([&](auto field) { o.*field = value.get<std::decay_t<decltype(o.*field)>>(); }, member);
}

}  // namespace

const std::vector<TrainField>& train_fields() { return kFields; }

const TrainField& train_field(const std::string& name) {
  for (const auto& field : kFields)
    if (name == field.name) return field;
  throw InternalError("no training field '{}'", name);
}

TrainOptions::TrainOptions() {
  for (const auto& field : kFields)
    set(*this, field.member, nlohmann::json::parse(field.default_json));
}

TrainOptions TrainOptions::from_params(const nlohmann::json& p) {
  TrainOptions o;
  for (const auto& field : kFields)
    if (p.contains(field.name) && !p.at(field.name).is_null())
      set(o, field.member, p.at(field.name));
  return o;
}

nlohmann::json TrainOptions::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& field : kFields)
    std::visit([&](auto member) { out[field.name] = this->*member; }, field.member);
  return out;
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
