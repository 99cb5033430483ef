// The `device` param resolved against what a machine shows, and the GPU each rank takes from
// the torchrun and SLURM variables. Runs without a GPU: the probe's answers are given.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "device/device.h"
#include "distributed/dist_env.h"
#include "hlm/backend.h"
#include "hlm/errors.h"
#include "train/gpu_usage.h"
#include "train/step_graph.h"
#include "train/train_device.h"

namespace {

const hlm::GpuProbe kNoGpu{0, "no NVIDIA driver (libcuda.so.1 not found)"};
const hlm::GpuProbe kFourGpus{4, ""};

TEST(ResolveDevice, CpuIsAlwaysTheCpuAndAutoTakesAGpuOnlyWhenOneIsVisible) {
  EXPECT_EQ(hlm::resolve_device("cpu", kNoGpu, "pretrain"), "cpu");
  EXPECT_EQ(hlm::resolve_device("cpu", kFourGpus, "pretrain"), "cpu");
  EXPECT_EQ(hlm::resolve_device("auto", kNoGpu, "pretrain"), "cpu");
  EXPECT_EQ(hlm::resolve_device("auto", kFourGpus, "pretrain"), "cuda");
  EXPECT_EQ(hlm::resolve_device("cuda", kFourGpus, "pretrain"), "cuda");
}

TEST(ResolveDevice, CudaWithoutAGpuIsRefusedNamingTheStageWhatWasLookedForAndWhatToDo) {
  try {
    hlm::resolve_device("cuda", kNoGpu, "finetune");
    FAIL() << "cuda accepted with no GPU";
  } catch (const hlm::ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("stage 'finetune'"), std::string::npos) << message;
    EXPECT_NE(message.find("sees no CUDA device"), std::string::npos) << message;
    EXPECT_NE(message.find("libcuda.so.1 not found"), std::string::npos) << message;
    EXPECT_NE(message.find("finetune.device=cpu"), std::string::npos) << message;
  }
}

TEST(ResolveDevice, AnythingElseIsRefused) {
  EXPECT_THROW(hlm::resolve_device("gpu", kFourGpus, "pretrain"), hlm::ConfigError);
  EXPECT_THROW(hlm::resolve_device("", kFourGpus, "pretrain"), hlm::ConfigError);
}

TEST(ResolveDevice, ThisMachineEitherShowsAGpuOrSaysWhyNot) {
  const hlm::GpuProbe here = hlm::probe_gpus();
  EXPECT_GE(here.visible, 0);
  EXPECT_EQ(here.visible == 0, !here.why_none.empty()) << here.why_none;
}

TEST(GpuOfLocalRank, OneGpuPerRankAndRoundRobinWhenFewerAreVisible) {
  EXPECT_EQ(hlm::gpu_of_local_rank(0, 4), 0);
  EXPECT_EQ(hlm::gpu_of_local_rank(3, 4), 3);
  EXPECT_EQ(hlm::gpu_of_local_rank(3, 1), 0);  // --gpus-per-task=1: each task sees its own
  EXPECT_EQ(hlm::gpu_of_local_rank(5, 4), 1);
  EXPECT_THROW(hlm::gpu_of_local_rank(0, 0), hlm::InternalError);
}

// The launcher variables clear themselves after each test.
class LauncherVariables : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* name :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
          "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NNODES", "SLURM_NODEID",
          "SLURM_TASKS_PER_NODE", "SLURM_JOB_NODELIST"})
      ::unsetenv(name);
  }
};

TEST_F(LauncherVariables, TorchrunsLocalRankPicksTheGpu) {
  ::setenv("RANK", "6", 1);
  ::setenv("LOCAL_RANK", "2", 1);
  ::setenv("WORLD_SIZE", "8", 1);
  ::setenv("LOCAL_WORLD_SIZE", "4", 1);
  const hlm::DistEnv env = hlm::DistEnv::from_environment();
  EXPECT_EQ(hlm::gpu_of_local_rank(env.local_rank, 4), 2);
}

TEST_F(LauncherVariables, SlurmsLocalIdPicksTheGpu) {
  ::setenv("SLURM_PROCID", "7", 1);
  ::setenv("SLURM_LOCALID", "3", 1);
  ::setenv("SLURM_NTASKS", "8", 1);
  ::setenv("SLURM_NNODES", "2", 1);
  ::setenv("SLURM_NODEID", "1", 1);
  ::setenv("SLURM_TASKS_PER_NODE", "4(x2)", 1);
  ::setenv("SLURM_JOB_NODELIST", "localhost,n2", 1);
  const hlm::DistEnv env = hlm::DistEnv::from_environment();
  EXPECT_EQ(hlm::gpu_of_local_rank(env.local_rank, 4), 3);
  EXPECT_EQ(hlm::gpu_of_local_rank(env.local_rank, 1), 0);
}

