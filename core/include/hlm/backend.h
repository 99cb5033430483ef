// Backend plugins: make the c10d collectives the trainer all-reduces over (gloo, shm, nccl).
// LibTorch 2.x splits c10d's ProcessGroup (the front that dispatches by device) from Backend
// (one implementation: Gloo, NCCL, a custom one); hlm calls a Backend directly.
#pragma once
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "hlm/errors.h"
#include "hlm/plugin.h"

namespace hlm {

// The GPU index of the rank with this local rank on its host: one GPU per rank (local rank i
// takes visible GPU i). When fewer GPUs are visible than ranks (e.g. SLURM's --gpus-per-task
// gives every task a single visible GPU) ranks share them round-robin.
inline int gpu_of_local_rank(int local_rank, int visible_gpus) {
  if (visible_gpus <= 0) throw InternalError("gpu_of_local_rank: no GPU visible");
  return local_rank % visible_gpus;
}

class Backend {
 public:
  static constexpr const char* kPluginKind = "backend";  // HLM_PLUGIN's descriptor kind
  virtual ~Backend() = default;
  // The device tensors must live on for this backend ("cpu", or "cuda:<index>" of the GPU the
  // rank with this local rank takes).
  virtual std::string device(int local_rank) const = 0;
  virtual c10::intrusive_ptr<c10d::Backend> create_group(
      const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size) = 0;
};

// Implemented by process groups whose ranks share memory (the shm backend): tensors handed
// out here live in that memory, so an all-reduce of one moves no data in or out of a staging
// area (each rank reduces its share of the elements straight into every rank's tensor).
// Such groups also all-reduce with ReduceOp::AVG. GradientSync keeps its buckets here when
// the group offers it.
class SharedTensorMemory {
 public:
  virtual ~SharedTensorMemory() = default;
  // A zeroed contiguous CPU tensor of `numel` elements in this rank's share of the memory,
  // or an undefined tensor when that is full. Every rank must ask for the same sizes in the
  // same order (as it must issue the same collectives). The tensor keeps the memory mapped.
  virtual at::Tensor allocate_shared(int64_t numel, at::ScalarType type) = 0;
};

}  // namespace hlm
