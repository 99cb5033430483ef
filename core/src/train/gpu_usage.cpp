// A rank's GPU over its training steps (see gpu_usage.h).
#include "train/gpu_usage.h"

#include <cstdio>

#include "hlm/util.h"

#if HLM_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace hlm {

namespace {

constexpr double kSecondsBetweenReadings = 0.5;  // NVML's calls cost up to a millisecond

}  // namespace

GpuUsage::GpuUsage(const torch::Device& device, int nvml_index, const NvmlReader& nvml)
    : device_(device), nvml_index_(nvml_index), nvml_(nvml) {}

void GpuUsage::after_step(int64_t samples) {
  if (!device_.is_cuda() || !nvml_.available() || nvml_index_ < 0) return;
  if (first_energy_) samples_since_first_ += samples;
  const double now = now_seconds();
  if (last_read_ >= 0 && now - last_read_ < kSecondsBetweenReadings) return;
  last_read_ = now;
  const auto gpu = nvml_.read(nvml_index_);
  if (!gpu) return;
  ++readings_;
  if (gpu->utilization_ratio) {
    utilization_sum_ += *gpu->utilization_ratio;
    ++utilization_readings_;
  }
  if (gpu->power_watts) {
    power_sum_ += *gpu->power_watts;
    ++power_readings_;
  }
  if (gpu->energy_joules) {
    if (!first_energy_) first_energy_ = gpu->energy_joules;
    last_energy_ = gpu->energy_joules;
    samples_at_last_energy_ = samples_since_first_;
  }
}

nlohmann::json GpuUsage::summary() const {
  if (!device_.is_cuda()) return nullptr;
  nlohmann::json out = {{"device", device_.str()}};
#if HLM_WITH_CUDA
  const int index = device_.index() < 0 ? 0 : device_.index();
  out["name"] = at::cuda::getDeviceProperties(index)->name;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  out["peak_memory_bytes"] =
      stats.allocated_bytes[size_t(c10::CachingAllocator::StatType::AGGREGATE)].peak;
#endif
  if (!nvml_.available() || nvml_index_ < 0) {
    out["nvml"] = nvml_.available() ? "NVML's index of this GPU is unknown (GPU UUIDs in "
                                      "CUDA_VISIBLE_DEVICES)"
                                    : nvml_.unavailable_reason();
    return out;
  }
  out["nvml_readings"] = readings_;
  if (utilization_readings_ > 0) out["utilization_mean"] = utilization_sum_ / utilization_readings_;
  if (power_readings_ > 0) out["power_watts_mean"] = power_sum_ / power_readings_;
  if (first_energy_ && samples_at_last_energy_ > 0)
    out["energy_joules_per_sample"] =
        (*last_energy_ - *first_energy_) / double(samples_at_last_energy_);
  return out;
}

std::string gpu_usage_text(const nlohmann::json& g) {
  std::string line = g.value("name", std::string("GPU")) + " (" + g.value("device", "?") + ")";
  char cell[96];
  if (g.contains("peak_memory_bytes")) {
    std::snprintf(cell, sizeof(cell), ", peak tensor memory %.2f GiB",
                  g.at("peak_memory_bytes").get<double>() / double(1ULL << 30));
    line += cell;
  }
  if (g.contains("utilization_mean")) {
    std::snprintf(cell, sizeof(cell), ", utilisation %.2f", g.at("utilization_mean").get<double>());
    line += cell;
  }
  if (g.contains("power_watts_mean")) {
    std::snprintf(cell, sizeof(cell), ", power %.0f W", g.at("power_watts_mean").get<double>());
    line += cell;
  }
  if (g.contains("energy_joules_per_sample")) {
    std::snprintf(cell, sizeof(cell), ", %.3g J per sample",
                  g.at("energy_joules_per_sample").get<double>());
    line += cell;
  }
  if (g.contains("nvml")) line += "; no NVML readings: " + g.at("nvml").get<std::string>();
  return line;
}

}  // namespace hlm