TEST(RankDevice, CpuAndAutoWithoutAGpuTrainOnTheCpuAndCudaIsRefused) {
  EXPECT_TRUE(hlm::rank_device("cpu", 3, "pretrain").is_cpu());
  if (hlm::probe_gpus().visible > 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_TRUE(hlm::rank_device("auto", 0, "pretrain").is_cpu());
  EXPECT_THROW(hlm::rank_device("cuda", 0, "pretrain"), hlm::ConfigError);
}

TEST(RankDevice, TheNvmlIndexFollowsCudaVisibleDevices) {
  const torch::Device second(torch::kCUDA, 1);
  EXPECT_EQ(hlm::nvml_index_of(second, nullptr), 1);
  EXPECT_EQ(hlm::nvml_index_of(second, "3,5"), 5);
  EXPECT_EQ(hlm::nvml_index_of(second, "3"), -1);  // not among the visible ones
  EXPECT_EQ(hlm::nvml_index_of(second, "GPU-8f1c,GPU-22aa"), -1);
  EXPECT_EQ(hlm::nvml_index_of(torch::Device(torch::kCPU), "0"), -1);
}

TEST(RankDevice, OutOfMemoryNamesTheStageBatchWindowAndWhatToLower) {
  const std::string m =
      hlm::out_of_memory_message("pretrain", 256, 1024, torch::Device(torch::kCUDA, 1),
                                 "CUDA out of memory. Tried to allocate 2.00 GiB\nbacktrace line");
  EXPECT_NE(m.find("stage 'pretrain': cuda:1 ran out of memory with batch 256 x window 1024"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("Tried to allocate 2.00 GiB"), std::string::npos) << m;
  EXPECT_EQ(m.find("backtrace line"), std::string::npos) << m;
  EXPECT_NE(m.find("pretrain.batch"), std::string::npos) << m;
  EXPECT_NE(m.find("--resume"), std::string::npos) << m;
}

TEST(CudaGraphOption, IsRefusedOffAGpuAndWithSeveralRanksNamingWhatToSet) {
  const torch::Device cpu(torch::kCPU), gpu(torch::kCUDA, 0);
  EXPECT_NO_THROW(hlm::check_cuda_graph(false, cpu, 4, "pretrain"));
  try {
    hlm::check_cuda_graph(true, cpu, 1, "pretrain");
    FAIL() << "a CUDA graph accepted on the CPU";
  } catch (const hlm::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("stage 'pretrain'"), std::string::npos) << m;
    EXPECT_NE(m.find("runs on cpu"), std::string::npos) << m;
    EXPECT_NE(m.find("pretrain.cuda_graph=false"), std::string::npos) << m;
  }
  try {
    hlm::check_cuda_graph(true, gpu, 2, "scale");
    FAIL() << "a CUDA graph accepted for two ranks";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("2 ranks"), std::string::npos) << e.what();
  }
  if (HLM_WITH_CUDA) {
    EXPECT_NO_THROW(hlm::check_cuda_graph(true, gpu, 1, "pretrain"));
  }
}

TEST(ZeroGradients, ZeroesGradientsInPlaceAndLeavesAMissingOneMissing) {
  auto with_grad = torch::ones({3}, torch::requires_grad());
  auto without = torch::ones({2, 2}, torch::requires_grad());
  (with_grad * 2).sum().backward();
  const void* storage = with_grad.grad().data_ptr();
  hlm::zero_gradients({with_grad, without});
  EXPECT_EQ(with_grad.grad().data_ptr(), storage);  // what a captured backward adds into
  EXPECT_TRUE(torch::equal(with_grad.grad(), torch::zeros({3})));
  EXPECT_FALSE(without.grad().defined());  // AdamW skips it, as in an eager step
}

TEST(GpuUsage, ACpuRankHasNoneAndTheReportLineNamesWhatWasRead) {
  hlm::GpuUsage cpu(torch::Device(torch::kCPU), -1, hlm::energy_sources().nvml());
  cpu.after_step(16);
  EXPECT_TRUE(cpu.summary().is_null());
  const nlohmann::json read = {{"device", "cuda:0"},
                               {"name", "NVIDIA H200"},
                               {"peak_memory_bytes", int64_t{3} << 30},
                               {"utilization_mean", 0.93},
                               {"power_watts_mean", 412.4},
                               {"energy_joules_per_sample", 0.8}};
  EXPECT_EQ(hlm::gpu_usage_text(read),
            "NVIDIA H200 (cuda:0), peak tensor memory 3.00 GiB, utilisation 0.93, power 412 W, "
            "0.8 J per sample");
  const nlohmann::json unread = {{"device", "cuda:1"}, {"name", "NVIDIA H200"}, {"nvml", "why"}};
  EXPECT_EQ(hlm::gpu_usage_text(unread), "NVIDIA H200 (cuda:1); no NVML readings: why");
}

}  // namespace
