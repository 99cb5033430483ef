// Shared-memory collectives (see shm_process_group.h).
#include "shm_process_group.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <random>
#include <type_traits>
#include <utility>

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

// acc[i] = acc[i] (op) in[i]; a loop per operation, so that each vectorises.
template <class T>
void fold(T* acc, const T* in, size_t n, c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::MAX:
      for (size_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], in[i]);
      break;
    case c10d::ReduceOp::MIN:
      for (size_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], in[i]);
      break;
    default:  // SUM, and AVG before its division
      for (size_t i = 0; i < n; ++i) acc[i] += in[i];
  }
}

template <class T>
void divide(T* values, size_t n, int by) {
  if constexpr (std::is_floating_point_v<T>)
    for (size_t i = 0; i < n; ++i) values[i] /= T(by);
}

// Calls fn with a value of the C++ type of `type` (the element types all-reduce supports).
template <class Fn>
void with_element_type(at::ScalarType type, Fn&& fn) {
  switch (type) {
    case at::kFloat:
      return fn(float{});
    case at::kDouble:
      return fn(double{});
    case at::kInt:
      return fn(int32_t{});
    case at::kLong:
      return fn(int64_t{});
    default:
      TORCH_CHECK(false, "shm backend: allreduce of ", type, " is not supported");
  }
}

// FUTEX_WAIT / FUTEX_WAKE on a word in memory shared between processes (no FUTEX_PRIVATE).
void futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

// The share [lo, hi) of n elements that `rank` reduces.
std::pair<size_t, size_t> share_of(size_t n, int rank, int size) {
  const size_t share = (n + size - 1) / size;
  const size_t lo = std::min(n, share * rank);
  return {lo, std::min(n, lo + share)};
}

}  // namespace

ShmProcessGroup::ShmProcessGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                 size_t chunk_bytes, size_t shared_bytes,
                                 std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size),
      chunk_bytes_(chunk_bytes / 64 * 64),
      shared_bytes_(shared_bytes / 64 * 64),
      timeout_(timeout) {
  TORCH_CHECK(chunk_bytes_ >= 64, "shm backend: chunk_mb too small");
  const size_t staging_bytes =
      sizeof(Control) + size_t(size) * sizeof(SharedCall) + size_t(size + 1) * chunk_bytes_;
  mapped_bytes_ = staging_bytes + size_t(size) * shared_bytes_;
  std::string name;
  if (rank == 0) {
    name = "/hlm-shm-" + std::to_string(::getpid()) + "-" + hlm::hex64(std::random_device{}());
    fd_ = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd_ < 0) fail_errno("shm_open(" + name + ")");
    if (::ftruncate(fd_, off_t(mapped_bytes_)) != 0) fail_errno("ftruncate(" + name + ")");
    // tmpfs takes a page when it is first touched, and touching one that /dev/shm has no room
    // for kills the process (SIGBUS). So pages are reserved up front: the staging area here,
    // shared tensors when they are handed out (a full /dev/shm then means ordinary memory).
    if (const int err = ::posix_fallocate(fd_, 0, off_t(staging_bytes)); err != 0) {
      errno = err;
      fail_errno("reserving " + std::to_string(staging_bytes >> 20) + " MiB in " + name);
    }
    store->set("hlm_shm/name", std::vector<uint8_t>(name.begin(), name.end()));
  } else {
    name = store_text(store->get("hlm_shm/name"));
    fd_ = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd_ < 0) fail_errno("shm_open(" + name + ") from rank " + std::to_string(rank));
  }
  mapping_ = ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mapping_ == MAP_FAILED) fail_errno("mmap(" + name + ")");
  control_ = static_cast<Control*>(mapping_);
  calls_ = reinterpret_cast<SharedCall*>(control_ + 1);
  data_ = reinterpret_cast<uint8_t*>(calls_ + size);
  shared_ = data_ + size_t(size + 1) * chunk_bytes_;
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
  if (fd_ >= 0) ::close(fd_);
}

// A sense-reversing barrier on shared counters: the last rank in resets the count, then opens
// the next generation. The others spin, yielding the core, for up to kSpinFor: the waits of a
// training step (ranks a few ms apart) end there. Longer waits (a rank checkpointing or
// evaluating alone, a stopped rank) sleep on the generation word (a futex shared between
// processes) and leave the core free. Sleeping from the start let the scheduler place a woken
// rank beside the one that woke it, both on one core for a step, nearly doubling it.
constexpr std::chrono::milliseconds kSpinFor{50};

void ShmProcessGroup::wait_for_all(const char* collective) {
  const uint32_t generation = control_->generation.load(std::memory_order_acquire);
  if (control_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(size_)) {
    control_->arrived.store(0, std::memory_order_relaxed);
    control_->generation.fetch_add(1, std::memory_order_seq_cst);
    // seq_cst on both sides: either a sleeper is counted here, or its futex wait sees the new
    // generation and returns at once.
    if (control_->sleepers.load(std::memory_order_seq_cst) > 0)
      futex(&control_->generation, FUTEX_WAKE, INT_MAX, nullptr);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t spins = 0;; ++spins) {
    if (control_->generation.load(std::memory_order_acquire) != generation) return;
    if (spins < 2000) continue;
    ::sched_yield();
    if ((spins & 63) == 0 && std::chrono::steady_clock::now() - start > kSpinFor) break;
  }
  while (control_->generation.load(std::memory_order_acquire) == generation) {
    control_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    const timespec tick{0, 100'000'000};  // wakes to check the timeout
    futex(&control_->generation, FUTEX_WAIT, generation, &tick);
    control_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (std::chrono::steady_clock::now() - start > timeout_)
      TORCH_CHECK(false, "shm backend: rank ", rank_, " waited ",
                  std::chrono::duration_cast<std::chrono::seconds>(timeout_).count(), " s in ",
                  collective,
                  " for the other ranks (one of them stopped or was killed); the runner restarts "
                  "the group from the last checkpoint");
  }
}

