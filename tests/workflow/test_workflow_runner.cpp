// The workflow's runner block: defaults, overrides, checks, and the resolved workflow.
#include "workflow_test_schema.h"

namespace hlm::workflow::test_support {
namespace {

TEST(WorkflowRunner, DefaultsToTheLocalRunner) {
  const Workflow wf = load(kBasic);
  EXPECT_EQ(wf.runner["kind"], "local");
  EXPECT_EQ(wf.runner["nodes"], 1);
  EXPECT_EQ(wf.runner["requeue"], true);
  EXPECT_EQ(wf.runner["sbatch"], nlohmann::json::array());
}

TEST(WorkflowRunner, TakesTheBlockAndOverridesOfItsKeys) {
  const Workflow wf =
      load(std::string(kBasic) + "runner: {kind: slurm, nodes: 4, time: \"01:00:00\"}\n",
           {"runner.ntasks_per_node=2", "runner.sbatch=[--qos=short]"});
  EXPECT_EQ(wf.runner["kind"], "slurm");
  EXPECT_EQ(wf.runner["nodes"], 4);
  EXPECT_EQ(wf.runner["ntasks_per_node"], 2);
  EXPECT_EQ(wf.runner["time"], "01:00:00");
  EXPECT_EQ(wf.runner["sbatch"], nlohmann::json({"--qos=short"}));
  // The resolved workflow keeps the block: a submitted job runs what was submitted.
  const Workflow again = load(wf.resolved_yaml());
  EXPECT_EQ(again.runner, wf.runner);
}

TEST(WorkflowRunner, RefusesAnUnknownKindKeyOrCount) {
  EXPECT_NE(error_of(kBasic, {"runner.kind=pbs"}).find("kind 'pbs' is not a runner"),
            std::string::npos);
  EXPECT_NE(error_of(kBasic, {"runner.nodes=0"})
                .find("'nodes' in runner is 0, out of its range: allowed 1 or more"),
            std::string::npos)
      << error_of(kBasic, {"runner.nodes=0"});
  EXPECT_NE(error_of(kBasic, {"runner.node=2"})
                .find("unknown key 'node' in runner (did you mean "
                      "'nodes'"),
            std::string::npos)
      << error_of(kBasic, {"runner.node=2"});
  EXPECT_NE(error_of(kBasic, {"runner.gpus_per_node=-1"}).find("allowed 0 or more"),
            std::string::npos);
  // Each becomes one word of the batch script.
  EXPECT_NE(error_of(kBasic, {"runner.partition=gpu nodes"}).find("cannot contain spaces"),
            std::string::npos);
}

// No workflow field runs a program of the workflow's choosing: runner.hlm may only name hlm.
TEST(WorkflowRunner, RunnerHlmNamesOnlyAnHlmBinary) {
  EXPECT_NE(error_of(kBasic, {"runner.hlm=/bin/rm"}).find("must name an executable called hlm"),
            std::string::npos)
      << error_of(kBasic, {"runner.hlm=/bin/rm"});
  EXPECT_EQ(error_of(kBasic, {"runner.hlm=/opt/hlm/bin/hlm"}), "no error");
}

// runner.sbatch lines cannot send the job's files outside the run directory or run a command
// of their own; other options pass.
TEST(WorkflowRunner, SbatchOptionsCannotMoveTheJobsFilesOrRunACommand) {
  for (const std::string option :
       {"--output=/tmp/x.out", "-o /tmp/x.out", "-o/tmp/x.out", "--out=/tmp/x", "--error=/tmp/e",
        "-e /tmp/e", "--input=/etc/passwd"}) {
    const std::string error = error_of(kBasic, {"runner.sbatch=[" + option + "]"});
    EXPECT_NE(error.find("sbatch option '" + option + "' is set by hlm: the job's output goes to"),
              std::string::npos)
        << option << ": " << error;
  }
  EXPECT_NE(error_of(kBasic, {"runner.sbatch=[--chdir=/tmp]"}).find("the job starts where"),
            std::string::npos);
  EXPECT_NE(error_of(kBasic, {"runner.sbatch=[-D /tmp]"}).find("the job starts where"),
            std::string::npos);
  EXPECT_NE(error_of(kBasic, {"runner.sbatch=[--wrap=rm -rf x]"}).find("would run a command"),
            std::string::npos);
  EXPECT_EQ(error_of(kBasic, {"runner.sbatch=[--qos=short, --exclusive, --export=ALL, -N 2]"}),
            "no error");
}

}  // namespace
}  // namespace hlm::workflow::test_support
