// Device resolution (see device.h).
#include "device/device.h"

#include <dlfcn.h>
#include <torch/cuda.h>

#include <cstdlib>

#include "hlm/errors.h"

namespace hlm {

namespace {

std::string visible_devices_variable() {
  const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
  return value == nullptr ? "unset" : "'" + std::string(value) + "'";
}

// Why LibTorch finds no device, in the terms a user can act on.
std::string why_no_gpu() {
  if (HLM_WITH_CUDA == 0) return "this hlm was built against a LibTorch without CUDA";
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr)
    return "no NVIDIA driver (libcuda.so.1 not found); CUDA_VISIBLE_DEVICES " +
           visible_devices_variable();
  dlclose(driver);
  return "the NVIDIA driver is loaded but shows no device; CUDA_VISIBLE_DEVICES " +
         visible_devices_variable();
}

}  // namespace

GpuProbe probe_gpus() {
  GpuProbe probe;
  probe.visible = int(torch::cuda::device_count());
  if (probe.visible == 0) probe.why_none = why_no_gpu();
  return probe;
}

std::string resolve_device(const std::string& requested, const GpuProbe& gpus,
                           const std::string& stage_id) {
  if (requested == "cpu") return "cpu";
  if (requested == "auto") return gpus.visible > 0 ? "cuda" : "cpu";
  if (requested != "cuda")
    throw ConfigError("stage '{}': device '{}' is not one of auto, cpu, cuda", stage_id, requested);
  if (gpus.visible == 0)
    throw ConfigError(
        "stage '{}': device cuda asked for, but LibTorch {} (CUDA {}) sees no CUDA device: {}. "
        "Run it on a GPU node, or set {}.device=cpu (or auto)",
        stage_id, HLM_TORCH_VERSION, HLM_CUDA_VERSION, gpus.why_none, stage_id);
  return "cuda";
}

}  // namespace hlm
