// A workflow that asks for what this machine lacks (a GPU, the nccl backend without one, a
// CUDA graph on the CPU) is refused before any work: non-zero exit, a message naming the stage
// and what to do, and no run folder made.
#include <gtest/gtest.h>

#include <filesystem>

#include "device/device.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;

namespace {

bool no_run_folder(const fs::path& runs) {
  return !fs::exists(runs / "quickstart") || fs::is_empty(runs / "quickstart");
}

TEST(DeviceRefusal, CudaOnAMachineWithoutAGpuFailsBeforeAnyWork) {
  if (hlm::probe_gpus().visible > 0) GTEST_SKIP() << "this machine has a GPU";
  ScratchDir runs("hlm_device_refusal");
  const auto r = run_hlm("run workflows/quickstart.yaml pretrain.device=cuda --runs-dir " +
                         runs.path.string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stage 'pretrain': device cuda asked for"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("pretrain.device=cpu"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("[1/5] tokenize"), std::string::npos) << r.output;
  EXPECT_TRUE(no_run_folder(runs.path));
}

TEST(DeviceRefusal, TheNcclBackendWithoutAGpuIsRefusedNamingGloo) {
  if (hlm::probe_gpus().visible > 0) GTEST_SKIP() << "this machine has a GPU";
  ScratchDir runs("hlm_nccl_refusal");
  const auto r = run_hlm("run workflows/quickstart.yaml pretrain.backend.plugin=nccl --runs-dir " +
                         runs.path.string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("names the nccl backend"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Use backend gloo"), std::string::npos) << r.output;
  EXPECT_TRUE(no_run_folder(runs.path));
}

TEST(DeviceRefusal, ACudaGraphOnTheCpuIsRefusedBeforeAnyWork) {
  ScratchDir runs("hlm_graph_refusal");
  const auto r = run_hlm(
      "run workflows/quickstart.yaml pretrain.device=cpu pretrain.cuda_graph=true --runs-dir " +
      runs.path.string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cuda_graph: true captures the training step on a GPU"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("pretrain.cuda_graph=false"), std::string::npos) << r.output;
  EXPECT_TRUE(no_run_folder(runs.path));
}

TEST(DeviceRefusal, PluginsListsTheNcclBackendInACudaBuild) {
  if (!HLM_WITH_CUDA) GTEST_SKIP() << "LibTorch without CUDA: no nccl plugin is built";
  const auto r = run_hlm("plugins");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nccl"), std::string::npos) << r.output;
}

}  // namespace
