// The `shm` backend plugin: two ranks (threads of this process, one segment mapped twice) run
// its collectives through the plugin host; results must equal the arithmetic, across chunk
// boundaries and for tensors kept in the shared memory, and a rank that never arrives or
// all-reduces another tensor must turn into an error naming the collective.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "hlm/backend.h"
#include "plugin/plugin_host.h"

namespace {

class ShmBackend : public ::testing::Test {
 protected:
  std::shared_ptr<hlm::Backend> backend(double chunk_mb, int timeout_s, double shared_mb = 256) {
    if (!host_.plugins().count("backend/shm"))
      host_.load_library(std::string(HLM_BINARY_DIR) + "/plugins/libhlm_plugin_shm.so");
    return host_.create<hlm::Backend>(
        "backend", "shm",
        {{"chunk_mb", chunk_mb}, {"timeout_s", timeout_s}, {"shared_mb", shared_mb}});
  }
  hlm::PluginHost host_;
};

// Runs fn(rank, group) on two threads, each with its own group on a shared store. Each rank
// computes on its own thread alone, as a rank process with threads: 1 does: an OpenMP team
// under LibTorch's parallel loops would add threads whose synchronisation (libgomp's, not
// instrumented) ThreadSanitizer cannot see, and it reported races inside LibTorch there.
template <class Fn>
void on_two_ranks(hlm::Backend& backend, Fn fn) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::thread> ranks;
  std::vector<std::string> errors(2);
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      at::set_num_threads(1);
      try {
        fn(rank, backend.create_group(store, rank, 2));
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& t : ranks) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

// The segment under /dev/shm is readable and writable by its owner only (another user's
// process cannot read the gradients or write into them), and its name is gone once every
// rank has it mapped. Rank 1 starts only after the test has looked at the segment rank 0 made.
TEST_F(ShmBackend, TheSegmentIsOwnerOnlyAndItsNameGoesOnceEveryRankHasIt) {
  auto shm = backend(1.0, 60, 1.0);
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(2);
  auto rank = [&](int r) {
    try {
      shm->create_group(store, r, 2);
    } catch (const std::exception& e) {
      errors[r] = e.what();
    }
  };
  std::thread rank0(rank, 0);
  const std::string prefix = "hlm-shm-" + std::to_string(::getpid()) + "-";
  std::filesystem::path segment;
  for (int tries = 0; segment.empty() && tries < 10000; ++tries) {
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
      if (entry.path().filename().string().rfind(prefix, 0) == 0) segment = entry.path();
    if (segment.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  struct stat st {};
  const bool found = !segment.empty() && ::stat(segment.c_str(), &st) == 0;
  std::thread rank1(rank, 1);
  rank0.join();
  rank1.join();
  ASSERT_TRUE(found) << "no /dev/shm/" << prefix << "* while rank 0 waited";
  EXPECT_EQ(st.st_mode & 0077, 0u) << segment << " mode " << std::oct << (st.st_mode & 0777);
  EXPECT_EQ(st.st_uid, ::geteuid()) << segment;
  EXPECT_FALSE(std::filesystem::exists(segment));
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

TEST_F(ShmBackend, AllReducesAndBroadcastsAcrossChunkBoundaries) {
  // 1 MiB chunks: 300,001 floats take two chunks and a bit.
  auto shm = backend(1.0, 60);
  const int64_t n = 300001;
  std::vector<at::Tensor> sums(2), maxima(2), broadcasts(2);
  on_two_ranks(*shm, [&](int rank, c10::intrusive_ptr<c10d::Backend> group) {
    std::vector<at::Tensor> t{torch::arange(n, torch::kFloat) * float(rank + 1)};
    group->allreduce(t, {})->wait();
    sums[rank] = t[0];
    c10d::AllreduceOptions max_options;
    max_options.reduceOp = c10d::ReduceOp::MAX;
    std::vector<at::Tensor> m{torch::tensor({int64_t(rank), int64_t(10 - rank)})};
    group->allreduce(m, max_options)->wait();
    maxima[rank] = m[0];
    c10d::BroadcastOptions from_one;
    from_one.rootRank = 1;
    std::vector<at::Tensor> b{torch::full({n}, double(rank + 5), torch::kDouble)};
    group->broadcast(b, from_one)->wait();
    broadcasts[rank] = b[0];
    group->barrier()->wait();
  });
  const at::Tensor want = torch::arange(n, torch::kFloat) * 3.0f;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(torch::equal(sums[rank], want)) << "rank " << rank;
    EXPECT_TRUE(torch::equal(maxima[rank], torch::tensor({int64_t(1), int64_t(10)})));
    EXPECT_TRUE(torch::equal(broadcasts[rank], torch::full({n}, 6.0, torch::kDouble)));
  }
}

hlm::SharedTensorMemory& shared_memory_of(const c10::intrusive_ptr<c10d::Backend>& group) {
  auto* memory = dynamic_cast<hlm::SharedTensorMemory*>(group.get());
  if (!memory) throw std::runtime_error("the shm group offers no shared tensors");
  return *memory;
}

TEST_F(ShmBackend, AllReducesTensorsInSharedMemoryInPlaceOnEveryRank) {
  auto shm = backend(1.0, 60, /*shared_mb=*/4.0);
  const int64_t n = 300001;  // odd: the ranks' shares differ in length
  std::vector<at::Tensor> sums(2), averages(2), maxima(2), too_big(2);
  on_two_ranks(*shm, [&](int rank, c10::intrusive_ptr<c10d::Backend> group) {
    auto& memory = shared_memory_of(group);
    at::Tensor sum = memory.allocate_shared(n, at::kFloat);
    at::Tensor average = memory.allocate_shared(n, at::kDouble);
    at::Tensor maximum = memory.allocate_shared(3, at::kLong);
    too_big[rank] = memory.allocate_shared(1 << 20, at::kFloat);  // 4 MiB: more than is left
    EXPECT_TRUE(torch::equal(sum, torch::zeros({n})));
    sum.copy_(torch::arange(n, torch::kFloat) * float(rank + 1));
    average.copy_(torch::arange(n, torch::kDouble) * double(2 * rank + 1));
    maximum.copy_(torch::tensor({int64_t(rank), int64_t(10 - rank), int64_t(-rank)}));
    std::vector<at::Tensor> t{sum};
    group->allreduce(t, {})->wait();
    c10d::AllreduceOptions avg;
    avg.reduceOp = c10d::ReduceOp::AVG;
    t = {average};
    group->allreduce(t, avg)->wait();
    c10d::AllreduceOptions max;
    max.reduceOp = c10d::ReduceOp::MAX;
    t = {maximum};
    group->allreduce(t, max)->wait();
    sums[rank] = sum.clone(), averages[rank] = average.clone(), maxima[rank] = maximum.clone();
  });
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(torch::equal(sums[rank], torch::arange(n, torch::kFloat) * 3.0f))
        << "rank " << rank;
    EXPECT_TRUE(torch::equal(averages[rank], torch::arange(n, torch::kDouble) * 2.0))
        << "rank " << rank;
    EXPECT_TRUE(torch::equal(maxima[rank], torch::tensor({int64_t(1), int64_t(10), int64_t(0)})));
    EXPECT_FALSE(too_big[rank].defined()) << "shared memory is full: the caller uses its own";
  }
}

TEST_F(ShmBackend, RanksAllReducingDifferentSharedTensorsGetAnError) {
  auto shm = backend(1.0, 60, 1.0);
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      try {
        auto group = shm->create_group(store, rank, 2);
        auto& memory = shared_memory_of(group);
        std::vector<at::Tensor> tensors{memory.allocate_shared(16, at::kFloat),
                                        memory.allocate_shared(16, at::kFloat)};
        std::vector<at::Tensor> t{tensors[size_t(rank)]};  // rank 0 the first, rank 1 the second
        group->allreduce(t, {})->wait();
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& t : ranks) t.join();
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_NE(errors[rank].find("out of order"), std::string::npos)
        << "rank " << rank << ": " << errors[rank];
}

TEST_F(ShmBackend, ARankThatNeverArrivesIsReportedAfterTheTimeout) {
  auto shm = backend(1.0, 1);
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::string error;
  std::thread rank1([&] { shm->create_group(store, 1, 2); });  // attaches, then leaves
  try {
    auto group = shm->create_group(store, 0, 2);
    rank1.join();
    std::vector<at::Tensor> t{torch::ones({4})};
    group->allreduce(t, {})->wait();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (rank1.joinable()) rank1.join();
  EXPECT_NE(error.find("allreduce"), std::string::npos) << error;
  EXPECT_NE(error.find("killed"), std::string::npos) << error;
}

}  // namespace
