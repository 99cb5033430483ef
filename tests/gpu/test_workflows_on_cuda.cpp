// A workflow's pretrain, finetune and evaluate stages on a GPU (label gpu; tools/device-check
// runs it on the GPU machine): tests/fixtures/finetune_cv.yaml with device cuda finishes, its
// ranks report the GPU, and every dataset it scores lands near the CPU run's accuracy (the
// same seeds; float arithmetic in another order). Skipped where no GPU is visible.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cmath>
#include <fstream>

#include "device/device.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;

namespace {

nlohmann::json evaluate_results(const std::string& devices, const ScratchDir& runs) {
  const auto r = run_hlm("run tests/fixtures/finetune_cv.yaml " + devices + " --runs-dir " +
                         runs.path.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(hlm::test::run_dir_of(r.output) / "evaluate" / "results.json");
  return in ? nlohmann::json::parse(in) : nlohmann::json();
}

TEST(WorkflowOnCuda, PretrainFinetuneAndEvaluateOnTheGpuScoreAsOnTheCpu) {
  if (torch::cuda::device_count() == 0)
    GTEST_SKIP() << "no CUDA device visible: " << hlm::probe_gpus().why_none;
  ScratchDir cpu_runs("hlm_workflow_cpu"), gpu_runs("hlm_workflow_cuda");
  const auto cpu = evaluate_results("", cpu_runs);
  const auto gpu =
      evaluate_results("pretrain.device=cuda finetune.device=cuda evaluate.device=cuda", gpu_runs);
  ASSERT_TRUE(cpu.contains("datasets") && gpu.contains("datasets")) << gpu.dump();
  ASSERT_EQ(gpu["datasets"].size(), cpu["datasets"].size());
  for (const auto& [name, scored] : cpu["datasets"].items()) {
    ASSERT_TRUE(gpu["datasets"].contains(name)) << name;
    const auto& on_gpu = gpu["datasets"][name];
    EXPECT_EQ(on_gpu["items"], scored["items"]) << name;
    EXPECT_NEAR(on_gpu["accuracy"].get<double>(), scored["accuracy"].get<double>(), 0.05) << name;
  }
}

}  // namespace
