// The quick-start workflow end to end through the hlm binary, at a small size: all five
// stages, report.md, cache reuse on a second run, resume of an interrupted run, dry run.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/run_directory.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::report_path;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;

namespace {

// Small enough for CI: fewer steps and a short synthetic record set.
const std::string kSmall =
    "workflows/quickstart.yaml vars.steps=30 scale.steps=9 "
    "'vars.model={plugin: gpt, vocab_size: 72, context: 64, d_model: 32, n_layer: 1, n_head: 2, "
    "d_ff: 64}' "
    "'tokenize.datasets=[{plugin: wfdb, dir: workflows/data/mitdb, records: [\"208\"]}, "
    "{plugin: synthetic, records: 2, seconds: 120, sampling_hz: 250, seed: 3}]'";

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Quickstart, RunsAllStagesThenReusesThemFromCacheAndResumesAnInterruptedRun) {
  ScratchDir runs("hlm_quickstart");
  const std::string args = kSmall + " --runs-dir " + runs.path.string();
  const auto first = run_hlm("run " + args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const fs::path report = report_path(first.output);
  ASSERT_TRUE(fs::exists(report)) << first.output;
  const std::string text = read_file(report);
  for (const char* section :
       {"## tokenize", "## pretrain", "## finetune", "## evaluate", "## scale", "Loss curve",
        "Confusion matrix", "| point |", "efficiency", "pretrain/plots/loss.png"})
    EXPECT_NE(text.find(section), std::string::npos) << section << "\n" << text;
  const fs::path run_dir = report.parent_path();
  for (const char* file : {"workflow.resolved.yaml", "overrides.txt", "hlm.log", "metrics.jsonl"})
    EXPECT_TRUE(fs::exists(run_dir / file)) << file;
  for (const char* stage : {"tokenize", "pretrain", "finetune", "evaluate", "scale"})
    EXPECT_EQ(hlm::test::stage_manifest(run_dir, stage)["status"], "done") << stage;
  const auto pretrain = hlm::test::stage_manifest(run_dir, "pretrain")["results"];
  EXPECT_LT(pretrain["loss_last"].get<double>(), pretrain["loss_first"].get<double>());
  const auto scale_rows = hlm::test::stage_manifest(run_dir, "scale")["results"]["rows"];
  ASSERT_EQ(scale_rows.size(), 2u);
  EXPECT_EQ(scale_rows[1]["world_size"], 2);
  // 9 steps do not split over 2 ranks: 2 x 5 steps, a little more work, compared per sample.
  EXPECT_EQ(scale_rows[0]["steps_per_rank"], 9);
  EXPECT_EQ(scale_rows[1]["steps_per_rank"], 5);
  EXPECT_EQ(scale_rows[0]["samples"], 9 * 16);
  EXPECT_EQ(scale_rows[1]["samples"], 2 * 5 * 16);
  const double t1 = scale_rows[0]["seconds"]["median"], t2 = scale_rows[1]["seconds"]["median"];
  const double speedup = (t1 / (9 * 16)) / (t2 / (2 * 5 * 16));
  EXPECT_NEAR(scale_rows[1]["speedup"].get<double>(), speedup, 1e-9 * speedup);
  EXPECT_NEAR(scale_rows[1]["efficiency"].get<double>(), speedup / 2, 1e-9 * speedup);

  // Same workflow again: every stage comes from the cache.
  const auto second = run_hlm("run " + args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  for (const char* stage : {"tokenize", "pretrain", "finetune", "evaluate", "scale"})
    EXPECT_NE(second.output.find(std::string(stage) + ": reused from cache"), std::string::npos)
        << stage << "\n"
        << second.output;

  // An interrupted run (evaluate never finished) resumes from the first unfinished stage.
  auto m = hlm::test::stage_manifest(run_dir, "evaluate");
  m["status"] = "running";
  hlm::write_manifest((run_dir / "evaluate").string(), m);  // as the engine writes it
  fs::remove(run_dir / "report.md");
  const auto resumed =
      run_hlm("run --resume " + run_dir.string() + " --runs-dir " + runs.path.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("[1/5] tokenize: reused"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("[4/5] evaluate (evaluate) ..."), std::string::npos)
      << resumed.output;
  EXPECT_EQ(hlm::test::stage_manifest(run_dir, "evaluate")["status"], "done");
  EXPECT_TRUE(fs::exists(run_dir / "report.md"));
}

TEST(Quickstart, DryRunPrintsThePlanWithCacheKeysAndRunsNothing) {
  ScratchDir runs("hlm_dry");
  const auto r = run_hlm("run " + kSmall + " --dry-run --runs-dir " + runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* word :
       {"tokenize", "pretrain", "finetune", "evaluate", "scale-analysis", "beat-vq", "gpt"})
    EXPECT_NE(r.output.find(word), std::string::npos) << word << "\n" << r.output;
  EXPECT_TRUE(fs::is_empty(runs.path));
}

// A dataset folder that is not there is refused with the line of the stage that reads it,
// before any stage runs and any run folder is made.
TEST(Quickstart, AMissingDatasetFolderIsRefusedNamingItsStageBeforeAnyStageRuns) {
  ScratchDir runs("hlm_missing_data");
  const auto r = run_hlm("run " + kSmall + " 'tokenize.datasets=[{plugin: wfdb, dir: " +
                         (runs.path / "absent").string() + "}]' --runs-dir " + runs.path.string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quickstart.yaml:16: stage 'tokenize': dataset plugin 'wfdb'"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("absent: not a directory"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(runs.path)) << "a run folder was made";
}

TEST(Quickstart, ATypoInAWorkflowKeyIsRefusedWithItsLineAndASuggestion) {
  ScratchDir dir("hlm_typo");
  std::string text = read_file(fs::path(HLM_SOURCE_DIR) / "workflows/quickstart.yaml");
  const size_t at = text.find("      batch: 16");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 15, "      bacth: 16");
  const int line = int(std::count(text.begin(), text.begin() + long(at), '\n')) + 1;
  std::ofstream(dir.path / "typo.yaml") << text;
  const auto r = run_hlm("validate " + (dir.path / "typo.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("typo.yaml:" + std::to_string(line) + ":"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("did you mean 'batch'?"), std::string::npos) << r.output;
}

TEST(Quickstart, PluginsListsEveryInTreePluginWithItsParameters) {
  const auto r = run_hlm("plugins");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name :
       {"wfdb", "synthetic", "beat-vq", "gpt", "gloo", "shm", "vocab_size", "codes"})
    EXPECT_NE(r.output.find(name), std::string::npos) << name << "\n" << r.output;
}

}  // namespace
