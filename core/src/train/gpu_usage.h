// What a training rank's GPU did over its steps, for the stage's result and report: NVML's
// utilisation and power (means of readings at most twice a second, taken after steps), the
// energy NVML counted from the first step's end to the last's per sample trained in between,
// and the most memory LibTorch's caching allocator held for tensors. Nothing for a CPU rank.
// /metrics shows the same NVML readings live (metrics.h).
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "metrics/energy.h"

namespace hlm {

class GpuUsage {
 public:
  // `nvml_index`: train_device.h's nvml_index_of (-1 when it cannot be known).
  GpuUsage(const torch::Device& device, int nvml_index, const NvmlReader& nvml);
  // After each step: `samples` sequences this rank trained in it.
  void after_step(int64_t samples);
  // {"device", "name", "peak_memory_bytes", and the NVML means, or "nvml": why there are none};
  // null for the CPU.
  nlohmann::json summary() const;

 private:
  torch::Device device_;
  int nvml_index_;
  const NvmlReader& nvml_;
  double last_read_ = -1;  // now_seconds() of the last reading
  int readings_ = 0;
  double utilization_sum_ = 0, power_sum_ = 0;
  int utilization_readings_ = 0, power_readings_ = 0;
  std::optional<double> first_energy_, last_energy_;
  int64_t samples_since_first_ = 0, samples_at_last_energy_ = 0;
};

// A summary() as one line for reports: "NVIDIA H200 (cuda:0), peak tensor memory 12.30 GiB,
// utilisation 0.93, power 412 W, 0.83 J per sample", or why NVML gave nothing.
std::string gpu_usage_text(const nlohmann::json& summary);

}  // namespace hlm
