// A scheduler's polite stop (SIGTERM, or SIGUSR1 before a time limit) is honoured by every stage
// kind, and each stage kind is stopped by both signals: the run exits with the requeue status 75,
// the stage is marked interrupted and keeps what it finished, and `hlm run --resume` completes the
// run. The signal is delivered while hlm is stopped (SIGSTOP ... SIGCONT) right after the line that
// starts the targeted work, so it lands inside that work however loaded the machine is.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::run_dir_of;
using hlm::test::run_hlm;
using hlm::test::run_hlm_watching;
using hlm::test::ScratchDir;
using hlm::test::stage_manifest;

namespace {

const std::string kWorkflow = "tests/fixtures/every_stage.yaml";

struct Stopped {
  hlm::test::CommandResult run;
  fs::path run_dir;
};

// Runs the workflow and sends `signal` (SIGTERM, or SIGUSR1 as SLURM sends before a time limit)
// when a line containing `trigger` appears.
Stopped run_and_stop_at(const fs::path& runs, const std::string& trigger, int signal,
                        const std::string& overrides = "") {
  bool signalled = false;
  Stopped s;
  s.run = run_hlm_watching("run " + kWorkflow + " --runs-dir " + runs.string() + " " + overrides,
                           [&](pid_t pid, const std::string& line) {
                             if (signalled || line.find(trigger) == std::string::npos) return;
                             kill(pid, SIGSTOP);
                             kill(pid, signal);
                             kill(pid, SIGCONT);
                             signalled = true;
                           });
  EXPECT_TRUE(signalled) << "never saw '" << trigger << "' in:\n" << s.run.output;
  s.run_dir = run_dir_of(s.run.output);
  return s;
}

hlm::test::CommandResult resume(const Stopped& s, const fs::path& runs) {
  return run_hlm("run --resume " + s.run_dir.string() + " --runs-dir " + runs.string());
}

// Each test runs once with SIGTERM and once with SIGUSR1 (GetParam()).
class StopSignal : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(BothSignals, StopSignal, ::testing::Values(SIGTERM, SIGUSR1),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGTERM ? "SIGTERM" : "SIGUSR1");
                         });

TEST_P(StopSignal, TokenizeKeepsTheRecordsItWroteAndResumesToTheSameStore) {
  ScratchDir runs("hlm_stop_tokenize");
  const auto whole = run_hlm("run " + kWorkflow + " --runs-dir " + (runs.path / "a").string() +
                             " finetune.steps=1 scale.world_sizes=[1] scale.steps=1");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const auto expected = stage_manifest(run_dir_of(whole.output), "tokenize")["results"];

  const Stopped s = run_and_stop_at(runs.path / "b", "tokenize: codebook fitted", GetParam());
  ASSERT_EQ(s.run.exit_code, 75) << s.run.output;
  EXPECT_EQ(stage_manifest(s.run_dir, "tokenize")["status"], "interrupted");
  EXPECT_NE(s.run.output.find("records written"), std::string::npos) << s.run.output;
  EXPECT_TRUE(fs::exists(s.run_dir / "tokenize" / "tokens.hlmt.tmp"));  // the finished records

  const auto resumed = resume(s, runs.path / "b");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("codebook of the interrupted run reused"), std::string::npos)
      << resumed.output;
  const auto got = stage_manifest(s.run_dir, "tokenize")["results"];
  EXPECT_EQ(got["records"], expected["records"]);
  EXPECT_EQ(got["beats"], expected["beats"]);
  EXPECT_EQ(got["tokenizer"], expected["tokenizer"]);
}

