// A foundation checkpoint used by another workflow: workflows/foundation.yaml at size ci (a
// shipped MIT-BIH record and synthetic ECG) pretrains once, and tests/fixtures/from_foundation.yaml
// tokenizes with its codebook (codebook_from) and fine-tunes its checkpoint (pretrain's from)
// instead of pretraining its own, and its evaluation names the scored record the foundation saw;
// a model other than the checkpoint's, or a folder without the stage, is refused, naming what
// to give.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/finetune_cv.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::expect_refused;
using hlm::test::run_hlm;
using hlm::test::stage_manifest;

namespace {

const char* kData =
    " 'vars.datasets=[{plugin: wfdb, dir: workflows/data/mitdb, records: [\"119\"]},"
    " {plugin: synthetic, records: 2, seconds: 120, sampling_hz: 360, seed: 5}]'"
    " vars.data_dir=/nonexistent vars.size=ci";

// One foundation run shared by the tests below.
const fs::path& foundation_run() {
  static hlm::test::ScratchDir runs("hlm_foundation");
  static const fs::path run = [] {
    const auto r =
        run_hlm("run workflows/foundation.yaml --runs-dir " + runs.path.string() + kData);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return hlm::test::run_dir_of(r.output);
  }();
  return run;
}

TEST(Foundation, AnotherWorkflowFineTunesItsCheckpointWithItsCodebook) {
  const fs::path& foundation = foundation_run();
  const auto pretrained = stage_manifest(foundation, "pretrain");
  EXPECT_EQ(pretrained["results"]["pretrained_records"].size(), 3u) << pretrained.dump();
  hlm::test::ScratchDir runs("hlm_from_foundation");
  const auto r = run_hlm("run tests/fixtures/from_foundation.yaml --runs-dir " +
                         runs.path.string() + " vars.foundation=" + foundation.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run = hlm::test::run_dir_of(r.output);
  const auto used = stage_manifest(run, "pretrain");
  EXPECT_EQ(used["artifacts"]["checkpoint"], pretrained["artifacts"]["checkpoint"]);
  EXPECT_EQ(fs::path(used["results"]["from"].get<std::string>()),
            fs::absolute(foundation / "pretrain").lexically_normal());
  EXPECT_EQ(used["results"]["pretrained_records"], pretrained["results"]["pretrained_records"]);
  EXPECT_EQ(stage_manifest(run, "tokenize")["artifacts"]["codebook"],
            stage_manifest(foundation, "tokenize")["artifacts"]["codebook"]);
  EXPECT_NE(r.output.find("used (pretrained on 3 records)"), std::string::npos) << r.output;
  // 208 was not in the foundation, 119 was: the report names it as transductive.
  std::ifstream in(run / "evaluate" / "results.json");
  const auto scored = nlohmann::json::parse(in)["datasets"]["holdout"];
  EXPECT_EQ(scored["pretrained_records"], nlohmann::json::array({"119"})) << scored.dump();
  EXPECT_NE(hlm::test::read_text(run / "report.md")
                .find("Pretraining saw 1 of the 2 scored records without their labels"),
            std::string::npos);
}

TEST(Foundation, AnotherModelOrAFolderWithoutTheStageIsRefused) {
  const fs::path& foundation = foundation_run();
  hlm::test::ScratchDir runs("hlm_from_foundation_refused");
  const std::string run = "run tests/fixtures/from_foundation.yaml --runs-dir " +
                          runs.path.string() + " vars.foundation=";
  expect_refused(run_hlm(run + foundation.string() + " vars.model.d_model=64"),
                 "set the model to the checkpoint's");
  expect_refused(run_hlm(run + runs.path.string()), "holds no tokenize stage");
}

}  // namespace
