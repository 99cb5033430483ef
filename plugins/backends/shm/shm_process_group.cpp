// Shared-memory collectives (see shm_process_group.h).
#include "shm_process_group.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "hlm/util.h"

namespace hlm::shm {
namespace {

// Work that is already done: every collective here runs on the calling thread.
class DoneWork : public c10d::Work {
 public:
  DoneWork() { finish(); }
};

std::string store_text(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

[[noreturn]] void fail_errno(const std::string& what) {
  TORCH_CHECK(false, "shm backend: ", what, ": ", std::strerror(errno),
              " (is /dev/shm mounted and large enough? the segment holds world_size + 1 chunks)");
}

// The one contiguous CPU tensor a collective here works on.
at::Tensor& only_tensor(std::vector<at::Tensor>& tensors, const char* collective) {
  TORCH_CHECK(tensors.size() == 1, "shm backend: ", collective, " takes one tensor per rank");
  at::Tensor& t = tensors[0];
  TORCH_CHECK(t.device().is_cpu() && t.is_contiguous(), "shm backend: ", collective,
              " needs a contiguous CPU tensor");
  return t;
}

template <class T>
T combine(T a, T b, c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::MAX:
      return std::max(a, b);
    case c10d::ReduceOp::MIN:
      return std::min(a, b);
    default:
      return a + b;
  }
}

}  // namespace

ShmProcessGroup::ShmProcessGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                 size_t chunk_bytes, std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size), chunk_bytes_(chunk_bytes / 64 * 64), timeout_(timeout) {
  TORCH_CHECK(chunk_bytes_ >= 64, "shm backend: chunk_mb too small");
  mapped_bytes_ = sizeof(Control) + size_t(size + 1) * chunk_bytes_;
  std::string name;
  int fd = -1;
  if (rank == 0) {
    name = "/hlm-shm-" + std::to_string(::getpid()) + "-" + hlm::hex64(std::random_device{}());
    fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) fail_errno("shm_open(" + name + ")");
    if (::ftruncate(fd, off_t(mapped_bytes_)) != 0) fail_errno("ftruncate(" + name + ")");
    store->set("hlm_shm/name", std::vector<uint8_t>(name.begin(), name.end()));
  } else {
    name = store_text(store->get("hlm_shm/name"));
    fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) fail_errno("shm_open(" + name + ") from rank " + std::to_string(rank));
  }
  mapping_ = ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mapping_ == MAP_FAILED) fail_errno("mmap(" + name + ")");
  control_ = static_cast<Control*>(mapping_);
  data_ = static_cast<uint8_t*>(mapping_) + sizeof(Control);
  // Once every rank has it mapped the name goes, so no segment outlives the group, whatever
  // way the ranks end.
  store->add("hlm_shm/attached", 1);
  if (rank == 0) {
    const auto start = std::chrono::steady_clock::now();
    while (store->add("hlm_shm/attached", 0) < size) {
      TORCH_CHECK(std::chrono::steady_clock::now() - start < timeout_,
                  "shm backend: not every rank attached to ", name, " within the timeout");
      ::usleep(1000);
    }
    ::shm_unlink(name.c_str());
  }
}

ShmProcessGroup::~ShmProcessGroup() {
  if (mapping_ && mapping_ != MAP_FAILED) ::munmap(mapping_, mapped_bytes_);
}

// A sense-reversing barrier on two shared counters: the last rank in resets the count, then
// opens the next generation. Waiting spins briefly, then yields the core.
void ShmProcessGroup::wait_for_all(const char* collective) {
  const uint32_t generation = control_->generation.load(std::memory_order_acquire);
  if (control_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(size_)) {
    control_->arrived.store(0, std::memory_order_relaxed);
    control_->generation.fetch_add(1, std::memory_order_release);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t spins = 0; control_->generation.load(std::memory_order_acquire) == generation;
       ++spins) {
    if (spins < 2000) continue;
    ::sched_yield();
    if ((spins & 1023) == 0 && std::chrono::steady_clock::now() - start > timeout_)
      TORCH_CHECK(false, "shm backend: rank ", rank_, " waited ",
                  std::chrono::duration_cast<std::chrono::seconds>(timeout_).count(),
                  " s in ", collective,
                  " for the other ranks (one of them stopped or was killed); the runner restarts "
                  "the group from the last checkpoint");
  }
}

