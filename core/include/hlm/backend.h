// Backend plugins: make the c10d process group the trainer all-reduces over (Gloo, NCCL).
#pragma once
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <string>

#include "hlm/plugin.h"

namespace hlm {

class Backend {
 public:
  virtual ~Backend() = default;
  // The device tensors must live on for this backend ("cpu" or "cuda:<local_rank>").
  virtual std::string device(int local_rank) const = 0;
  virtual c10::intrusive_ptr<c10d::ProcessGroup> create_group(
      const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size) = 0;
};

}  // namespace hlm
