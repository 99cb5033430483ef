// How fast a process group's all-reduce is: the timings the scaling model turns into a
// latency and a bandwidth (scaling/performance_model.h, fabric_from_probe).
#pragma once
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace hlm {

// Median times of all-reduces of one float (latency) and of `large_bytes` (bandwidth), after
// a warm-up, as {"small_bytes", "small_seconds", "large_bytes", "large_seconds", "ranks"}.
// Collective: every rank of the group calls it. The tensors are on `device` (the rank's
// training device: NCCL all-reduces CUDA tensors only), and a GPU is waited for.
nlohmann::json probe_fabric(const c10::intrusive_ptr<c10d::Backend>& group,
                            const torch::Device& device = torch::Device(torch::kCPU),
                            int64_t large_bytes = 4 << 20);

}  // namespace hlm