template <class T>
void ShmProcessGroup::allreduce_chunked(T* values, size_t n, c10d::ReduceOp::RedOpType op) {
  const size_t per_chunk = chunk_bytes_ / sizeof(T);
  for (size_t off = 0; off < n; off += per_chunk) {
    const size_t len = std::min(per_chunk, n - off);
    std::memcpy(slot(rank_), values + off, len * sizeof(T));
    wait_for_all("allreduce");
    // Each rank reduces its share of the chunk over the ranks in rank order, so every rank
    // reads the same bits back.
    const auto [lo, hi] = share_of(len, rank_, size_);
    T* out = reinterpret_cast<T*>(result());
    std::memcpy(out + lo, reinterpret_cast<const T*>(slot(0)) + lo, (hi - lo) * sizeof(T));
    for (int r = 1; r < size_; ++r)
      fold(out + lo, reinterpret_cast<const T*>(slot(r)) + lo, hi - lo, op);
    if (op == c10d::ReduceOp::AVG) divide(out + lo, hi - lo, size_);
    wait_for_all("allreduce");
    std::memcpy(values + off, out, len * sizeof(T));
  }
}

// Every rank's tensor sits at the same offset of its share of the shared memory: each rank
// reduces its share of the elements over the ranks (in rank order, so all get the same bits)
// and writes the result into every rank's tensor. Block by block, so the accumulator stays in
// L1 while it is written out size_ times.
template <class T>
void ShmProcessGroup::allreduce_shared(size_t offset, size_t n, c10d::ReduceOp::RedOpType op) {
  constexpr size_t kBlock = 2048;
  T acc[kBlock];
  const auto [lo, hi] = share_of(n, rank_, size_);
  auto tensor_of = [&](int r) { return reinterpret_cast<T*>(shared(r) + offset); };
  for (size_t begin = lo; begin < hi; begin += kBlock) {
    const size_t len = std::min(kBlock, hi - begin);
    std::memcpy(acc, tensor_of(0) + begin, len * sizeof(T));
    for (int r = 1; r < size_; ++r) fold(acc, tensor_of(r) + begin, len, op);
    if (op == c10d::ReduceOp::AVG) divide(acc, len, size_);
    for (int r = 0; r < size_; ++r) std::memcpy(tensor_of(r) + begin, acc, len * sizeof(T));
  }
}

at::Tensor ShmProcessGroup::allocate_shared(int64_t numel, at::ScalarType type) {
  const size_t bytes = (size_t(numel) * c10::elementSize(type) + 63) / 64 * 64;
  if (shared_used_ + bytes > shared_bytes_) return {};
  uint8_t* data = shared(rank_) + shared_used_;
  if (::posix_fallocate(fd_, off_t(data - static_cast<uint8_t*>(mapping_)), off_t(bytes)) != 0)
    return {};
  shared_used_ += bytes;
  // The tensor holds a reference to the group, so the mapping outlives it.
  auto self = c10::intrusive_ptr<ShmProcessGroup>::reclaim_copy(this);
  return at::from_blob(
      data, {numel}, [self](void*) mutable { self.reset(); }, at::TensorOptions().dtype(type));
}

bool ShmProcessGroup::is_shared(const at::Tensor& t) const {
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  return p >= shared(rank_) && p < shared(rank_) + shared_used_;
}

// Collectives must come in the same order on every rank; a mismatch here would otherwise
// reduce unrelated memory.
void ShmProcessGroup::check_same_shared_call() const {
  for (int r = 0; r < size_; ++r)
    TORCH_CHECK(calls_[r].offset == calls_[rank_].offset &&
                    calls_[r].numel == calls_[rank_].numel &&
                    calls_[r].type == calls_[rank_].type && calls_[r].op == calls_[rank_].op,
                "shm backend: rank ", rank_, " and rank ", r,
                " all-reduce different shared tensors (collectives out of order across ranks)");
}

c10::intrusive_ptr<c10d::Work> ShmProcessGroup::allreduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::AllreduceOptions& opts) {
  at::Tensor& t = only_tensor(tensors, "allreduce");
  const auto op = static_cast<c10d::ReduceOp::RedOpType>(opts.reduceOp);
  TORCH_CHECK(op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::AVG || op == c10d::ReduceOp::MAX ||
                  op == c10d::ReduceOp::MIN,
              "shm backend: allreduce supports SUM, AVG, MAX and MIN");
  TORCH_CHECK(op != c10d::ReduceOp::AVG || at::isFloatingType(t.scalar_type()),
              "shm backend: AVG needs a floating-point tensor");
  const size_t n = size_t(t.numel());
  if (is_shared(t)) {
    const size_t offset = size_t(static_cast<uint8_t*>(t.data_ptr()) - shared(rank_));
    calls_[rank_] = {offset, n, int32_t(t.scalar_type()), int32_t(op)};
    wait_for_all("allreduce");
    check_same_shared_call();
    with_element_type(t.scalar_type(),
                      [&](auto zero) { allreduce_shared<decltype(zero)>(offset, n, op); });
    wait_for_all("allreduce");
  } else {
    with_element_type(t.scalar_type(),
                      [&](auto zero) { allreduce_chunked(t.data_ptr<decltype(zero)>(), n, op); });
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
