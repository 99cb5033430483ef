// Which device a stage's ranks compute on: the `device` param (auto, cpu or cuda) resolved
// against what this machine shows.
#pragma once
#include <string>

namespace hlm {

// What CUDA this process sees: LibTorch's device count (CUDA_VISIBLE_DEVICES applied), and
// why there are none when there are none.
struct GpuProbe {
  int visible = 0;
  std::string why_none;  // empty when visible > 0
};

// Asks LibTorch (and, when it finds no device, the NVIDIA driver library) once per call.
GpuProbe probe_gpus();

// The device a stage asked for ("auto", "cpu" or "cuda") as "cpu" or "cuda". auto is cuda when
// a GPU is visible. Throws ConfigError naming the stage, what was looked for and what to do
// when cuda is asked for and none is visible, or when the value is none of the three.
std::string resolve_device(const std::string& requested, const GpuProbe& gpus,
                           const std::string& stage_id);

// The GPU each rank takes: hlm::gpu_of_local_rank (hlm/backend.h, shared with the plugins).

}  // namespace hlm
