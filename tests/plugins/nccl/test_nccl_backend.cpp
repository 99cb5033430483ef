// The `nccl` backend plugin on a real GPU (label gpu): a group of one rank all-reduces and
// broadcasts CUDA tensors in place. Skipped, with the reason, where no GPU is visible.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "hlm/backend.h"
#include "plugin/plugin_host.h"

namespace {

const char* const kPlugin = HLM_BINARY_DIR "/plugins/libhlm_plugin_nccl.so";

class NcclBackend : public ::testing::Test {
 protected:
  void SetUp() override { host_.load_library(kPlugin); }
  std::shared_ptr<hlm::Backend> make() {
    return host_.create<hlm::Backend>("backend", "nccl",
                                      {{"timeout_s", 60}, {"high_priority_stream", false}});
  }
  hlm::PluginHost host_;
};

TEST_F(NcclBackend, OneRankAllReducesAndBroadcastsCudaTensorsInPlace) {
  if (torch::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  auto backend = make();
  EXPECT_EQ(backend->device(0), "cuda:0");
  auto group = backend->create_group(c10::make_intrusive<c10d::HashStore>(), 0, 1);
  std::vector<at::Tensor> tensors = {
      torch::arange(1000, torch::dtype(torch::kFloat32)).to(torch::Device(backend->device(0)))};
  group->allreduce(tensors, c10d::AllreduceOptions())->wait();
  group->broadcast(tensors, c10d::BroadcastOptions())->wait();
  EXPECT_TRUE(torch::equal(tensors[0].cpu(), torch::arange(1000, torch::dtype(torch::kFloat32))));
}

}  // namespace
