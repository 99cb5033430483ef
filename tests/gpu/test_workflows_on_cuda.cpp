// A workflow's pretrain, finetune and evaluate stages on a GPU (label gpu; tools/device-check
// runs it on the GPU machine): tests/fixtures/finetune_cv.yaml with device cuda finishes, its
// pretrain results say what the GPU did, and every dataset it scores lands near the CPU run's
// accuracy (the same seeds; float arithmetic in another order). Skipped where no GPU is visible.
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

// The results of the pretrain stage (its manifest) and of the evaluate stage (results.json).
nlohmann::json run_results(const std::string& device, const ScratchDir& runs) {
  const auto r = run_hlm("run tests/fixtures/finetune_cv.yaml pretrain.device=" + device +
                         " finetune.device=" + device + " evaluate.device=" + device +
                         " --runs-dir " + runs.path.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json out;
  const auto run_dir = hlm::test::run_dir_of(r.output);
  std::ifstream pretrain(run_dir / "pretrain" / "manifest.json");
  out["pretrain"] =
      pretrain ? nlohmann::json::parse(pretrain).value("results", nlohmann::json()) : nullptr;
  std::ifstream evaluate(run_dir / "evaluate" / "results.json");
  out["evaluate"] = evaluate ? nlohmann::json::parse(evaluate) : nlohmann::json();
  return out;
}

TEST(WorkflowOnCuda, PretrainFinetuneAndEvaluateOnTheGpuScoreAsOnTheCpu) {
  if (torch::cuda::device_count() == 0)
    GTEST_SKIP() << "no CUDA device visible: " << hlm::probe_gpus().why_none;
  ScratchDir cpu_runs("hlm_workflow_cpu"), gpu_runs("hlm_workflow_cuda");
  const auto cpu_run = run_results("cpu", cpu_runs), gpu_run = run_results("cuda", gpu_runs);
  // What rank 0's GPU did (train/gpu_usage.h) is in the pretrain results; none on the CPU.
  EXPECT_FALSE(cpu_run["pretrain"].contains("gpu"));
  ASSERT_TRUE(gpu_run["pretrain"].contains("gpu")) << gpu_run["pretrain"].dump();
  EXPECT_GT(gpu_run["pretrain"]["gpu"].value("peak_memory_bytes", 0.0), 0.0);
  const auto& cpu = cpu_run["evaluate"];
  const auto& gpu = gpu_run["evaluate"];
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
