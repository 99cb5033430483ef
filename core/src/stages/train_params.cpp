// Shared training parameters (see train_params.h).
#include "stages/train_params.h"

#include "device/device.h"
#include "hlm/errors.h"
#include "train/train_options.h"

namespace hlm {

workflow::ParamSpec device_param_spec() {
  const TrainField& device = train_field("device");
  return {device.name, device.type, device.default_json, device.help, false};
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
  std::vector<workflow::ParamSpec> specs;
  for (const TrainField& field : train_fields()) {
    const bool declared =
        field.scope == TrainFieldScope::kTraining ||
        (field.scope == TrainFieldScope::kLanguageModelOnly && stage != TrainingStage::kFineTune);
    if (!declared) continue;
    const std::string name = field.name;
    const char* fallback = name == "steps" ? default_steps
                           : name == "lr"  ? default_lr
                                           : field.default_json;
    specs.push_back({name, field.type, fallback, field.help, false});
  }
  return specs;
}

nlohmann::json training_options_json(const nlohmann::json& params) {
  nlohmann::json out = nlohmann::json::object();
  for (const TrainField& field : train_fields())
    if (field.scope != TrainFieldScope::kInternal && params.contains(field.name))
      out[field.name] = params.at(field.name);
  return out;
}

}  // namespace hlm