// 400 steps, so the signal sent at step 10 lands in pretraining on a loaded machine too.
TEST_P(StopSignal, PretrainCheckpointsAndResumesToTheUninterruptedLossesExactly) {
  ScratchDir runs("hlm_stop_pretrain");
  const std::string overrides =
      "pretrain.steps=400 finetune.steps=1 scale.world_sizes=[1] scale.steps=1";
  const auto whole =
      run_hlm("run " + kWorkflow + " --runs-dir " + (runs.path / "a").string() + " " + overrides);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const auto want = stage_manifest(run_dir_of(whole.output), "pretrain")["results"]["losses"]
                        .get<std::vector<double>>();

  const Stopped s =
      run_and_stop_at(runs.path / "b", "[pretrain] step 10/400", GetParam(), overrides);
  ASSERT_EQ(s.run.exit_code, 75) << s.run.output;
  EXPECT_EQ(stage_manifest(s.run_dir, "pretrain")["status"], "interrupted");
  EXPECT_FALSE(fs::is_empty(s.run_dir / "pretrain" / "checkpoints"));

  const auto resumed = resume(s, runs.path / "b");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(
      resumed.output.find("resumed from " + (s.run_dir / "pretrain" / "checkpoints").string()),
      std::string::npos)
      << resumed.output;
  const auto got =
      stage_manifest(s.run_dir, "pretrain")["results"]["losses"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "step " << i + 1;
}

// Fine-tuning with `overrides`, stopped at step 150 of 400: the stage is interrupted with its
// checkpoint, and --resume gives the uninterrupted run's losses and accuracy exactly.
void finetune_stops_and_resumes(int signal, const fs::path& runs, const std::string& overrides) {
  const auto whole =
      run_hlm("run " + kWorkflow + " --runs-dir " + (runs / "a").string() + " " + overrides);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const auto expected = stage_manifest(run_dir_of(whole.output), "finetune")["results"];

  const Stopped s = run_and_stop_at(runs / "b", "finetune: step 150/", signal, overrides);
  ASSERT_EQ(s.run.exit_code, 75) << s.run.output;
  EXPECT_EQ(stage_manifest(s.run_dir, "finetune")["status"], "interrupted");
  ASSERT_TRUE(fs::exists(s.run_dir / "finetune" / "checkpoints")) << s.run.output;
  EXPECT_FALSE(fs::is_empty(s.run_dir / "finetune" / "checkpoints"));

  const auto resumed = resume(s, runs / "b");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("finetune: resumed from"), std::string::npos) << resumed.output;
  const auto want = expected["losses"].get<std::vector<double>>();
  const auto got =
      stage_manifest(s.run_dir, "finetune")["results"]["losses"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "step " << i + 1;
  EXPECT_EQ(stage_manifest(s.run_dir, "evaluate")["results"]["accuracy"],
            stage_manifest(run_dir_of(whole.output), "evaluate")["results"]["accuracy"]);
}

TEST_P(StopSignal, FinetuneCheckpointsAndResumesToTheUninterruptedLossesExactly) {
  ScratchDir runs("hlm_stop_finetune");
  finetune_stops_and_resumes(GetParam(), runs.path, "");
}

// With validation records: the signal lands at step 150, where the validation records are
// scored; that scoring finishes, and the checkpoint keeps early stopping's state beside it
// (written first, into a folder no checkpoint has made yet).
TEST_P(StopSignal, FinetuneWithEarlyStoppingCheckpointsAndResumesExactly) {
  ScratchDir runs("hlm_stop_finetune_early");
  finetune_stops_and_resumes(GetParam(), runs.path, "finetune.validation_records=4");
}

// Evaluation is short: the signal lands in it or just after it, and either way the run stops
// before the next stage and resumes to the end.
TEST_P(StopSignal, EvaluateStopsTheRunAndResumes) {
  ScratchDir runs("hlm_stop_evaluate");
  const Stopped s = run_and_stop_at(runs.path, "evaluate (evaluate) ...", GetParam());
  ASSERT_EQ(s.run.exit_code, 75) << s.run.output;
  const std::string status = stage_manifest(s.run_dir, "evaluate")["status"];
  EXPECT_TRUE(status == "interrupted" || status == "done") << status;
  EXPECT_FALSE(fs::exists(s.run_dir / "scale" / "manifest.json")) << s.run.output;
  const auto resumed = resume(s, runs.path);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(stage_manifest(s.run_dir, "evaluate")["status"], "done");
  EXPECT_EQ(stage_manifest(s.run_dir, "scale")["status"], "done");
}

// Stopped late in world size 1: resumed from its checkpoint, the row's time still covers all
// of its steps (the part before the stop is in the checkpoint), and world size 2 runs after.
TEST_P(StopSignal, ScaleAnalysisResumesAWorldSizeAndTimesEverySegment) {
  ScratchDir runs("hlm_stop_scale");
  const Stopped s = run_and_stop_at(runs.path, "[scale-w1] step 250/", GetParam());
  ASSERT_EQ(s.run.exit_code, 75) << s.run.output;
  EXPECT_EQ(stage_manifest(s.run_dir, "scale")["status"], "interrupted");
  const auto resumed = resume(s, runs.path);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto rows = stage_manifest(s.run_dir, "scale")["results"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  double before_stop = 0;
  for (const auto& entry :
       fs::directory_iterator(s.run_dir / "scale" / "points" / "w1" / "rep0" / "checkpoints")) {
    std::ifstream in(entry.path() / "meta.json");
    const auto meta = nlohmann::json::parse(in);
    if (meta["step"].get<int>() < 300) before_stop = meta["train_seconds"].get<double>();
  }
  ASSERT_GT(before_stop, 0.0);
  EXPECT_GT(rows[0]["seconds"]["median"].get<double>(), before_stop);
}

}  // namespace
