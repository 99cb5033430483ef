// Ranks started by torchrun (the .venv's, beside HLM_PYTHON) instead of hlm's own runner: the job
// file hlm writes with --launcher job-file, run by `torchrun --no_python ... hlm rank JOB`.
#include <gtest/gtest.h>

#include <regex>

#include "support/hlm_cli.h"
#include "support/python_torch.h"

namespace {

using hlm::test::rank0_result;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;
namespace fs = std::filesystem;

TEST(Torchrun, TwoRanksOnOneHostTrainWithTheLossOfTheMultiprocRunner) {
  const std::string torchrun = hlm::test::torchrun_path();
  if (!fs::exists(torchrun)) GTEST_SKIP() << "no " << torchrun << " (run tools/python-env.sh)";
  ScratchDir runs("hlm_torchrun_one_host");
  const std::string args = "tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=40 ";
  const auto written = run_hlm("run " + args + "--launcher job-file --runs-dir " +
                               (runs.path / "torchrun").string());
  ASSERT_EQ(written.exit_code, 0) << written.output;
  std::smatch job;
  ASSERT_TRUE(std::regex_search(written.output, job, std::regex(R"(wrote (\S+/job\.json))")))
      << written.output;
  EXPECT_NE(written.output.find("torchrun --redirects=1 --tee=1 --no_python --nproc_per_node=2"),
            std::string::npos);

  const auto ranks =
      hlm::test::run_command("cd '" HLM_SOURCE_DIR "' && '" + torchrun +
                             "' --redirects=1 --tee=1 --no_python "
                             "--standalone --nproc_per_node=2 '" HLM_BINARY_DIR "/bin/hlm' rank " +
                             job[1].str() + " 2>&1");
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  const fs::path stage = fs::path(job[1].str()).parent_path();
  const auto resumed = run_hlm("run --resume " + stage.parent_path().string() + " --runs-dir " +
                               (runs.path / "torchrun").string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("the ranks already finished this job"), std::string::npos)
      << resumed.output;

  const auto local = run_hlm("run " + args + "--runs-dir " + (runs.path / "local").string());
  ASSERT_EQ(local.exit_code, 0) << local.output;
  EXPECT_EQ(rank0_result(stage)["losses"],
            rank0_result(hlm::test::run_dir_of(local.output) / "pretrain")["losses"]);
}

}  // namespace
