// Pretraining on a GPU (label gpu; tools/device-check runs it on the GPU machine): the first
// 20 losses on CUDA are the CPU's, in fp32 and, within bf16's tolerance, in bf16; a run
// stopped at a checkpoint and resumed on the GPU ends with the uninterrupted run's losses,
// dropout included; weights written from the GPU load on the CPU; the step replayed from a
// CUDA graph gives the eager step's losses. Each test is skipped, with
// its reason, where no GPU is visible.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "device/device.h"
#include "hlm/token_store.h"
#include "support/hlm_cli.h"
#include "support/model_plugins.h"
#include "support/rr_token_store.h"
#include "train/checkpoint.h"
#include "train/checkpoint_layout.h"
#include "train/trainer.h"

using hlm::test::ScratchDir;

namespace {

#define SKIP_WITHOUT_A_GPU()            \
  if (torch::cuda::device_count() == 0) \
  GTEST_SKIP() << "no CUDA device visible: " << hlm::probe_gpus().why_none

const torch::Device kGpu(torch::kCUDA, 0);
const torch::Device kCpu(torch::kCPU);

class PretrainOnCuda : public ::testing::Test {
 protected:
  ScratchDir dir{"hlm_pretrain_cuda"};
  hlm::test::RrTokenStore tokens{"hlm_pretrain_cuda", {std::vector<float>(4000, 0.8f)}};
  hlm::test::ModelPlugins plugins;

  std::shared_ptr<hlm::Model> model(double dropout, const std::string& plugin = "gpt") {
    torch::manual_seed(0);  // the same initial weights on every device
    return plugins.make(plugin, {{"vocab_size", 16},
                                 {"context", 32},
                                 {"d_model", 64},
                                 {"n_layer", 2},
                                 {"n_head", 4},
                                 {"d_ff", 128},
                                 {"dropout", dropout}});
  }

  hlm::TrainJob job(const torch::Device& device, bool bf16, const std::string& out) {
    hlm::TrainJob j;
    j.options.steps = 20;
    j.options.batch = 8;
    j.options.warmup_steps = 2;
    j.options.lr = 1e-3;
    j.options.bf16 = bf16;
    j.options.eval_batches = 2;
    j.options.save_weights = !out.empty();
    j.device = device;
    j.out_dir = out;
    return j;
  }

  hlm::TrainResult train(hlm::Model& m, const hlm::TrainJob& j) {
    const auto store = hlm::TokenStore::open(tokens.path);
    return hlm::train_language_model(m, store, j);
  }
};

void expect_losses_near(const std::vector<double>& got, const std::vector<double>& want,
                        double relative) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], relative * std::max(1.0, std::abs(want[i]))) << "step " << i + 1;
}

TEST_F(PretrainOnCuda, FirstTwentyLossesAreTheCpusInFp32) {
  SKIP_WITHOUT_A_GPU();
  auto on_cpu = model(0.0), on_gpu = model(0.0);
  const auto cpu = train(*on_cpu, job(kCpu, false, ""));
  const auto gpu = train(*on_gpu, job(kGpu, false, ""));
  EXPECT_TRUE(on_gpu->module().parameters().front().is_cuda());
  expect_losses_near(gpu.losses, cpu.losses, 2e-3);
  EXPECT_LT(gpu.losses.back(), gpu.losses.front());
  EXPECT_NEAR(gpu.eval_loss, cpu.eval_loss, 2e-3 * std::max(1.0, cpu.eval_loss));
  EXPECT_GT(gpu.peak_flops, 1e12);  // a GPU's matrix rate, not a CPU core's
}

TEST_F(PretrainOnCuda, Bf16LossesFollowTheCpusFp32) {
  SKIP_WITHOUT_A_GPU();
  auto on_cpu = model(0.0), on_gpu = model(0.0);
  const auto cpu = train(*on_cpu, job(kCpu, false, ""));
  const auto gpu = train(*on_gpu, job(kGpu, true, ""));
  expect_losses_near(gpu.losses, cpu.losses, 5e-2);
}

TEST_F(PretrainOnCuda, StoppedAndResumedEndsWithTheUninterruptedLosses) {
  SKIP_WITHOUT_A_GPU();
  const std::string out = (dir.path / "pretrain").string();
  auto whole = model(0.1);  // dropout: the GPU's generator is part of the checkpoint
  auto j = job(kGpu, false, out);
  j.options.checkpoint_every = 10;
  j.options.keep_checkpoints = 0;
  const auto uninterrupted = train(*whole, j);
  // As if stopped after step 10: the step-20 checkpoint never happened.
  std::filesystem::remove_all(hlm::checkpoint_step_dir(out + "/checkpoints", 20));
  auto resumed_model = model(0.1);
  const auto resumed = train(*resumed_model, j);
  expect_losses_near(resumed.losses, uninterrupted.losses, 1e-4);
}

TEST_F(PretrainOnCuda, WeightsWrittenFromTheGpuLoadOnTheCpu) {
  SKIP_WITHOUT_A_GPU();
  auto on_gpu = model(0.0);
  const auto r = train(*on_gpu, job(kGpu, false, (dir.path / "pretrain").string()));
  auto on_cpu = model(0.0);
  hlm::load_module(on_cpu->module(), r.checkpoint);
  const auto gpu_params = on_gpu->module().parameters();
  const auto cpu_params = on_cpu->module().parameters();
  ASSERT_EQ(gpu_params.size(), cpu_params.size());
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    EXPECT_TRUE(cpu_params[i].is_cpu());
    EXPECT_TRUE(torch::equal(cpu_params[i], gpu_params[i].cpu())) << "parameter " << i;
  }
}

TEST_F(PretrainOnCuda, CudaGraphGivesTheEagerLosses) {
  SKIP_WITHOUT_A_GPU();
  for (const bool bf16 : {false, true}) {
    auto eager_model = model(0.0), graph_model = model(0.0);
    auto j = job(kGpu, bf16, "");
    j.options.accumulation = 2;  // the replay adds into the gradients of the first micro-batch
    const auto eager = train(*eager_model, j);
    j.options.cuda_graph = true;
    const auto graphed = train(*graph_model, j);
    expect_losses_near(graphed.losses, eager.losses, bf16 ? 1e-2 : 1e-4);
    EXPECT_NEAR(graphed.eval_loss, eager.eval_loss, 1e-2 * std::max(1.0, eager.eval_loss));
  }
}

TEST_F(PretrainOnCuda, CudaGraphCapturesTheMaskedModel) {
  SKIP_WITHOUT_A_GPU();
  auto eager_model = model(0.0, "bert"), graph_model = model(0.0, "bert");
  auto j = job(kGpu, false, "");
  const auto eager = train(*eager_model, j);
  j.options.cuda_graph = true;
  const auto graphed = train(*graph_model, j);
  expect_losses_near(graphed.losses, eager.losses, 1e-4);
}

}  // namespace
