// A foundation checkpoint used by another workflow: workflows/foundation.yaml at size ci (a
// shipped MIT-BIH record and synthetic ECG) pretrains once, and tests/fixtures/from_foundation.yaml
// tokenizes with its codebook and token settings (codebook_from; its own descriptors kept) and
// fine-tunes its checkpoint and model (pretrain's from) instead of pretraining its own, and its
// evaluation names the scored record the foundation saw; `own` makes its own; a folder without
// the stage is refused, naming what to give. challenge2017.yaml takes it as vars.pretrained, and
// af-rhythm.yaml its rhythm vocabulary and checkpoint.
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
    " 'vars.rhythm_datasets=[{plugin: wfdb, dir: workflows/data/mitdb, records: [\"119\"]}]'"
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
  // 119's beat and rhythm tokens, the two synthetic records' beat tokens: 119 counted once.
  EXPECT_EQ(pretrained["results"]["pretrained_records"].size(), 3u) << pretrained.dump();
  EXPECT_EQ(pretrained["results"]["tokenizers"].size(), 2u) << pretrained.dump();
  EXPECT_EQ(pretrained["results"]["eval_loss_by_store"].size(), 2u) << pretrained.dump();
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
  // The foundation's codes (32, where the fixture asks for 16), the fixture's descriptors.
  const auto tokens = stage_manifest(run, "tokenize");
  const auto theirs = stage_manifest(foundation, "tokenize");
  EXPECT_EQ(tokens["artifacts"]["codebook"], theirs["artifacts"]["codebook"]);
  EXPECT_EQ(tokens["results"]["tokenizer"], theirs["results"]["tokenizer"]);
  EXPECT_EQ(tokens["results"]["tokenizer_settings"]["codes"], 32);
  EXPECT_EQ(tokens["results"]["descriptors"].size(), 64u) << tokens["results"].dump();
  EXPECT_TRUE(theirs["results"]["descriptors"].empty());
  EXPECT_NE(r.output.find("codes 16 -> 32, lead_names"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("used (pretrained on 3 records)"), std::string::npos) << r.output;
  // 208 was not in the foundation, 119 was: the report names it as transductive.
  std::ifstream in(run / "evaluate" / "results.json");
  const auto scored = nlohmann::json::parse(in)["datasets"]["holdout"];
  EXPECT_EQ(scored["pretrained_records"], nlohmann::json::array({"119"})) << scored.dump();
  EXPECT_NE(hlm::test::read_text(run / "report.md")
                .find("Pretraining saw 1 of the 2 scored records without their labels"),
            std::string::npos);
}

// The checkpoint's model is fine-tuned, whatever the workflow's own model (said on the
// console); `own` pretrains the workflow's; a folder without the stage is refused.
TEST(Foundation, ItsModelIsUsedOwnPretrainsHereAndAFolderWithoutTheStageIsRefused) {
  const fs::path& foundation = foundation_run();
  hlm::test::ScratchDir runs("hlm_from_foundation_model");
  const std::string run = "run tests/fixtures/from_foundation.yaml --runs-dir " +
                          runs.path.string() + " vars.foundation=";
  const auto other = run_hlm(run + foundation.string() + " vars.model.d_model=64");
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(other.output.find("is the one pretrained with from: own"), std::string::npos)
      << other.output;
  EXPECT_EQ(stage_manifest(hlm::test::run_dir_of(other.output),
                           "pretrain")["results"]["model"]["d_model"],
            32);
  const auto own = run_hlm(run + "own");
  ASSERT_EQ(own.exit_code, 0) << own.output;
  const auto own_run = hlm::test::run_dir_of(own.output);
  EXPECT_FALSE(stage_manifest(own_run, "pretrain")["results"].contains("from"));
  EXPECT_EQ(stage_manifest(own_run, "tokenize")["results"]["tokenizer_settings"]["codes"], 16);
  const auto refused = run_hlm(run + runs.path.string());
  expect_refused(refused, "from_foundation.yaml:11: stage 'tokenize': codebook_from: '");
  expect_refused(refused, "holds no tokenize stage");
}

// A `from` that names a folder holding no pretrain stage (here the foundation's tokenize stage,
// which codebook_from takes) is refused before the tokenize stage before it runs, naming the
// stage that reads it.
TEST(Foundation, AFromWithoutAPretrainStageIsRefusedBeforeAnyStageRuns) {
  const fs::path& foundation = foundation_run();
  hlm::test::ScratchDir runs("hlm_from_tokenize_stage");
  const auto r =
      run_hlm("run tests/fixtures/from_foundation.yaml --runs-dir " + runs.path.string() +
              " vars.foundation=" + (foundation / "tokenize").string());
  expect_refused(r, "from_foundation.yaml:18: stage 'pretrain': from: '");
  expect_refused(r, "holds no pretrain stage");
  EXPECT_FALSE(fs::exists(runs.path / "from-foundation")) << "a run folder was made";
}