template <class T>
void ShmProcessGroup::allreduce_typed(T* values, size_t n, c10d::ReduceOp op) {
  const size_t per_chunk = chunk_bytes_ / sizeof(T);
  const auto kind = static_cast<c10d::ReduceOp::RedOpType>(op);
  for (size_t off = 0; off < n; off += per_chunk) {
    const size_t len = std::min(per_chunk, n - off);
    std::memcpy(slot(rank_), values + off, len * sizeof(T));
    wait_for_all("allreduce");
    // Each rank reduces its share of the chunk over the ranks in rank order, so every rank
    // reads the same bits back.
    const size_t share = (len + size_ - 1) / size_;
    const size_t lo = std::min(len, share * rank_), hi = std::min(len, lo + share);
    T* out = reinterpret_cast<T*>(result());
    const T* first = reinterpret_cast<const T*>(slot(0));
    for (size_t i = lo; i < hi; ++i) out[i] = first[i];
    for (int r = 1; r < size_; ++r) {
      const T* in = reinterpret_cast<const T*>(slot(r));
      for (size_t i = lo; i < hi; ++i) out[i] = combine(out[i], in[i], kind);
    }
    wait_for_all("allreduce");
    std::memcpy(values + off, out, len * sizeof(T));
  }
}

c10::intrusive_ptr<c10d::Work> ShmProcessGroup::allreduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::AllreduceOptions& opts) {
  at::Tensor& t = only_tensor(tensors, "allreduce");
  const auto op = static_cast<c10d::ReduceOp::RedOpType>(opts.reduceOp);
  TORCH_CHECK(op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::MAX || op == c10d::ReduceOp::MIN,
              "shm backend: allreduce supports SUM, MAX and MIN");
  const size_t n = size_t(t.numel());
  switch (t.scalar_type()) {
    case at::kFloat:
      allreduce_typed(t.data_ptr<float>(), n, opts.reduceOp);
      break;
    case at::kDouble:
      allreduce_typed(t.data_ptr<double>(), n, opts.reduceOp);
      break;
    case at::kInt:
      allreduce_typed(t.data_ptr<int32_t>(), n, opts.reduceOp);
      break;
    case at::kLong:
      allreduce_typed(t.data_ptr<int64_t>(), n, opts.reduceOp);
      break;
    default:
      TORCH_CHECK(false, "shm backend: allreduce of ", t.scalar_type(), " is not supported");
  }
  return c10::make_intrusive<DoneWork>();
}

c10::intrusive_ptr<c10d::Work> ShmProcessGroup::broadcast(std::vector<at::Tensor>& tensors,
                                                          const c10d::BroadcastOptions& opts) {
  at::Tensor& t = only_tensor(tensors, "broadcast");
  auto* bytes = static_cast<uint8_t*>(t.data_ptr());
  const size_t n = size_t(t.numel()) * t.element_size();
  // Through the root's own slot, not the result area: a rank may still be copying the
  // previous all-reduce's result out when the root arrives here.
  const int root = int(opts.rootRank);
  for (size_t off = 0; off < n; off += chunk_bytes_) {
    const size_t len = std::min(chunk_bytes_, n - off);
    if (rank_ == root) std::memcpy(slot(root), bytes + off, len);
    wait_for_all("broadcast");
    if (rank_ != root) std::memcpy(bytes + off, slot(root), len);
    wait_for_all("broadcast");
  }
  return c10::make_intrusive<DoneWork>();
}

c10::intrusive_ptr<c10d::Work> ShmProcessGroup::barrier(const c10d::BarrierOptions&) {
  wait_for_all("barrier");
  return c10::make_intrusive<DoneWork>();
}

}  // namespace hlm::shm
