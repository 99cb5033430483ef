// The three clinical workflows end to end at their CI size through the hlm binary, on the
// PhysioNet data in ../shared/data (skipped when absent): mitdb-aami.yaml (record-wise
// cross-validation inside DS1), af-rhythm.yaml (AF on ltafdb rhythm tokens, scored on ltafdb
// test records and MIT-BIH), challenge2017.yaml (N/A/O/~ by record, 5 folds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "eval/score_table.h"
#include "hlm/dsp/p_wave_reference.h"
#include "support/finetune_cv.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = HLM_TEST_DATA_DIR;

// A workflow run at vars.size=ci with more overrides, in a scratch runs folder that lives as
// long as this object: what hlm printed, and any stage's results.json, manifest and the report.
class CiRun {
 public:
  CiRun(const std::string& workflow, const std::string& scratch, const std::string& overrides = "")
      : runs_(scratch) {
    ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
    result_ = hlm::test::run_hlm("run " + workflow + " vars.size=ci " + overrides + " --runs-dir " +
                                 runs_.path.string());
    EXPECT_EQ(result_.exit_code, 0) << result_.output;
  }
  bool ok() const { return result_.exit_code == 0; }
  const std::string& output() const { return result_.output; }
  std::string report() const {
    return hlm::test::read_text(hlm::test::report_path(result_.output));
  }
  // The stage's results.json, or an empty object where it wrote none.
  nlohmann::json results(const std::string& stage = "evaluate") const {
    std::ifstream in(hlm::test::run_dir_of(result_.output) / stage / "results.json");
    return in ? nlohmann::json::parse(in) : nlohmann::json::object();
  }
  // The stage instance's manifest.json, or an empty object when the run failed.
  nlohmann::json manifest(const std::string& stage) const {
    return ok() ? hlm::test::stage_manifest(hlm::test::run_dir_of(result_.output), stage)
                : nlohmann::json::object();
  }

 private:
  hlm::test::ScratchDir runs_;
  hlm::test::CommandResult result_;
};

void expect_interval_covers(const nlohmann::json& d, const std::string& key) {
  const double value = d[key];
  EXPECT_LE(d["ci95"][key][0].get<double>(), value + 1e-12) << key;
  EXPECT_GE(d["ci95"][key][1].get<double>(), value - 1e-12) << key;
}

// Why a mitdb-aami test cannot run here: its MIT-BIH record `probe` is absent, or the ltafdb
// and ltdb annotations its trees also learn from (vars.annotated_beats); empty when all are here.
std::string mitdb_aami_absent(const std::string& probe) {
  for (const std::string& file :
       {"/mitdb/" + probe + ".dat", std::string("/ltafdb/00.atr"), std::string("/ltdb/14046.atr")})
    if (!fs::exists(kData + file)) return kData + file + " is absent";
  return "";
}

}  // namespace

