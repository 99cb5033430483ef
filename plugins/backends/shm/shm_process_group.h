// A c10d process group for ranks on one host: collectives through a shared-memory segment
// instead of TCP. Two ranks on two cores spend their CPU time on the model, where Gloo's
// loopback all-reduce keeps each waiting several times longer (the all-reduce phase of
// `hlm bench pretrain` at 2 ranks; README.md here has the figures). Supports broadcast, all-reduce
// (sum, average, max, min of float, double, int32 and int64 tensors) and barrier; collectives run
// on the calling thread and return completed work. Tensors from allocate_shared live in the
// segment: all-reducing one copies nothing in or out (the trainer's gradient buckets). A rank that
// stops arriving (killed) makes the others fail after the timeout, naming the collective.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "hlm/backend.h"

namespace hlm::shm {

class ShmProcessGroup : public c10d::Backend, public hlm::SharedTensorMemory {
 public:
  // Rank 0 creates the segment and publishes its name in `store`; the others attach to it.
  // chunk_bytes: the largest piece of an ordinary tensor moved at once (each rank's slot);
  // shared_bytes: each rank's room for tensors from allocate_shared.
  ShmProcessGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                  size_t chunk_bytes, size_t shared_bytes, std::chrono::milliseconds timeout);
  ~ShmProcessGroup() override;

  at::Tensor allocate_shared(int64_t numel, at::ScalarType type) override;

  const std::string getBackendName() const override { return "hlm-shm"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  struct Control {
    alignas(64) std::atomic<uint32_t> arrived;
    alignas(64) std::atomic<uint32_t> generation;
    alignas(64) std::atomic<uint32_t> sleepers;  // ranks in a futex wait on generation
  };
  // What a rank all-reduces in shared memory, for the others to check against their own.
  struct alignas(64) SharedCall {
    uint64_t offset, numel;
    int32_t type, op;
  };

  void wait_for_all(const char* collective);
  uint8_t* slot(int r) const { return data_ + size_t(r) * chunk_bytes_; }
  uint8_t* result() const { return data_ + size_t(size_) * chunk_bytes_; }
  uint8_t* shared(int r) const { return shared_ + size_t(r) * shared_bytes_; }
  bool is_shared(const at::Tensor& t) const;
  void check_same_shared_call() const;
  template <class T>
  void allreduce_chunked(T* values, size_t n, c10d::ReduceOp::RedOpType op);
  template <class T>
  void allreduce_shared(size_t offset, size_t n, c10d::ReduceOp::RedOpType op);

  size_t chunk_bytes_, shared_bytes_, shared_used_ = 0;
  std::chrono::milliseconds timeout_;
  size_t mapped_bytes_ = 0;
  int fd_ = -1;  // kept open to reserve the pages of shared tensors
  void* mapping_ = nullptr;
  Control* control_ = nullptr;
  SharedCall* calls_ = nullptr;  // one per rank
  uint8_t* data_ = nullptr;      // size + 1 chunk slots
  uint8_t* shared_ = nullptr;    // size shares of shared_bytes
};

}  // namespace hlm::shm
