// The three clinical workflows end to end at their CI size through the hlm binary, on the
// PhysioNet data in ../shared/data (skipped when absent): mitdb-aami.yaml (record-wise
// cross-validation inside DS1), af-rhythm.yaml (AF on ltafdb rhythm tokens, scored on ltafdb
// test records and MIT-BIH), challenge2017.yaml (N/A/O/~ by record, 5 folds).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = HLM_TEST_DATA_DIR;

// Runs a workflow at vars.size=ci; returns evaluate's results.json (and the report in *report).
nlohmann::json run_ci(const std::string& workflow, const std::string& scratch,
                      std::string* report = nullptr) {
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  hlm::test::ScratchDir runs(scratch);
  const auto r =
      hlm::test::run_hlm("run " + workflow + " vars.size=ci --runs-dir " + runs.path.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (report) *report = hlm::test::read_text(hlm::test::report_path(r.output));
  std::ifstream in(hlm::test::run_dir_of(r.output) / "evaluate" / "results.json");
  if (!in) return nlohmann::json::object();
  return nlohmann::json::parse(in);
}

void expect_interval_covers(const nlohmann::json& d, const std::string& key) {
  const double value = d[key];
  EXPECT_LE(d["ci95"][key][0].get<double>(), value + 1e-12) << key;
  EXPECT_GE(d["ci95"][key][1].get<double>(), value - 1e-12) << key;
}

}  // namespace

TEST(ClinicalWorkflows, MitdbAamiCrossValidatesInsideDs1) {
  if (!fs::exists(kData + "/mitdb/230.dat")) GTEST_SKIP() << kData << "/mitdb is absent";
  std::string report;
  const auto results = run_ci("workflows/mitdb-aami.yaml", "hlm_mitdb_aami", &report);
  // The published figures stand beside the run's, with how the protocols differ.
  EXPECT_NE(report.find("### Published results"), std::string::npos) << report;
  EXPECT_NE(report.find("| Llamedo & Martinez 2011 | DS1->DS2"), std::string::npos) << report;
  EXPECT_NE(report.find("This run: record-wise 5-fold cross-validation inside DS1"),
            std::string::npos);
  const auto& d = results["datasets"]["holdout"];
  EXPECT_EQ(d["records"], 22);  // every DS1 record, each scored once
  EXPECT_GT(d["items"].get<int64_t>(), 45000);
  for (const char* c : {"S", "V"})
    for (const char* key : {"se", "ppv", "se_ci95", "ppv_ci95"})
      EXPECT_TRUE(d["classes"][c].contains(key)) << c << " " << key;
  expect_interval_covers(d, "accuracy");
  EXPECT_EQ(d["majority_class"], "N");
}

TEST(ClinicalWorkflows, AfRhythmScoresLtafdbTestRecordsAndMitdb) {
  if (!fs::exists(kData + "/ltafdb/00.atr")) GTEST_SKIP() << kData << "/ltafdb is absent";
  const auto results = run_ci("workflows/af-rhythm.yaml", "hlm_af_rhythm");
  for (const std::string name :
       {"ltafdb test records [segment_beats=41]", "ltafdb test records [segment_beats=128]",
        "mitdb [segment_beats=41]", "mitdb [segment_beats=128]"}) {
    const auto& d = results["datasets"][name];
    ASSERT_TRUE(d.is_object()) << name << " missing: " << results.dump().substr(0, 400);
    EXPECT_TRUE(d.contains("auroc")) << name;
    EXPECT_GT(d["classes"]["AF"]["items"].get<int64_t>(), 0) << name;
  }
  EXPECT_EQ(results["datasets"]["mitdb [segment_beats=41]"]["records"], 2);  // 201 and 203
}

TEST(ClinicalWorkflows, Challenge2017ReportsTheCrossValidatedChallengeScore) {
  if (!fs::exists(kData + "/challenge2017/REFERENCE-v3.csv"))
    GTEST_SKIP() << kData << "/challenge2017 is absent";
  const auto results = run_ci("workflows/challenge2017.yaml", "hlm_challenge2017");
  const auto& d = results["datasets"]["holdout"];
  EXPECT_EQ(d["records"], 40);  // one item per record: its segments pooled
  EXPECT_EQ(d["items"], 40);
  const double score = d["cinc2017_score"];
  EXPECT_GE(score, 0.0);
  EXPECT_LE(score, 1.0);
  expect_interval_covers(d, "cinc2017_score");
}
