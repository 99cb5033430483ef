// hlm submit --dry-run, hlm status, and the srun launcher outside an allocation: what a user
// sees before and after a job, without a SLURM controller (the cluster tests have one).
#include <gtest/gtest.h>

#include <regex>

#include "support/hlm_cli.h"

namespace {

using hlm::test::read_text;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;
namespace fs = std::filesystem;

TEST(Submit, DryRunPrintsTheBatchScriptAndWritesItWithTheRunDirectory) {
  ScratchDir runs("hlm_submit_dry_run");
  const auto r = run_hlm(
      "submit --dry-run tests/fixtures/train_small.yaml runner.nodes=2 "
      "runner.ntasks_per_node=2 runner.time=00:30:00 --runs-dir " +
      runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* line :
       {"#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=2", "#SBATCH --time=00:30:00",
        "#SBATCH --signal=USR1@120", "#SBATCH --requeue", "--launcher srun", "scontrol requeue"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  std::smatch written;
  ASSERT_TRUE(std::regex_search(r.output, written, std::regex(R"(wrote (\S+/job\.sbatch))")));
  const fs::path run_dir = fs::path(written[1].str()).parent_path();
  EXPECT_NE(read_text(written[1].str()).find("#SBATCH --nodes=2"), std::string::npos);
  // Every pretrain stage is sized to the allocation: 2 nodes x 2 ranks.
  EXPECT_NE(read_text(run_dir / "workflow.resolved.yaml").find("world_size: 4"), std::string::npos);
  EXPECT_FALSE(fs::exists(run_dir / "slurm_job.json"));  // nothing was submitted
}

TEST(Submit, RefusesOneHostsMetricsAddressForAJobOnSeveralNodes) {
  ScratchDir runs("hlm_submit_metrics_bind");
  const auto r = run_hlm(
      "submit --dry-run tests/fixtures/train_small.yaml runner.nodes=2 "
      "settings.metrics_bind=192.0.2.1 --runs-dir " +
      runs.path.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("settings.metrics_bind=192.0.2.1 is one host's address"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(runs.path / "train-small"));  // refused before anything was written
}

TEST(Submit, AGpuStageAsksSlurmForGpusAndNcclForOnePerRank) {
  ScratchDir runs("hlm_submit_gpus");
  const std::string workflow = "submit --dry-run tests/fixtures/train_small.yaml ";
  const std::string where = " --runs-dir " + runs.path.string();
  const auto none = run_hlm(workflow + "pretrain.device=cuda" + where);
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("stage 'pretrain' trains on GPUs (device cuda), but "
                             "runner.gpus_per_node is 0"),
            std::string::npos)
      << none.output;
  const auto shared = run_hlm(workflow +
                              "pretrain.backend.plugin=nccl runner.ntasks_per_node=8 "
                              "runner.gpus_per_node=4" +
                              where);
  EXPECT_EQ(shared.exit_code, 2) << shared.output;
  EXPECT_NE(shared.output.find("runner.ntasks_per_node 8 is more than runner.gpus_per_node 4"),
            std::string::npos)
      << shared.output;
  EXPECT_FALSE(fs::exists(runs.path / "train-small"));  // refused before anything was written
  // The login node needs no GPU: the ranks' nodes resolve the device.
  const auto asked = run_hlm(workflow +
                             "pretrain.device=cuda pretrain.backend.plugin=nccl "
                             "runner.ntasks_per_node=4 runner.gpus_per_node=4" +
                             where);
  ASSERT_EQ(asked.exit_code, 0) << asked.output;
  EXPECT_NE(asked.output.find("#SBATCH --gpus-per-node=4"), std::string::npos) << asked.output;
}

TEST(Submit, AContainerWithoutTheSrunLauncherIsRefused) {
  const auto r = run_hlm("run tests/fixtures/train_small.yaml --container /images/hlm.sif");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("add --launcher srun"), std::string::npos) << r.output;
}

TEST(Submit, TheSrunLauncherOutsideAnAllocationIsAClearError) {
  ScratchDir runs("hlm_submit_no_allocation");
  const auto r = run_hlm(
      "run tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=5 "
      "--launcher srun --runs-dir " +
      runs.path.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("SLURM_JOB_NODELIST is not set"), std::string::npos) << r.output;
}

TEST(Submit, AnUnknownLauncherIsAnErrorNamingTheChoices) {
  const auto r = run_hlm("run tests/fixtures/train_small.yaml --launcher mpirun");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("launcher 'mpirun' is not one of local, srun, job-file"),
            std::string::npos)
      << r.output;
}

TEST(Status, ShowsALocalRunsStagesAndSaysItWasNotSubmitted) {
  ScratchDir runs("hlm_status_local");
  const auto r = run_hlm(
      "run tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=20 "
      "--runs-dir " +
      runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto status = run_hlm("status " + hlm::test::run_dir_of(r.output).string());
  ASSERT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("job    not submitted to SLURM"), std::string::npos);
  EXPECT_NE(status.output.find("stage  tokenize: done"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("stage  pretrain: done, step 20 of 20"), std::string::npos)
      << status.output;
}

TEST(Status, RefusesAFolderThatIsNotARunDirectory) {
  ScratchDir empty("hlm_status_empty");
  const auto status = run_hlm("status " + empty.path.string());
  EXPECT_EQ(status.exit_code, 2);
  EXPECT_NE(status.output.find("not a run directory"), std::string::npos) << status.output;
}

}  // namespace
