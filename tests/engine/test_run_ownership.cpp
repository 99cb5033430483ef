// A run owns its folder: `hlm run --resume` works in the run's own runs folder from any
// directory, refuses changes, is refused while the run (or ranks it started) is alive; ranks
// end with a killed launcher; `hlm status` tells a dead run from a live one and fails on a
// corrupt one; the advice after a failed stage is one that works.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::CommandResult;
using hlm::test::read_text;
using hlm::test::run_command;
using hlm::test::run_dir_of;
using hlm::test::run_hlm;
using hlm::test::run_hlm_watching;
using hlm::test::ScratchDir;

namespace {

const std::string kHlm = HLM_BINARY_DIR "/bin/hlm";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// hlm run of train_small.yaml into runs, stopped with SIGTERM once the given line appears.
fs::path interrupted_run(const fs::path& runs, const std::string& at_line,
                         const std::string& extra = "") {
  bool signalled = false;
  const auto stopped = run_hlm_watching(
      "run tests/fixtures/train_small.yaml pretrain.steps=60 pretrain.log_every=1 " + extra +
          " --runs-dir " + runs.string(),
      [&](pid_t pid, const std::string& line) {
        if (!signalled && contains(line, at_line)) {
          kill(pid, SIGTERM);
          signalled = true;
        }
      });
  EXPECT_TRUE(signalled) << stopped.output;
  EXPECT_EQ(stopped.exit_code, 75) << stopped.output;
  return run_dir_of(stopped.output);
}

// Waits up to seconds for `hlm status RUN` to contain text; returns the last status.
std::string status_when(const fs::path& run, const std::string& text, int seconds) {
  std::string status;
  for (int i = 0; i < seconds * 10; ++i) {
    status = run_command("'" + kHlm + "' status '" + run.string() + "' 2>&1").output;
    if (contains(status, text)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return status;
}

}  // namespace

// Before: the resume wrote its stage cache into ./runs of wherever it was started.
TEST(RunOwnership, AResumeFromAnotherDirectoryUsesTheRunsOwnStageCache) {
  ScratchDir runs("hlm_own_runs"), elsewhere("hlm_own_elsewhere");
  const fs::path run = interrupted_run(runs.path, "step 5/");
  ASSERT_FALSE(run.empty());
  const auto resumed = run_command("cd '" + elsewhere.path.string() + "' && '" + kHlm +
                                   "' run --resume '" + run.string() + "' 2>&1");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_FALSE(fs::exists(elsewhere.path / "runs")) << resumed.output;
  // The pretrain stage the resume finished is in the run's own cache: a new run reuses it.
  const auto again = run_hlm(
      "run tests/fixtures/train_small.yaml pretrain.steps=60 "
      "pretrain.log_every=1 --runs-dir " +
      runs.path.string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "pretrain: reused from cache")) << again.output;
}

// Before: overrides and a workflow given with --resume were silently ignored.
TEST(RunOwnership, AResumeRefusesOverridesAWorkflowAndAnotherRunsFolder) {
  ScratchDir runs("hlm_own_refuse"), other("hlm_own_other");
  const fs::path run = interrupted_run(runs.path, "step 3/");
  ASSERT_FALSE(run.empty());
  for (const std::string& extra :
       {std::string("pretrain.steps=5"), std::string("tests/fixtures/train_small.yaml"),
        std::string("--nproc 2")}) {
    const auto refused = run_hlm("run --resume " + run.string() + " " + extra);
    EXPECT_EQ(refused.exit_code, 2) << extra << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, "start a new one")) << refused.output;
  }
  const auto wrong_folder =
      run_hlm("run --resume " + run.string() + " --runs-dir " + other.path.string());
  EXPECT_EQ(wrong_folder.exit_code, 2) << wrong_folder.output;
  EXPECT_TRUE(contains(wrong_folder.output, "belongs to the runs folder " + runs.path.string()))
      << wrong_folder.output;
}

// Before: ranks of a killed `hlm run` trained on under PID 1, and a resume started a second
// pair beside them in the same folder. (A world of 1 trains inside `hlm run` itself.)
TEST(RunOwnership, RanksEndWithAKilledLauncherAndALiveRunCannotBeResumedTwice) {
  ScratchDir runs("hlm_own_live");
  pid_t launcher = -1;
  fs::path run;
  bool killed = false;
  std::string refused_output, live_status;
  const auto first = run_hlm_watching(
      "run tests/fixtures/train_small.yaml vars.world_size=2 pretrain.steps=100000 "
      "pretrain.log_every=1 pretrain.checkpoint_every=5 --runs-dir " +
          runs.path.string(),
      [&](pid_t pid, const std::string& line) {
        if (run.empty() && contains(line, "run directory ")) run = run_dir_of(line + "\n");
        if (killed || !contains(line, "step 20/")) return;
        launcher = pid;
        refused_output =
            run_command("'" + kHlm + "' run --resume '" + run.string() + "' 2>&1").output;
        live_status = run_command("'" + kHlm + "' status '" + run.string() + "' 2>&1").output;
        kill(pid, SIGKILL);
        killed = true;
      });
  ASSERT_TRUE(killed) << first.output;
  EXPECT_EQ(first.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(contains(refused_output, "in use by hlm (PID " + std::to_string(launcher)))
      << refused_output;
  EXPECT_TRUE(contains(live_status, "state  running (hlm PID " + std::to_string(launcher)))
      << live_status;
  // The rank got the launcher's death as a stop: it checkpoints and exits, and the lock
  // it inherited goes with it.
  const std::string after = status_when(run, "state  not running", 60);
  ASSERT_TRUE(contains(after, "state  not running")) << after;
  EXPECT_TRUE(contains(after, "stage  pretrain: interrupted (its process ended")) << after;
  EXPECT_TRUE(contains(read_text(run / "pretrain" / "rank0.log"), "step 20/"));
}

// Before: `hlm status` listed no stages and exited 0 on a corrupt resolved workflow.
TEST(RunOwnership, StatusFailsOnACorruptRunFolder) {
  ScratchDir dir("hlm_own_corrupt");
  std::ofstream(dir.path / "workflow.resolved.yaml") << "name: x\nstages: [\n  - {id: a";
  const auto status = run_hlm("status " + dir.path.string());
  EXPECT_EQ(status.exit_code, 2) << status.output;
  EXPECT_TRUE(contains(status.output, "workflow.resolved.yaml: corrupt")) << status.output;
}

// Before: "fix the cause and continue with hlm run --resume", which re-reads the run's own
// resolved workflow, so a cause in the workflow could never be fixed that way.
TEST(RunOwnership, AFailedStageAdvisesANewRunForAWorkflowCauseAndResumeForOthers) {
  ScratchDir runs("hlm_own_advice");
  // A model vocabulary smaller than the tokens': found when the stage opens the token store.
  const auto failed = run_hlm(
      "run tests/fixtures/train_small.yaml pretrain.steps=5 'pretrain.model={plugin: gpt, "
      "vocab_size: 8, context: 32, d_model: 32, n_layer: 1, n_head: 2, d_ff: 64}' "
      "--runs-dir " +
      runs.path.string());
  ASSERT_NE(failed.exit_code, 0) << failed.output;
  const fs::path run = run_dir_of(failed.output);
  EXPECT_TRUE(contains(failed.output, "continue with: hlm run --resume " + run.string()))
      << failed.output;
  EXPECT_TRUE(contains(failed.output, "start a new run: hlm run " HLM_SOURCE_DIR
                                      "/tests/fixtures/train_small.yaml 'pretrain.steps=5'"))
      << failed.output;
}
