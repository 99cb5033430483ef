// The batch script hlm submit writes, the srun command line of the ranks, and how srun's
// report of a failed task is read.
#include <gtest/gtest.h>

#include "slurm/sbatch_script.h"
#include "slurm/srun_step.h"

namespace {

nlohmann::json runner() {
  return {{"kind", "slurm"},
          {"nodes", 2},
          {"ntasks_per_node", 4},
          {"gpus_per_node", 0},
          {"cpus_per_task", 0},
          {"time", ""},
          {"partition", ""},
          {"account", ""},
          {"sbatch", nlohmann::json::array()},
          {"signal_seconds", 120},
          {"requeue", true},
          {"container", ""},
          {"hlm", ""}};
}

std::string script_for(const nlohmann::json& r) {
  return hlm::sbatch_script(
      {"quickstart", "/runs/quickstart/20261124T000000Z-ab", "/runs", "/opt/hlm/bin/hlm", r});
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SbatchScript, AsksForTheAllocationAndRunsTheRunDirectoryWithTheSrunLauncher) {
  const std::string s = script_for(runner());
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_TRUE(has(s, "#SBATCH --nodes=2\n"));
  EXPECT_TRUE(has(s, "#SBATCH --ntasks-per-node=4\n"));
  EXPECT_TRUE(has(s, "#SBATCH --signal=USR1@120\n"));
  EXPECT_TRUE(has(s, "#SBATCH --requeue\n"));
  EXPECT_TRUE(has(s, "#SBATCH --open-mode=append\n"));
  EXPECT_TRUE(has(s, "#SBATCH --output=/runs/quickstart/20261124T000000Z-ab/slurm-%j.out\n"));
  EXPECT_TRUE(has(s,
                  "'/opt/hlm/bin/hlm' run --resume '/runs/quickstart/20261124T000000Z-ab' "
                  "--runs-dir '/runs' --launcher srun\n"));
  EXPECT_TRUE(has(s, "scontrol requeue \"${SLURM_JOB_ID}\""));
  // Options left at "none" are not written: SLURM's defaults apply.
  for (const char* absent : {"--gpus-per-node", "--cpus-per-task", "--time", "--partition",
                             "--account", "apptainer", "--container"})
    EXPECT_FALSE(has(s, absent)) << absent;
}

TEST(SbatchScript, WritesEveryOptionGivenAndStartsRanksInTheImageWithGpus) {
  auto r = runner();
  r["gpus_per_node"] = 4;
  r["cpus_per_task"] = 8;
  r["time"] = "02:00:00";
  r["partition"] = "gpu";
  r["account"] = "p200";
  r["sbatch"] = {"--qos=short", "--exclusive"};
  r["container"] = "/images/hlm.sif";
  const std::string s = script_for(r);
  for (const char* line :
       {"#SBATCH --gpus-per-node=4\n", "#SBATCH --cpus-per-task=8\n", "#SBATCH --time=02:00:00\n",
        "#SBATCH --partition=gpu\n", "#SBATCH --account=p200\n", "#SBATCH --qos=short\n",
        "#SBATCH --exclusive\n", "--launcher srun --container '/images/hlm.sif' --gpus\n"})
    EXPECT_TRUE(has(s, line)) << line;
}

TEST(SbatchScript, WithoutRequeueTheJobAsksSlurmNotToAndDoesNotRequeueItself) {
  auto r = runner();
  r["requeue"] = false;
  r["signal_seconds"] = 0;
  const std::string s = script_for(r);
  EXPECT_TRUE(has(s, "#SBATCH --no-requeue\n"));
  EXPECT_FALSE(has(s, "scontrol requeue"));
  EXPECT_FALSE(has(s, "--signal"));
}

TEST(SbatchScript, QuotesWordsForTheShell) {
  EXPECT_EQ(hlm::shell_quote("/runs/a b"), "'/runs/a b'");
  EXPECT_EQ(hlm::shell_quote("it's"), "'it'\\''s'");
}

TEST(SrunStep, RunsOneLabelledTaskPerRankAndStopsAllWhenOneFails) {
  hlm::SrunStep step;
  step.ntasks = 8;
  step.rank_argv = {"/opt/hlm/bin/hlm", "rank", "/runs/x/pretrain/job.json"};
  const auto plain = hlm::srun_command(step);
  EXPECT_EQ(plain.front(), "srun");
  EXPECT_NE(std::find(plain.begin(), plain.end(), "--ntasks=8"), plain.end());
  EXPECT_NE(std::find(plain.begin(), plain.end(), "--kill-on-bad-exit=1"), plain.end());
  EXPECT_NE(std::find(plain.begin(), plain.end(), "--label"), plain.end());
  EXPECT_EQ(plain.back(), "/runs/x/pretrain/job.json");

  EXPECT_EQ(std::find_if(plain.begin(), plain.end(),
                         [](const std::string& a) { return a.rfind("--nodes", 0) == 0; }),
            plain.end());  // srun's own placement over the allocation
  step.nodes = 2;
  const auto spread = hlm::srun_command(step);
  EXPECT_NE(std::find(spread.begin(), spread.end(), "--nodes=2"), spread.end());
  EXPECT_NE(std::find(spread.begin(), spread.end(), "--ntasks-per-node=4"), spread.end());
  step.nodes = 0;

  step.cpus_per_task = 8;
  const auto with_cpus = hlm::srun_command(step);
  EXPECT_NE(std::find(with_cpus.begin(), with_cpus.end(), "--cpus-per-task=8"), with_cpus.end());

  step.container = "/images/hlm.sif";
  step.gpus = true;
  const auto contained = hlm::srun_command(step);
  const auto at = std::find(contained.begin(), contained.end(), "apptainer");
  ASSERT_NE(at, contained.end());
  EXPECT_EQ(std::vector<std::string>(at, at + 5),
            (std::vector<std::string>{"apptainer", "exec", "--nv", "/images/hlm.sif",
                                      "/opt/hlm/bin/hlm"}));
}

TEST(SrunStep, ReadsWhichRankFailedOnWhichNodeFromSrunsReport) {
  EXPECT_EQ(hlm::describe_srun_failure("srun: error: nodeB: task 1: Killed"),
            "rank 1 on nodeB: Killed");
  EXPECT_EQ(hlm::describe_srun_failure("srun: error: gpu07: tasks 4-7: Exited with exit code 1"),
            "rank 4 on gpu07: Exited with exit code 1");
  EXPECT_EQ(hlm::describe_srun_failure("srun: Job step aborted: Waiting up to 32 seconds"), "");
  EXPECT_EQ(hlm::describe_srun_failure("0: step 10/300 loss 2.0"), "");
}

}  // namespace