TEST(ClinicalWorkflows, MitdbAamiCrossValidatesInsideDs1) {
  if (const std::string why = mitdb_aami_absent("230"); !why.empty()) GTEST_SKIP() << why;
  const CiRun run("workflows/mitdb-aami.yaml", "hlm_mitdb_aami");
  const std::string report = run.report();
  const auto results = run.results();
  // The published figures stand beside the run's, with how the protocols differ.
  EXPECT_NE(report.find("### Published results"), std::string::npos) << report;
  EXPECT_NE(report.find("| Llamedo & Martinez 2011 | DS1->DS2"), std::string::npos) << report;
  // ... and so does always answering the majority class on this run's items.
  EXPECT_NE(report.find("| always N (the majority baseline) | this run's items of holdout "
                        "[backbone=full] | "
                        "accuracy "),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("This run: record-wise 11-fold cross-validation inside "
                        "vars.train_records"),
            std::string::npos);
  // The codebook and pretraining saw every fold's records, unlabelled: the report says so.
  EXPECT_NE(report.find("(transductive inside DS1)"), std::string::npos);
  const auto& d = results["datasets"]["holdout [backbone=full]"];
  EXPECT_EQ(d["records"], 22);  // every DS1 record, each scored once
  EXPECT_GT(d["items"].get<int64_t>(), 45000);
  for (const char* c : {"S", "V"})
    for (const char* key : {"se", "ppv", "se_ci95", "ppv_ci95"})
      EXPECT_TRUE(d["classes"][c].contains(key)) << c << " " << key;
  // The same classes as EC57 counts them, as the literature reports them.
  for (const char* c : {"S", "V"})
    for (const char* key : {"se", "ppv", "fpr", "se_ci95", "ppv_ci95"})
      EXPECT_TRUE(d["ec57"][c].contains(key)) << c << " " << key;
  EXPECT_NE(report.find("V and S as AAMI EC57 counts them"), std::string::npos);
  // The Se the run's own curve reaches at each published method's +P, S and V as EC57 counts
  // them (vars.published_points: two papers, S and V each).
  ASSERT_EQ(d["at_published_points"].size(), 4u) << d.dump().substr(0, 300);
  int reached = 0;
  for (const auto& point : d["at_published_points"]) {
    EXPECT_EQ(point["count"], "EC57");
    EXPECT_EQ(point["held"], "ppv");
    if (!point["reached"].get<bool>()) continue;
    ++reached;
    EXPECT_GE(point["ppv"].get<double>(), point["published_held"].get<double>());
    EXPECT_GT(point["se"].get<double>(), 0.0);
    EXPECT_GT(point["factor"].get<double>(), 0.0);
    EXPECT_GT(point["accuracy"].get<double>(), 0.5);
  }
  EXPECT_GE(reached, 2) << d["at_published_points"].dump();
  EXPECT_NE(report.find("| Zhang et al. 2014 | S | 0.791 | +P 0.360 | "), std::string::npos);
  expect_interval_covers(d, "accuracy");
  EXPECT_EQ(d["majority_class"], "N");
  // Boosted trees beside the beat head, each part scored alone.
  for (const char* part : {"head", "trees"})
    EXPECT_TRUE(d.contains("parts") && d.at("parts").contains(part) &&
                d.at("parts").at(part).contains("macro_f1"))
        << part << ": " << d.dump().substr(0, 300);
  // vars.trees_weight (1 by default): the trees alone make the prediction, the share fixed
  // and not fit on the validation records.
  // not const: a missing key reads null
  auto tuned = run.manifest("finetune[backbone=full,fold=0,seed=0]");
  EXPECT_EQ(tuned["results"]["trees"]["weight"], 1.0) << tuned["results"].dump().substr(0, 300);
  EXPECT_EQ(tuned["results"]["trees"]["weight_from"], "trees_weight");
  // vars.annotated_beats: ltafdb's and ltdb's annotated beats join the trees' rows with the
  // nine RR columns the trees read; each class drawn down to about 20000 beats.
  const auto& annotated = tuned["results"]["trees"]["annotated_beats"];
  EXPECT_EQ(annotated["records"], 91) << tuned["results"]["trees"].dump().substr(0, 300);
  EXPECT_GT(annotated["beats"].get<int64_t>(), 9'000'000);
  EXPECT_LT(annotated["rows"].get<int64_t>(), 100'000);
  EXPECT_EQ(annotated["columns"].size(), 9u);
  EXPECT_EQ(annotated["share"], 0.5);
  EXPECT_EQ(d["macro_f1"], d["parts"]["trees"]["macro_f1"]);
  EXPECT_EQ(d["classes"]["S"]["se"], d["parts"]["trees"]["classes"]["S"]["se"]);
  // The trees also read each beat's waveform against its template on both leads (beat-vq
  // shape_descriptors, shape_descriptor_leads: 2), named in the report.
  EXPECT_NE(report.find("boosted trees (XGBoost) over each beat's inputs, 64 descriptors of the "
                        "token store (beat minus template at -0.250 s / template QRS ... beat "
                        "minus template at +0.400 s / template QRS, lead 2)"),
            std::string::npos)
      << report;
  // The head from random weights beside the pretrained one, on the same beats and paired
  // (vars.backbones): the model itself is the trees on both sides, and so are the trees, so
  // the head alone is the one row.
  ASSERT_EQ(results["comparisons"].size(), 1u) << results["comparisons"].dump();
  const auto& head_row = results["comparisons"][0];
  EXPECT_EQ(head_row["scored"], "head alone");
  EXPECT_EQ(head_row["records"], 22);
  EXPECT_EQ(head_row["pretrained_value"], d["parts"]["head"]["macro_f1"]);
  EXPECT_EQ(head_row["scratch_value"],
            results["datasets"]["holdout [backbone=scratch]"]["parts"]["head"]["macro_f1"]);
  EXPECT_LE(head_row["ci95"][0].get<double>(), head_row["difference"].get<double>() + 1e-12);
  EXPECT_GE(head_row["ci95"][1].get<double>(), head_row["difference"].get<double>() - 1e-12);
  EXPECT_NE(report.find("| holdout | backbone=full | head alone | macro_f1 | "), std::string::npos)
      << report;
  EXPECT_NE(report.find("so not shown: holdout [backbone=full]: blend; holdout [backbone=full]: "
                        "trees alone."),
            std::string::npos);
  // The four side by side on the same records, each against the trees, paired by record: the
  // head's row is the parts' own head-minus-trees, and the blend is the trees here.
  const auto& lm = results["language_model"]["holdout [backbone=full]"];
  EXPECT_EQ(lm["records"], 22) << lm;
  const auto& rows = lm["rows"];
  for (const char* row :
       {"head, pretrained backbone", "head, random weights", "trees", "blend (pretrained)"})
    EXPECT_TRUE(rows.contains(row)) << row;
  EXPECT_EQ(rows["head, pretrained backbone"]["value"], d["parts"]["head"]["macro_f1"]);
  EXPECT_EQ(rows["head, random weights"]["value"], head_row["scratch_value"]);
  EXPECT_EQ(rows["trees"]["value"], d["parts"]["trees"]["macro_f1"]);
  EXPECT_EQ(rows["head, pretrained backbone"]["minus_trees"]["value"],
            d["parts_difference"]["value"]);
  EXPECT_EQ(rows["head, pretrained backbone"]["minus_trees"]["ci95"],
            d["parts_difference"]["ci95"]);
  EXPECT_EQ(rows["blend (pretrained)"]["minus_trees"]["value"], 0.0);
  EXPECT_FALSE(rows["trees"].contains("minus_trees"));
  EXPECT_NE(report.find("#### holdout [backbone=full]: the heart language model beside the trees"),
            std::string::npos);
  // DS2 is not in ../shared/data: the DS1->DS2 stages are left out, and the report says why.
  EXPECT_NE(report.find("| tokenize_test | | left out: when.files_exist: none of its 22 file(s)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("| evaluate_test | | left out: needs stage 'finetune_all'"),
            std::string::npos);
}

// A published point of a class the model does not have, one holding both +P and specificity
// or neither, or one naming a dataset the stage does not score, is refused before anything is
// scored, naming the stage and the workflow file; the fine-tunes stay for the next run.
TEST(ClinicalWorkflows, MitdbAamiRefusesAPublishedPointOfAnotherClass) {
  if (const std::string why = mitdb_aami_absent("230"); !why.empty()) GTEST_SKIP() << why;
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  hlm::test::ScratchDir runs("hlm_mitdb_aami_points");
  // One fold at CI size, with the given published points; later runs reuse its fine-tunes.
  const auto run_with_points = [&runs](const std::string& points) {
    return hlm::test::run_hlm(
        "run workflows/mitdb-aami.yaml vars.size=ci 'vars.fold=[0]' "
        "'vars.published_points=" +
        points + "' --runs-dir " + runs.path.string());
  };
  const auto r = run_with_points("[{source: Someone 2020, class: A, se: 0.9, ppv: 0.5}]");
  EXPECT_NE(r.output.find("mitdb-aami.yaml"), std::string::npos) << r.output;
  hlm::test::expect_refused(r, "stage 'evaluate': published_points names class 'A' (Someone 2020)");
  bool kept = false;
  for (const auto& entry : fs::recursive_directory_iterator(runs.path))
    kept = kept || entry.path().filename() == "classifier.head";
  EXPECT_TRUE(kept) << "the fine-tuned classifiers were lost";
  // Rows with both +P and specificity, or neither, are refused too, and one naming a dataset
  // the stage does not score.
  for (const auto& [row, message] : std::map<std::string, std::string>{
           {"{source: Someone 2020, class: S, se: 0.9, ppv: 0.5, specificity: 0.9}",
            "exactly one of ppv and specificity in (0, 1]"},
           {"{source: Someone 2020, class: S, se: 0.9}",
            "exactly one of ppv and specificity in (0, 1]"},
           {"{source: Someone 2020, class: S, se: 0.9, ppv: 0.5, dataset: DS2}",
            "names dataset \"DS2\", but the stage scores [\"holdout\"]"}}) {
    const auto refused = run_with_points("[" + row + "]");
    hlm::test::expect_refused(refused, message);
  }
  // Annotated beats from a folder that is not there, or a record whose files are not there, are
  // named before any fine-tuning.
  for (const auto& [sources, message] : std::map<std::string, std::string>{
           {"[{dir: " + kData + "/no-such-folder}]", kData + "/no-such-folder is not a folder"},
           {"[{dir: " + kData + "/ltdb, records: [nope]}]", kData + "/ltdb/nope.hea is missing"}}) {
    const auto refused = hlm::test::run_hlm(
        "run workflows/mitdb-aami.yaml vars.size=ci 'vars.fold=[0]' 'vars.annotated_beats=" +
        sources + "' --runs-dir " + runs.path.string());
    hlm::test::expect_refused(refused, message);
    EXPECT_EQ(refused.output.find("boosting trees"), std::string::npos) << refused.output;
  }
}

// The header's command that adds beat-vq's p_wave_descriptors: the trees read the P wave on both
// leads and the waveform minus its template, and not the waveform itself.
TEST(ClinicalWorkflows, MitdbAamiTreesReadThePWaveWhenTheHeaderSaysSo) {
  if (const std::string why = mitdb_aami_absent("230"); !why.empty()) GTEST_SKIP() << why;
  const CiRun run("workflows/mitdb-aami.yaml", "hlm_mitdb_aami_p_wave",
                  "'vars.fold=[0]' 'vars.backbones=[full]' 'vars.annotated_beats=[]' "
                  "vars.tokenizer.p_wave_descriptors=true 'vars.trees_descriptor_prefix=\"\"' "
                  "'vars.trees_leave_out=[beat at]'");
  const auto trees = run.manifest("finetune[backbone=full,fold=0,seed=0]")["results"]["trees"];
  ASSERT_TRUE(trees.is_object()) << run.output();
  const auto columns = trees["statistics"].get<std::vector<std::string>>();
  const auto has = [&columns](const std::string& prefix) {
    return std::count_if(columns.begin(), columns.end(),
                         [&](const std::string& c) { return c.rfind(prefix, 0) == 0; });
  };
  EXPECT_EQ(has(hlm::late_p_wave_descriptor_name(0)), 2) << trees["statistics"].dump();
  EXPECT_GT(has("beat minus template"), 0);
  EXPECT_EQ(has("beat at"), 0);
  // The report counts the store descriptors the trees read, not those trees_leave_out drops.
  const auto store = trees["store_descriptor_names"].get<std::vector<std::string>>();
  const auto read = std::count_if(store.begin(), store.end(), [&](const std::string& name) {
    return std::find(columns.begin(), columns.end(), name) != columns.end();
  });
  EXPECT_LT(read, static_cast<std::ptrdiff_t>(store.size()));
  EXPECT_NE(run.report().find("each beat's inputs, " + std::to_string(read) +
                              " descriptors of the token store ("),
            std::string::npos)
      << run.report();
}

// The inter-patient step runs when the test records are in the folder: here the paced records
// 102 and 104 stand in for DS2 (no patient of DS1 among them).
TEST(ClinicalWorkflows, MitdbAamiScoresTheTestRecordsWithAModelOfAllTrainingRecords) {
  if (const std::string why = mitdb_aami_absent("104"); !why.empty()) GTEST_SKIP() << why;
  const CiRun run("workflows/mitdb-aami.yaml", "hlm_mitdb_aami_test",
                  "'vars.test_records=[\"102\", \"104\"]' 'vars.fold=[0]' 'vars.backbones=[full]'");
  const std::string report = run.report();
  const auto results = run.results("evaluate_test");
  const auto& d = results["datasets"]["test records [backbone=full]"];
  ASSERT_TRUE(d.is_object()) << results.dump().substr(0, 400);
  EXPECT_EQ(d["records"], 2);
  EXPECT_GT(d["items"].get<int64_t>(), 4000);  // 102 and 104 hold 2187 + 2229 beats
  EXPECT_NE(report.find("This run: de Chazal's inter-patient protocol"), std::string::npos);
  EXPECT_EQ(report.find("left out"), std::string::npos) << report;
}

// vars.pretrain_on=transductive: the codebook and pretraining see the test signals too, and
// the test report says so; fine-tuning still never sees a test record.
TEST(ClinicalWorkflows, MitdbAamiTransductiveSwitchPretrainsOnTestSignalsAndSaysSo) {
  if (const std::string why = mitdb_aami_absent("104"); !why.empty()) GTEST_SKIP() << why;
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  hlm::test::ScratchDir runs("hlm_mitdb_aami_transductive");
  const auto r = hlm::test::run_hlm(
      "run workflows/mitdb-aami.yaml vars.size=ci 'vars.test_records=[\"102\", \"104\"]' "
      "'vars.fold=[0]' vars.pretrain_on=transductive 'vars.backbones=[full]' --runs-dir " +
      runs.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run_dir = hlm::test::run_dir_of(r.output);
  EXPECT_EQ(hlm::test::stage_manifest(run_dir, "tokenize")["results"]["records"], 24);
  const auto tuned =
      hlm::test::stage_manifest(run_dir, "finetune_all[backbone=full,seed=0]")["results"];
  EXPECT_EQ(tuned["train_records"].size(), 20u);  // DS1 less its 2 validation records
  for (const auto& name : tuned["train_records"]) {
    EXPECT_NE(name, "102");
    EXPECT_NE(name, "104");
  }
  const std::string report = hlm::test::read_text(hlm::test::report_path(r.output));
  EXPECT_NE(report.find("This run: TRANSDUCTIVE"), std::string::npos) << report;
  // The cross-validation's own note says its pretraining saw the test records too.
  EXPECT_NE(report.find("and on the test records (vars.pretrain_on=transductive)"),
            std::string::npos)
      << report;
}

TEST(ClinicalWorkflows, MitdbAamiStopsBeforeAnyWorkWhenOnlySomeTestRecordsArePresent) {
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  const auto r = hlm::test::run_hlm(
      "run workflows/mitdb-aami.yaml vars.size=ci 'vars.test_records=[\"102\", \"100\"]' "
      "--dry-run");
  hlm::test::expect_refused(r, "; 1 missing from " + kData + "/mitdb: 100.hea");
}

// Two ltafdb records outside the CI ones stand in for afdb (vars.afdb_dir): beats from their
// .qrs files, rhythm from their .atr files, as afdb keeps them.
TEST(ClinicalWorkflows, AfRhythmScoresLtafdbTestRecordsMitdbAndAfdb) {
  if (!fs::exists(kData + "/ltafdb/00.atr")) GTEST_SKIP() << kData << "/ltafdb is absent";
  const CiRun run("workflows/af-rhythm.yaml", "hlm_af_rhythm",
                  "vars.afdb_dir=" + kData +
                      "/ltafdb 'vars.afdb_records=[\"100\",\"101\"]' 'vars.backbones=[full]'");
  ASSERT_TRUE(run.ok());
  const auto results = run.results();
  for (const std::string name :
       {"ltafdb test records [backbone=full, segment_beats=41]",
        "ltafdb test records [backbone=full, segment_beats=128]",
        "mitdb [backbone=full, segment_beats=41]", "mitdb [backbone=full, segment_beats=128]"}) {
    const auto& d = results["datasets"][name];
    ASSERT_TRUE(d.is_object()) << name << " missing: " << results.dump().substr(0, 400);
    EXPECT_TRUE(d.contains("auroc")) << name;
    EXPECT_GT(d["classes"]["AF"]["items"].get<int64_t>(), 0) << name;
    // The AF detectors' published points, Se at their specificity, one against the rest: the
    // two afdb ones beside the ltafdb records, Zhou's mitdb one beside MIT-BIH.
    ASSERT_EQ(d["at_published_points"].size(), name.rfind("ltafdb", 0) == 0 ? 2u : 1u) << name;
    // And by beat, the unit those detectors count: more items, the same points, each beat from
    // the segments every quarter segment (41 beats: every 11; 128: every 32) that hold it.
    EXPECT_GT(d["by_beat"]["items"].get<int64_t>(), d["items"].get<int64_t>()) << name;
    EXPECT_EQ(d["by_beat"]["segment_stride"], name.find("=41]") != std::string::npos ? 11 : 32)
        << name;
    EXPECT_EQ(d["by_beat"]["at_published_points"].size(), d["at_published_points"].size()) << name;
    for (const auto& point : d["at_published_points"]) {
      EXPECT_EQ(point["held"], "specificity");
      EXPECT_EQ(point["count"], "one against the rest");
      if (point["reached"].get<bool>()) {
        EXPECT_GE(point["specificity"].get<double>(), point["published_held"].get<double>());
      }
    }
  }
  EXPECT_EQ(results["datasets"]["mitdb [backbone=full, segment_beats=41]"]["records"],
            2);  // 201 and 203

  // The second model, RR intervals alone, scores all three; afdb beside Zhou and Petrenas.
  const auto rr = run.results("evaluate_rr");
  for (const std::string beats : {"41", "128"}) {
    const auto& afdb = rr["datasets"]["afdb [backbone=full, segment_beats=" + beats + "]"];
    ASSERT_TRUE(afdb.is_object()) << beats << " missing: " << rr.dump().substr(0, 400);
    EXPECT_EQ(afdb["records"], 2) << beats;
    // Labelled from the .atr rhythm: both records hold AF and non-AF stretches.
    EXPECT_GT(afdb["classes"]["AF"]["items"].get<int64_t>(), 0) << beats;
    EXPECT_GT(afdb["classes"]["non-AF"]["items"].get<int64_t>(), 0) << beats;
    EXPECT_EQ(afdb["at_published_points"].size(), 2u) << beats;
    // By beat too, where the trees blend with the head.
    EXPECT_GT(afdb["by_beat"]["items"].get<int64_t>(), afdb["items"].get<int64_t>()) << beats;
    EXPECT_EQ(afdb["by_beat"]["at_published_points"].size(), 2u) << beats;
    EXPECT_EQ(rr["datasets"]["ltafdb test records [backbone=full, segment_beats=" + beats + "]"]
                ["at_published_points"]
                    .size(),
              2u);
    EXPECT_EQ(
        rr["datasets"]["mitdb [backbone=full, segment_beats=" + beats + "]"]["at_published_points"]
            .size(),
        1u);
  }
}

// Another copy of ltafdb can name its test records instead of a fold of a shuffle.
TEST(ClinicalWorkflows, AfRhythmHoldsOutTheLtafdbRecordsItsVariableNames) {
  if (!fs::exists(kData + "/ltafdb/00.atr")) GTEST_SKIP() << kData << "/ltafdb is absent";
  const CiRun run("workflows/af-rhythm.yaml", "hlm_af_rhythm_named",
                  "vars.folds=0 'vars.ltafdb_test_records=[\"03\", \"07\"]' "
                  "'vars.sizes.ci.segment_beats=[41]' 'vars.backbones=[full]'");
  ASSERT_TRUE(run.ok());
  const auto tuned = run.manifest("finetune[backbone=full,segment_beats=41]")["results"];
  EXPECT_EQ(tuned["holdout_records"].get<std::set<std::string>>(),
            (std::set<std::string>{"03", "07"}));
  for (const auto& name : tuned["train_records"]) {
    EXPECT_NE(name, "03");
    EXPECT_NE(name, "07");
  }
  EXPECT_FALSE(tuned.contains("fold"));
  EXPECT_EQ(
      run.results()["datasets"]["ltafdb test records [backbone=full, segment_beats=41]"]["records"],
      2);
}

TEST(ClinicalWorkflows, AfRhythmLeavesAfdbOutWithoutItsFolderAndRefusesHalfOfIt) {
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  auto r = hlm::test::run_hlm("run workflows/af-rhythm.yaml vars.size=ci --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* stage : {"tokenize_rr", "tokenize_afdb", "pretrain_rr", "evaluate_rr"})
    EXPECT_NE(r.output.find(std::string("left out: ") + stage), std::string::npos) << r.output;
  // A folder holding only some of the records listed: refused before any work, naming them.
  r = hlm::test::run_hlm("run workflows/af-rhythm.yaml vars.size=ci vars.afdb_dir=" + kData +
                         "/ltafdb 'vars.afdb_records=[\"100\",\"no-such-record\"]' --dry-run");
  hlm::test::expect_refused(
      r, "2 missing from " + kData + "/ltafdb: no-such-record.qrs, no-such-record.atr");
}

TEST(ClinicalWorkflows, Challenge2017ReportsTheCrossValidatedChallengeScore) {
  if (!fs::exists(kData + "/challenge2017/REFERENCE-v3.csv"))
    GTEST_SKIP() << kData << "/challenge2017 is absent";
  const CiRun run("workflows/challenge2017.yaml", "hlm_challenge2017");
  const std::string report = run.report();
  // not const: a missing key reads as null
  auto tuned = run.manifest("finetune[backbone=full,fold=0,seed=0]");
  const auto results = run.results();
  const auto& d = results["datasets"]["holdout [backbone=full]"];
  EXPECT_EQ(d["records"], 40);  // one item per record: its segments pooled
  EXPECT_EQ(d["items"], 40);
  const double score = d["cinc2017_score"];
  EXPECT_GE(score, 0.0);
  EXPECT_LE(score, 1.0);
  expect_interval_covers(d, "cinc2017_score");
  // Always N scores its own F1 of N over three: A's and O's are 0.
  ASSERT_EQ(d["majority_class"], "N");
  const double n_share = d["classes"]["N"]["items"].get<double>() / 40.0;
  EXPECT_NEAR(d["majority_baseline_cinc2017_score"].get<double>(), 2 * n_share / (1 + n_share) / 3,
              1e-12)
      << d.dump().substr(0, 400);
  EXPECT_NE(report.find("Challenge 2017 score " +
                        hlm::eval::score_text(d["majority_baseline_cinc2017_score"].get<double>())),
            std::string::npos)
      << report;
  EXPECT_FALSE(d.contains("ec57"));  // the AAMI beat statistics, not for rhythm classes
  // Pretraining saw the scored records, unlabelled: the report says so.
  EXPECT_NE(report.find("each fold's scored records too (transductive)"), std::string::npos);
  // The head's statistics, standardised over the training segments, the scaling kept for
  // evaluate: 74 descriptor means (10 of the template, the waveform and the waveform minus the
  // template at 32 points each), 9 RR statistics, the record's 6 rhythm extremes.
  const auto& head = tuned["results"]["head"];
  EXPECT_EQ(head["record_rhythm_features"], true) << tuned.dump().substr(0, 400);
  ASSERT_EQ(head["input_mean"].size(), 89u) << head.dump().substr(0, 400);
  ASSERT_EQ(head["input_scale"].size(), 89u);
  for (const auto& scale : head["input_scale"]) EXPECT_GT(scale.get<double>(), 0.0);
  EXPECT_NE(report.find("local irregularity), as the record's minimum and maximum"),
            std::string::npos);
  // Beside the head, boosted trees over each record's statistics of 16 of the same per-beat
  // inputs (9 summaries each), of its RR changes (5) and beat count, and the median of each of
  // the 64 waveform descriptors (trees_descriptors, prefix "beat"), which the nine summaries
  // leave out; evaluate blends the two and scores each alone.
  const auto& trees = tuned["results"]["trees"];
  ASSERT_TRUE(trees.is_object()) << tuned["results"].dump().substr(0, 400);
  const auto& statistics = trees["statistics"];
  ASSERT_EQ(statistics.size(), 16u * 9u + 5u + 1u + 64u) << statistics.dump().substr(0, 400);
  EXPECT_EQ(statistics[16 * 9 + 6].get<std::string>().rfind("beat at ", 0), 0u) << statistics;
  EXPECT_NE(statistics.back().get<std::string>().find(" record median"), std::string::npos);
  EXPECT_EQ(trees["store_descriptor_columns"].size(), 64u);
  EXPECT_EQ(trees["store_descriptor_columns"][0], 10);  // after the 10 template descriptors
  EXPECT_NE(report.find("and its median of 64 descriptors of the token store (beat at "),
            std::string::npos);
  EXPECT_GE(trees["rounds"].get<int>(), 1);
  EXPECT_LE(trees["rounds"].get<int>(), trees["max_rounds"].get<int>());
  EXPECT_NE(tuned["artifacts"].value("trees", std::string()).find("/trees.json"),
            std::string::npos);
  const double weight = trees["weight"];  // fit on the validation records by default
  EXPECT_TRUE(weight >= 0.0 && weight <= 1.0) << weight;
  EXPECT_EQ(trees["weight_from"], "validation records' log loss");
  for (const char* part : {"head", "trees"}) {
    const auto& alone = d["parts"][part];
    ASSERT_TRUE(alone.is_object()) << part << ": " << d.dump().substr(0, 400);
    EXPECT_GE(alone["cinc2017_score"].get<double>(), 0.0);
    EXPECT_LE(alone["cinc2017_score"].get<double>(), 1.0);
  }
  EXPECT_NE(report.find("Each part of the blend alone (cinc2017_score): head "), std::string::npos);
  // The same model from random weights (vars.backbones), paired on the same records: the
  // blend, and its head alone; not the trees, which do not read the backbone.
  std::set<std::string> compared;
  for (const auto& row : results["comparisons"]) {
    compared.insert(row["scored"].get<std::string>());
    EXPECT_EQ(row["records"], 40);
  }
  EXPECT_EQ(compared, (std::set<std::string>{"blend", "head alone"})) << results["comparisons"];
  // And the four side by side, each but the trees against the trees, paired by record.
  const auto& rows = results["language_model"]["holdout [backbone=full]"]["rows"];
  ASSERT_EQ(rows.size(), 4u) << results["language_model"];
  for (const auto& [row, r] : rows.items())
    EXPECT_EQ(r.contains("minus_trees"), row != "trees") << row;
  EXPECT_EQ(rows["blend (pretrained)"]["value"], d["cinc2017_score"]);
}

// A record too short for a segment (A04110: 10 s, 8 beats, fewer than min_segment_beats at 12)
// counts where the trees' share is fit, as evaluate scores it: every validation record is an
// item.
TEST(ClinicalWorkflows, Challenge2017FitsTheTreesShareOnEveryValidationRecordTheShortOneToo) {
  if (!fs::exists(kData + "/challenge2017/REFERENCE-v3.csv"))
    GTEST_SKIP() << kData << "/challenge2017 is absent";
  std::string records = "A04110";
  for (int i = 1; i <= 40; ++i)
    records += ",A000" + std::string(i < 10 ? "0" : "") + std::to_string(i);
  const CiRun run("workflows/challenge2017.yaml", "hlm_challenge2017_short",
                  "'vars.fold=[0]' 'vars.sizes.ci.records=[" + records +
                      "]' finetune.validation_records=30 'vars.backbones=[full]'"
                      " finetune.min_segment_beats=12");
  const std::string& output = run.output();
  // not const: a missing key reads as null
  auto tuned = run.manifest("finetune[backbone=full,fold=0,seed=0]");
  // A04110 is the short one: its beats are fewer than min_segment_beats in this store too.
  EXPECT_NE(output.find("too short for a segment (A04110"), std::string::npos) << output;
  const auto& results = tuned["results"];
  const auto validation = results["validation_records"].get<std::vector<std::string>>();
  ASSERT_EQ(validation.size(), 30u) << results.dump().substr(0, 400);
  ASSERT_NE(std::find(validation.begin(), validation.end(), "A04110"), validation.end())
      << "the draw left A04110 out of the validation records: nothing tested";
  EXPECT_EQ(results["trees"]["weight_from"], "validation records' log loss");
  EXPECT_EQ(results["trees"]["weight_items"], 30);
}

// trees_weight fixes the trees' share: at 1 the blend is the trees alone, at 0 the head
// alone. trees_class_weights and trees_refit change the trees themselves (their trees.json)
// and are recorded;
// by default they take the head's class_weights (sqrt). Tree keys that cannot act are refused
// before any training.
TEST(ClinicalWorkflows, Challenge2017TreesWeightActsAndTreeKeysThatCannotActAreRefused) {
  if (!fs::exists(kData + "/challenge2017/REFERENCE-v3.csv"))
    GTEST_SKIP() << kData << "/challenge2017 is absent";
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  struct Case {
    std::string overrides;
    double weight;
    const char* part;
    const char* class_weights;
    bool refit = false;
  };
  hlm::test::ScratchDir tuned_runs("hlm_challenge2017_trees");  // later runs reuse pretraining
  std::map<std::string, std::string> trees_of;  // trees.json by the case's overrides
  std::map<std::string, int> rounds_of;
  const std::string plain = "finetune.trees_weight=1 vars.trees_refit=false";
  const std::string inverse =
      "finetune.trees_weight=1 finetune.trees_class_weights=inverse vars.trees_refit=false";
  const std::string refit = "finetune.trees_weight=1";  // the workflow refits by default
  for (const Case& c : {Case{plain, 1, "trees", "sqrt"}, Case{inverse, 1, "trees", "inverse"},
                        Case{refit, 1, "trees", "sqrt", true},
                        Case{"finetune.trees_weight=0", 0, "head", "sqrt", true}}) {
    // 300 rounds asked (the ci size asks 20, all of which its validation record keeps), so
    // early stopping cuts back and keeping its rounds in the refit is seen.
    const auto r = hlm::test::run_hlm(
        "run workflows/challenge2017.yaml vars.size=ci 'vars.fold=[0]' 'vars.backbones=[full]' "
        "vars.sizes.ci.tree_rounds=300 " +
        c.overrides + " --runs-dir " + tuned_runs.path.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const fs::path run_dir = hlm::test::run_dir_of(r.output);
    const std::string stage = "finetune[backbone=full,fold=0,seed=0]";
    const auto trees = hlm::test::stage_manifest(run_dir, stage)["results"]["trees"];
    EXPECT_EQ(trees["weight"], c.weight) << c.overrides;
    EXPECT_EQ(trees["weight_from"], "trees_weight");
    EXPECT_EQ(trees["class_weights"], c.class_weights) << c.overrides;
    EXPECT_EQ(trees["refit"], c.refit) << c.overrides;
    trees_of[c.overrides] = hlm::test::read_text(run_dir / stage / "trees.json");
    EXPECT_EQ(trees["max_rounds"], 300) << c.overrides;
    rounds_of[c.overrides] = trees["rounds"];
    const auto results =
        nlohmann::json::parse(hlm::test::read_text(run_dir / "evaluate" / "results.json"));
    const auto& d = results["datasets"]["holdout [backbone=full]"];
    EXPECT_EQ(d["cinc2017_score"], d["parts"][c.part]["cinc2017_score"]) << d.dump().substr(0, 400);
  }
  EXPECT_FALSE(trees_of[plain].empty());
  EXPECT_NE(trees_of[plain], trees_of[inverse]);
  // Refit: other trees (one more record), as many rounds as the validation record kept.
  EXPECT_NE(trees_of[plain], trees_of[refit]);
  ASSERT_LT(rounds_of[plain], 300) << "early stopping kept every round: nothing to keep";
  EXPECT_EQ(rounds_of[plain], rounds_of[refit]);
  hlm::test::ScratchDir runs("hlm_challenge2017_trees_refused");
  const std::string base =
      "run workflows/challenge2017.yaml vars.size=ci 'vars.fold=[0]' 'vars.backbones=[full]' "
      "--runs-dir " +
      runs.path.string() + " ";
  const auto no_validation =
      hlm::test::run_hlm(base + "finetune.validation_records=0 vars.trees_refit=false");
  hlm::test::expect_refused(no_validation, "validation_records is 0");
  EXPECT_EQ(no_validation.output.find("boosting trees"), std::string::npos);
  const auto refit_without_validation =
      hlm::test::run_hlm(base +
                         "finetune.validation_records=0 finetune.trees_weight=1 "
                         "finetune.trees_refit=true");
  hlm::test::expect_refused(refit_without_validation, "trees_refit boosts the trees again");
  EXPECT_EQ(refit_without_validation.output.find("boosting trees"), std::string::npos);
  const auto no_trees =
      hlm::test::run_hlm(base + "finetune.trees=0 finetune.trees_class_weights=inverse");
  hlm::test::expect_refused(no_trees, "trees_class_weights weighs the classes");
  const auto no_inputs =
      hlm::test::run_hlm(base +
                         "finetune.rr_features=false finetune.record_rhythm_features=false "
                         "finetune.descriptors=false finetune.trees_descriptors=false");
  hlm::test::expect_refused(no_inputs, "trees summarise the head's per-beat inputs");
  // Annotated beats are rows of beat trees: refused for a record's trees before any training.
  const auto annotated_records =
      hlm::test::run_hlm(base + "'finetune.trees_annotated_beats=[{dir: " + kData + "/ltafdb}]'");
  hlm::test::expect_refused(annotated_records, "to the beat trees of task beats; here task=record");
  EXPECT_EQ(annotated_records.output.find("fine-tuning"), std::string::npos);
}

// record_statistics: the record head also reads the whole record's row its trees read (the nine
// summaries of each RR and rhythm input, the RR changes, the beat count, each descriptor's
// median), so it trains to other losses, is rebuilt by evaluate and is named in the report;
// refused for another task and with nothing to summarise, before any fine-tuning.
TEST(ClinicalWorkflows, Challenge2017RecordStatisticsReachTheHeadAndAreRefusedElsewhere) {
  if (!fs::exists(kData + "/challenge2017/REFERENCE-v3.csv"))
    GTEST_SKIP() << kData << "/challenge2017 is absent";
  ::setenv("HLM_DATA_DIR", kData.c_str(), 1);
  hlm::test::ScratchDir runs("hlm_challenge2017_record_statistics");  // the second reuses the first
  const std::string base =
      "run workflows/challenge2017.yaml vars.size=ci 'vars.fold=[0]' 'vars.backbones=[full]' "
      "--runs-dir " +
      runs.path.string() + " ";
  const auto plain = hlm::test::run_hlm(base);
  const auto with = hlm::test::run_hlm(base + "finetune.record_statistics=true");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_EQ(with.exit_code, 0) << with.output;
  const std::string stage = "finetune[backbone=full,fold=0,seed=0]";
  const fs::path run_dir = hlm::test::run_dir_of(with.output);
  const auto without_results =
      hlm::test::stage_manifest(hlm::test::run_dir_of(plain.output), stage)["results"];
  const auto with_results = hlm::test::stage_manifest(run_dir, stage)["results"];
  EXPECT_EQ(with_results["head"]["record_statistics"], true);
  // RR (3) and rhythm (3) inputs by nine summaries, 4 RR change quantiles and their mean, the
  // beat count, and one median per descriptor.
  const size_t descriptors = with_results["head"]["descriptor_mean"].size();
  EXPECT_EQ(with_results["head"]["input_mean"].size(),
            without_results["head"]["input_mean"].size() + 6 * 9 + 5 + 1 + descriptors);
  EXPECT_NE(with_results["losses"], without_results["losses"]);
  const auto results =
      nlohmann::json::parse(hlm::test::read_text(run_dir / "evaluate" / "results.json"));
  EXPECT_GT(results["datasets"]["holdout [backbone=full]"]["items"].get<int64_t>(), 0);
  EXPECT_NE(hlm::test::read_text(run_dir / "report.md").find("the record's statistics"),
            std::string::npos);
  // With descriptor_prefix, the medians are of the store columns the head reads (before, of
  // the first columns of the store, and the head's own got nine summaries beside them).
  const std::string prefix = "'finetune.descriptor_prefix=beat minus template' ";
  const auto plain_prefix = hlm::test::run_hlm(base + prefix);
  const auto with_prefix = hlm::test::run_hlm(base + prefix + "finetune.record_statistics=true");
  ASSERT_EQ(with_prefix.exit_code, 0) << with_prefix.output;
  const auto chosen =
      hlm::test::stage_manifest(hlm::test::run_dir_of(with_prefix.output), stage)["results"];
  const size_t read = chosen["head"]["descriptor_mean"].size();
  EXPECT_LT(read, descriptors);
  EXPECT_EQ(chosen["head"]["input_mean"].size(),
            hlm::test::stage_manifest(hlm::test::run_dir_of(plain_prefix.output),
                                      stage)["results"]["head"]["input_mean"]
                    .size() +
                6 * 9 + 5 + 1 + read);
  const auto nothing =
      hlm::test::run_hlm(base +
                         "finetune.record_statistics=true finetune.rr_features=false "
                         "finetune.record_rhythm_features=false finetune.descriptors=false");
  hlm::test::expect_refused(nothing, "record_statistics summarise the per-beat inputs");
  EXPECT_EQ(nothing.output.find("fine-tuning"), std::string::npos);
  hlm::test::ScratchDir af_runs("hlm_af_record_statistics");
  const auto af = hlm::test::run_hlm(
      "run tests/fixtures/af_segments.yaml 'finetune.matrix.segment_beats=[41]' "
      "finetune.record_statistics=true --runs-dir " +
      af_runs.path.string());
  hlm::test::expect_refused(af, "which only task record reads (here task is af)");
}

// vars.test_dir: a model fine-tuned on all of train_dir scores another folder's records, with
// that folder's own labels file. Here 20 records outside the CI training set, copied.
TEST(ClinicalWorkflows, Challenge2017ScoresTheRecordsOfTestDirWithItsOwnLabels) {
  if (!fs::exists(kData + "/challenge2017/REFERENCE-v3.csv"))
    GTEST_SKIP() << kData << "/challenge2017 is absent";
  hlm::test::ScratchDir test_dir("hlm_challenge2017_test_dir");
  std::ifstream labels(kData + "/challenge2017/REFERENCE-v3.csv");
  std::ofstream own(test_dir.path / "REFERENCE-v3.csv");
  std::string line;
  int copied = 0;
  while (std::getline(labels, line) && copied < 20) {
    const std::string name = line.substr(0, line.find(','));
    if (name < "A05001") continue;
    for (const char* ext : {".hea", ".mat"})
      fs::copy_file(kData + "/challenge2017/" + name + ext, test_dir.path / (name + ext));
    own << line << "\n";
    ++copied;
  }
  own.close();
  const CiRun run(
      "workflows/challenge2017.yaml", "hlm_challenge2017_test",
      "vars.test_dir=" + test_dir.path.string() + " 'vars.fold=[0]' 'vars.backbones=[full]'");
  const auto results = run.results("evaluate_test");
  const auto& d = results["datasets"]["test_dir [backbone=full]"];
  ASSERT_TRUE(d.is_object()) << results.dump().substr(0, 400);
  EXPECT_EQ(d["records"], 20);
  EXPECT_EQ(d["items"], 20);
  EXPECT_TRUE(d.contains("cinc2017_score"));
  EXPECT_TRUE(d["parts"].contains("trees")) << d.dump().substr(0, 400);
}
