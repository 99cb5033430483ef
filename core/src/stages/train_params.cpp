// Shared training parameters (see train_params.h).
#include "stages/train_params.h"

#include <algorithm>

#include "device/device.h"
#include "hlm/errors.h"

namespace hlm {

workflow::ParamSpec device_param_spec() {
  return {"device", "string", "\"cpu\"",
          "where the model runs: cpu, cuda or auto (cuda when a GPU is visible); cuda is "
          "refused before any work where no GPU is visible",
          false};
}

void check_training_device(const workflow::StageInstance& instance) {
  const std::string requested = instance.params.value("device", "cpu");
  const GpuProbe gpus = probe_gpus();
  const auto backend = instance.params.value("backend", nlohmann::json::object());
  const bool nccl = backend.is_object() && backend.value("plugin", "") == "nccl";
  if (nccl && gpus.visible == 0)
    throw ConfigError(
        "{}:{}: stage '{}' names the nccl backend, which all-reduces on GPUs, but this "
        "machine shows none: {}. Use backend gloo (or shm on one host) here",
        instance.file, instance.line, instance.id, gpus.why_none);
  const std::string device = resolve_device(requested, gpus, instance.id);
  if (device == "cpu" && nccl)
    throw ConfigError(
        "{}:{}: stage '{}' names the nccl backend, which all-reduces CUDA tensors, with device "
        "{} (the CPU); set {}.device=cuda, or use backend gloo",
        instance.file, instance.line, instance.id, requested, instance.id);
}

std::vector<workflow::ParamSpec> training_param_specs(const char* default_steps,
                                                      const char* default_lr, TrainingStage stage) {
  std::vector<workflow::ParamSpec> specs = {
      {"steps", "int[1,]", default_steps, "optimizer steps", false},
      {"batch", "int[1,]", "16", "sequences per rank per micro-step", false},
      {"accumulation", "int[1,]", "1", "micro-steps per optimizer step", false},
      {"lr", "float(0,]", default_lr, "peak learning rate (AdamW)", false},
      {"warmup_steps", "int[0,]", "10", "linear warm-up steps before cosine decay", false},
      {"weight_decay", "float[0,]", "0.1", "AdamW weight decay", false},
      {"grad_clip", "float[0,]", "1.0", "max gradient L2 norm (0 = off)", false},
      {"bf16", "bool", "false", "bf16 autocast for the forward pass", false},
      {"seed", "int", "0", "initial weights and data order", false},
      {"threads", "int[1,]", "1", "intra-op threads per rank", false},
      {"bind_cores", "bool", "true",
       "when several ranks share a host and their threads fit its cores, pin each rank to "
       "cores of its own",
       false},
      {"bucket_cap_mb", "float(0,]", "4",
       "gradient all-reduce bucket size (MB); smaller buckets start communication earlier in "
       "backward",
       false},
      {"eval_batches", "int[0,]", "4", "held-out batches evaluated at the end", false},
      {"holdout_fraction", "float[0,1)", "0.05", "tail of the tokens kept for evaluation", false},
      {"log_every", "int[1,]", "10", "steps between log lines", false},
      {"checkpoint_every", "int[0,]", "0", "steps between checkpoints (0 = only when stopped)",
       false},
      {"profile_step", "int[0,]", "0",
       "record this step with LibTorch's profiler into profile.rank<R>.step<N>.json "
       "(chrome://tracing); 0 = off",
       false},
      {"resume", "bool", "true", "continue from the stage's newest complete checkpoint", false},
      {"keep_checkpoints", "int[0,]", "3",
       "newest complete checkpoints kept, older ones removed (0 = all)", false},
      {"max_skipped_steps", "int[0,]", "0",
       "steps with a NaN or infinite loss or gradient norm that are skipped (not applied) "
       "before the run stops; 0 stops at the first, naming it and keeping the last good "
       "checkpoint",
       false},
  };
  if (stage == TrainingStage::kFineTune) {
    const std::vector<std::string> language_model_only = {
        "bucket_cap_mb", "eval_batches", "holdout_fraction", "profile_step", "bind_cores"};
    specs.erase(std::remove_if(specs.begin(), specs.end(),
                               [&](const workflow::ParamSpec& spec) {
                                 return std::find(language_model_only.begin(),
                                                  language_model_only.end(),
                                                  spec.name) != language_model_only.end();
                               }),
                specs.end());
  }
  return specs;
}

nlohmann::json training_options_json(const nlohmann::json& params) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& spec : training_param_specs("0", "0"))
    if (params.contains(spec.name)) out[spec.name] = params.at(spec.name);
  if (params.contains("device")) out["device"] = params.at("device");
  return out;
}

}  // namespace hlm
