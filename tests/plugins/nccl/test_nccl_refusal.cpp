// The `nccl` backend plugin where no GPU is visible: it refuses to be made, saying what to use.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "hlm/backend.h"
#include "plugin/plugin_host.h"

namespace {

TEST(NcclBackend, WithoutAGpuThePluginRefusesNamingWhatToUseInstead) {
  if (torch::cuda::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  hlm::PluginHost host;
  host.load_library(HLM_BINARY_DIR "/plugins/libhlm_plugin_nccl.so");
  try {
    host.create<hlm::Backend>("backend", "nccl",
                              {{"timeout_s", 60}, {"high_priority_stream", false}});
    FAIL() << "the nccl backend was made without a GPU";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("use backend gloo or shm"), std::string::npos) << e.what();
  }
}

}  // namespace