// A clinical workflow fine-tunes the foundation given as vars.pretrained (size ci).
TEST(Foundation, Challenge2017FineTunesItGivenAsVarsPretrained) {
  const std::string data = HLM_TEST_DATA_DIR;
  if (!fs::exists(data + "/challenge2017/REFERENCE-v3.csv"))
    GTEST_SKIP() << data << "/challenge2017 is absent";
  const fs::path& foundation = foundation_run();
  hlm::test::ScratchDir runs("hlm_challenge_from_foundation");
  const auto r = run_hlm("run workflows/challenge2017.yaml vars.size=ci vars.train_dir=" + data +
                         "/challenge2017 --runs-dir " + runs.path.string() +
                         " vars.pretrained=" + foundation.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run = hlm::test::run_dir_of(r.output);
  EXPECT_EQ(stage_manifest(run, "tokenize")["results"]["tokenizer"],
            stage_manifest(foundation, "tokenize")["results"]["tokenizer"]);
  EXPECT_EQ(stage_manifest(run, "pretrain")["artifacts"]["checkpoint"],
            stage_manifest(foundation, "pretrain")["artifacts"]["checkpoint"]);
}

// A weight that is no positive number, or one per store too many, is refused naming the key:
// the first before any stage runs, the second when the stores are known, before training.
TEST(Foundation, StoreWeightsAreCheckedBeforeAnyStageRuns) {
  hlm::test::ScratchDir runs("hlm_foundation_weights");
  const std::string run = "run workflows/foundation.yaml --runs-dir " + runs.path.string() + kData;
  const auto zero = run_hlm(run + " 'vars.store_weights=[1, 0]'");
  expect_refused(zero, "store_weights holds 0");
  for (const auto& entry : fs::recursive_directory_iterator(runs.path))  // nothing tokenized
    EXPECT_NE(entry.path().filename(), "tokens.hlmt") << entry.path();
  expect_refused(run_hlm(run + " 'vars.store_weights=[1, 1, 1]'"),
                 "store_weights has 3 weights for the 2 tokenize stages");
}

// af-rhythm's first model takes the foundation's rhythm token settings (ids after its beat
// codes) and checkpoint; segments no longer than the foundation's context.
TEST(Foundation, AfRhythmFineTunesItsRhythmVocabulary) {
  const std::string data = HLM_TEST_DATA_DIR;
  if (!fs::exists(data + "/ltafdb/00.atr")) GTEST_SKIP() << data << "/ltafdb is absent";
  const fs::path& foundation = foundation_run();
  hlm::test::ScratchDir runs("hlm_af_from_foundation");
  const auto r =
      run_hlm("run workflows/af-rhythm.yaml vars.size=ci vars.ltafdb_dir=" + data +
              "/ltafdb vars.mitdb_dir=workflows/data/mitdb 'vars.mitdb_records=[\"208\"]'"
              " 'vars.segment_beats=[41]' 'vars.backbones=[full]' --runs-dir " +
              runs.path.string() + " vars.pretrained=" + foundation.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run = hlm::test::run_dir_of(r.output);
  const auto theirs = stage_manifest(foundation, "tokenize_rhythm");
  for (const char* stage : {"tokenize", "tokenize_mitdb"}) {
    const auto tokens = stage_manifest(run, stage);
    EXPECT_EQ(tokens["results"]["tokenizer"], theirs["results"]["tokenizer"]) << stage;
    EXPECT_EQ(tokens["results"]["tokenizer_settings"]["first_token"], 36) << stage;
  }
  EXPECT_EQ(stage_manifest(run, "pretrain")["artifacts"]["checkpoint"],
            stage_manifest(foundation, "pretrain")["artifacts"]["checkpoint"]);
  EXPECT_NE(r.output.find("first_token 4 -> 36"), std::string::npos) << r.output;
}

// A segment longer than the context of the model fine-tuned is refused before any stage runs,
// by run, validate and submit alike: against the foundation's checkpoint (context 48 at size ci,
// where af-rhythm's ci segments reach 128) and against the workflow's own model (128). A
// foundation run not there yet is not read.
TEST(Foundation, SegmentsLongerThanTheModelsContextAreRefusedBeforeAnyStageRuns) {
  const fs::path& foundation = foundation_run();
  hlm::test::ScratchDir runs("hlm_af_context");
  const std::string workflow =
      " workflows/af-rhythm.yaml vars.size=ci vars.ltafdb_dir=/nonexistent"
      " vars.mitdb_dir=workflows/data/mitdb 'vars.backbones=[full]'";
  const std::string in_runs = " --runs-dir " + runs.path.string();
  const std::string from = " vars.pretrained=" + foundation.string();
  const std::string checkpoint =
      "af-rhythm.yaml:110: stage 'finetune[backbone=full,segment_beats=128]': segment_beats=128 "
      "must be from 2 to 48, the context of the checkpoint's model (" +
      (foundation / "pretrain").string() + ")";
  expect_refused(run_hlm("run" + workflow + from + in_runs), checkpoint);
  expect_refused(run_hlm("validate" + workflow + from), checkpoint);
  expect_refused(run_hlm("submit --dry-run" + workflow + from + in_runs), checkpoint);
  expect_refused(run_hlm("run" + workflow + " 'vars.segment_beats=[41, 129]'" + in_runs),
                 "stage 'finetune[backbone=full,segment_beats=129]': segment_beats=129 must be "
                 "from 2 to 128, the context of the model of stage 'pretrain'");
  EXPECT_FALSE(fs::exists(runs.path / "af-rhythm")) << "a run folder was made";
  const auto fits = run_hlm("validate" + workflow + from + " 'vars.segment_beats=[41, 48]'");
  EXPECT_EQ(fits.exit_code, 0) << fits.output;
  // A foundation not there yet (a job to start after the foundation's) is left to the run.
  const auto later =
      run_hlm("validate" + workflow + " vars.pretrained=" + (runs.path / "not-yet").string());
  EXPECT_EQ(later.exit_code, 0) << later.output;
}

}  // namespace
