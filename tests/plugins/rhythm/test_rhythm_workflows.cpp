// workflows/af.yaml and workflows/mitdb.yaml through the hlm binary: both validate with
// HLM_DATA_DIR set, and af.yaml runs end to end at a small size (rhythm tokens from ltafdb
// annotations and Challenge 2017 detections, a few pretraining steps). Skips when the binary,
// its plugins or the PhysioNet data are absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "support/hlm_cli.h"

namespace {

const std::string kData = HLM_TEST_DATA_DIR;

// The data the workflows read, or "" when it is all there. The binary and the plugins are
// build dependencies of this test: a missing one makes the run fail, not the test skip.
std::string missing() {
  for (const std::string& p :
       {kData + "/ltafdb/00.atr", kData + "/challenge2017/A00001.mat", kData + "/mitdb/208.dat"})
    if (!std::filesystem::exists(p)) return p;
  return "";
}

}  // namespace

TEST(RhythmWorkflows, AfAndMitdbValidateOnlyWithTheDataDirSet) {
  if (const std::string m = missing(); !m.empty()) GTEST_SKIP() << m << " is absent";
  for (const std::string workflow : {"workflows/af.yaml", "workflows/mitdb.yaml"}) {
    ::unsetenv("HLM_DATA_DIR");
    const auto without = hlm::test::run_hlm("validate " + workflow);
    EXPECT_EQ(without.exit_code, 2) << without.output;
    EXPECT_NE(without.output.find("HLM_DATA_DIR"), std::string::npos) << without.output;
    ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
    const auto with = hlm::test::run_hlm("validate " + workflow);
    EXPECT_EQ(with.exit_code, 0) << with.output;
  }
}

TEST(RhythmWorkflows, AfRunsEndToEndOnAFewRecords) {
  if (const std::string m = missing(); !m.empty()) GTEST_SKIP() << m << " is absent";
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  hlm::test::ScratchDir runs("hlm_af_workflow");
  const auto r = hlm::test::run_hlm(
      "run workflows/af.yaml pretrain.steps=3 --runs-dir " + runs.path.string() +
      " 'vars.model={plugin: gpt, vocab_size: 84, context: 64, d_model: 32, n_layer: 1, n_head: 2, "
      "d_ff: 64}'"
      " 'tokenize.datasets=[{plugin: wfdb, dir: \"" +
      kData +
      "/ltafdb\", records: [\"00\"]}, "
      "{plugin: wfdb, dir: \"" +
      kData + "/challenge2017\", annotator: \"\", records: [\"A00001\", \"A00004\"]}]'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tokenize: 3 records"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pretrain done"), std::string::npos) << r.output;
}

TEST(RhythmWorkflows, MitdbRunsEndToEndOnAFewRecords) {
  if (const std::string m = missing(); !m.empty()) GTEST_SKIP() << m << " is absent";
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  hlm::test::ScratchDir runs("hlm_mitdb_workflow");
  const auto r = hlm::test::run_hlm(
      "run workflows/mitdb.yaml pretrain.steps=3 finetune.steps=3 tokenize.tokenizer.codes=16 "
      "'vars.model={plugin: gpt, vocab_size: 20, context: 64, d_model: 32, n_layer: 1, n_head: 2, "
      "d_ff: 64}' "
      "'finetune.holdout_records=[\"119\"]' 'evaluate.records=[\"119\"]' "
      "'tokenize.datasets=[{plugin: wfdb, dir: \"" +
      kData +
      "/mitdb\", records: [\"119\", \"208\"]}]' "
      "--runs-dir " +
      runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("evaluate: holdout [backbone=full]: accuracy"), std::string::npos)
      << r.output;
  // Fine-tuned from random weights too (vars.backbones): a head without trees is the model,
  // compared with the pretrained one on the same beats.
  const std::string report = hlm::test::read_text(hlm::test::report_path(r.output));
  EXPECT_NE(report.find("| holdout | backbone=full | model | macro_f1 | "), std::string::npos)
      << report;
}
