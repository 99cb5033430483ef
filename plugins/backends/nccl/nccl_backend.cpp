// The `nccl` backend: GPU process groups through c10d's ProcessGroupNCCL, one rank per GPU.
// Each rank takes the visible GPU of its local rank (LOCAL_RANK or SLURM_LOCALID; with fewer
// GPUs visible than ranks, e.g. one per task under SLURM's --gpus-per-task, they share
// round-robin, which NCCL itself refuses for two ranks of one group). NCCL's own watchdog
// enforces timeout_s: a rank that stops arriving makes the others' collectives fail, and
// the group is torn down, as the gloo plugin's timeout does.
#include <c10/cuda/CUDAFunctions.h>
#include <torch/cuda.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "hlm/backend.h"

namespace {

int visible_gpus() { return int(torch::cuda::device_count()); }

class NcclBackend : public hlm::Backend {
 public:
  NcclBackend(int timeout_s, bool high_priority_stream)
      : timeout_s_(timeout_s), high_priority_stream_(high_priority_stream) {}

  std::string device(int local_rank) const override {
    return "cuda:" + std::to_string(hlm::gpu_of_local_rank(local_rank, visible_gpus()));
  }

  c10::intrusive_ptr<c10d::Backend> create_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                 int rank, int world_size) override {
    const char* local = std::getenv("LOCAL_RANK");
    if (local == nullptr) local = std::getenv("SLURM_LOCALID");
    const int local_rank = local == nullptr ? 0 : std::atoi(local);
    c10::cuda::set_device(c10::DeviceIndex(hlm::gpu_of_local_rank(local_rank, visible_gpus())));
    auto options = c10d::ProcessGroupNCCL::Options::create(high_priority_stream_);
    options->timeout = std::chrono::seconds(timeout_s_);
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
  }

 private:
  int timeout_s_;
  bool high_priority_stream_;
};

const hlm_param_decl kParams[] = {
    {"timeout_s", "int[1,]", "300", "collective timeout in seconds (NCCL's watchdog)"},
    {"high_priority_stream", "bool", "false",
     "run NCCL's kernels on a high-priority CUDA stream, ahead of backward's"},
};

hlm::Backend* make_nccl(const nlohmann::json& p) {
  if (visible_gpus() == 0)
    throw std::runtime_error(
        "the nccl backend needs a CUDA device on every rank, and this process sees none "
        "(CUDA_VISIBLE_DEVICES, the NVIDIA driver); use backend gloo or shm on CPUs");
  return new NcclBackend(p.at("timeout_s").get<int>(), p.at("high_priority_stream").get<bool>());
}

}  // namespace

HLM_PLUGIN(hlm::Backend, "nccl", "1.0.0", "GPU all-reduce through NCCL (c10d ProcessGroupNCCL)",
           kParams, make_nccl)
