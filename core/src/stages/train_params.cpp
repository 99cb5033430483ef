// Shared training parameters (see train_params.h).
#include "stages/train_params.h"

#include <algorithm>

#include "device/device.h"
#include "hlm/errors.h"
#include "train/step_graph.h"
#include "train/train_options.h"

namespace hlm {

namespace {

// The most ranks a stage trains on: world_size (pretrain), or its largest world_sizes entry
// (scale-analysis).
int largest_world(const nlohmann::json& params) {
  int largest = params.value("world_size", 1);
  const auto sizes = params.value("world_sizes", nlohmann::json::array());
  for (const auto& n : sizes)
    if (n.is_number_integer()) largest = std::max(largest, n.get<int>());
  return largest;
}

}  // namespace

workflow::ParamSpec device_param_spec() {
  const TrainField& device = train_field("device");
  return {device.name, device.type, device.default_json, device.help, false};
}

void check_training_device(const workflow::StageInstance& instance) {
  const std::string requested = instance.params.value("device", "auto");
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
  check_cuda_graph(instance.params.value("cuda_graph", false), torch::Device(device),
                   largest_world(instance.params), instance.id);
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
