// finetune and evaluate through the hlm binary on small synthetic data
// (tests/fixtures/finetune_cv.yaml): record-wise cross-validation never puts a record on both
// sides and scores each record once; the backbone modes, RR and shape features and early
// stopping act; results.json and the confusion plot are written; a checkpoint or an evaluation
// store of another tokenizer or codebook is refused with an error naming both; a bert
// checkpoint fine-tunes and is evaluated as a gpt one is.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "eval/record_split.h"
#include "eval/score_table.h"
#include "hlm/dsp/rr_features.h"
#include "support/hlm_cli.h"
#include "support/wfdb_test_util.h"

namespace fs = std::filesystem;
using hlm::test::run_hlm;
using hlm::test::stage_manifest;

namespace {

std::set<std::string> as_set(const nlohmann::json& list) {
  return list.get<std::set<std::string>>();
}

// A CSV line's comma-separated fields (the predictions CSV quotes nothing).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream row(line);
  for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
  return fields;
}

// A run that must stop before doing anything, with an error that says `message`.
void expect_refused(const hlm::test::CommandResult& run, const std::string& message) {
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(message), std::string::npos) << "wanted: " << message << "\n"
                                                         << run.output;
}

struct CrossValidationRun {
  fs::path run_dir;
  std::string output;
};

// One run of the fixture shared by the tests below (it takes seconds).
const CrossValidationRun& cross_validation_run() {
  static hlm::test::ScratchDir runs("hlm_finetune_cv");
  static const CrossValidationRun run = [] {
    const auto r = run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return CrossValidationRun{hlm::test::run_dir_of(r.output), r.output};
  }();
  return run;
}

}  // namespace

TEST(FinetuneEvaluate, CrossValidationNeverPutsARecordOnBothSidesAndScoresEachRecordOnce) {
  const auto& run = cross_validation_run();
  ASSERT_FALSE(run.run_dir.empty()) << run.output;
  const int64_t beats = stage_manifest(run.run_dir, "tokenize")["results"]["beats"];
  for (const std::string backbone : {"full", "frozen", "scratch"}) {
    std::map<std::string, int> times_tested;
    for (int fold = 0; fold < 3; ++fold) {
      const auto r = stage_manifest(run.run_dir, "finetune[backbone=" + backbone + ",fold=" +
                                                     std::to_string(fold) + "]")["results"];
      const auto train = as_set(r["train_records"]), validation = as_set(r["validation_records"]);
      const auto test = as_set(r["holdout_records"]);
      EXPECT_EQ(validation.size(), 1u);
      for (const auto& name : train) {
        EXPECT_FALSE(test.count(name)) << name << " trains and is tested in fold " << fold;
        EXPECT_FALSE(validation.count(name)) << name << " trains and validates in fold " << fold;
      }
      for (const auto& name : test) EXPECT_FALSE(validation.count(name)) << name;
      EXPECT_EQ(train.size() + validation.size() + test.size(), 7u);
      for (const auto& name : test) ++times_tested[name];
    }
    EXPECT_EQ(times_tested.size(), 7u) << "every record is in one test fold";
    for (const auto& [name, times] : times_tested) EXPECT_EQ(times, 1) << name;
    // The pooled evaluation counts every labelled beat once.
    const auto scored = stage_manifest(
        run.run_dir, "evaluate")["results"]["datasets"]["holdout [backbone=" + backbone + "]"];
    EXPECT_EQ(scored["records"], 7);
    EXPECT_EQ(scored["items"], beats);
  }
}

TEST(FinetuneEvaluate, ResultsJsonHoldsEveryDatasetAndTheConfusionPlotIsAnImage) {
  const auto& run = cross_validation_run();
  ASSERT_FALSE(run.run_dir.empty()) << run.output;
  std::ifstream in(run.run_dir / "evaluate" / "results.json");
  ASSERT_TRUE(in) << "no results.json";
  const auto results = nlohmann::json::parse(in);
  ASSERT_EQ(results["datasets"].size(), 6u) << results.dump();
  // Another store is scored once per beat (the fold models vote), whatever the fold count.
  const int64_t more_beats = stage_manifest(run.run_dir, "tokenize_more")["results"]["beats"];
  const auto& more = results["datasets"]["more [backbone=full]"];
  EXPECT_EQ(more["items"], more_beats);
  for (const auto& [name, d] : results["datasets"].items()) {
    for (const char* key : {"accuracy", "macro_f1", "majority_baseline", "ci95", "confusion"})
      EXPECT_TRUE(d.contains(key)) << name << " lacks " << key;
    for (const char* c : {"N", "S", "V", "F", "Q"})
      for (const char* key : {"se", "ppv", "specificity", "f1", "se_ci95", "ppv_ci95"})
        EXPECT_TRUE(d["classes"][c].contains(key)) << name << " " << c << " lacks " << key;
    // Each record's own confusion matrix; together they are the dataset's.
    ASSERT_EQ(d["by_record"].size(), d["records"].get<size_t>()) << name;
    std::vector<std::vector<int64_t>> sum(5, std::vector<int64_t>(5, 0));
    for (const auto& [record, m] : d["by_record"].items())
      for (size_t t = 0; t < 5; ++t)
        for (size_t p = 0; p < 5; ++p) sum[t][p] += m[t][p].get<int64_t>();
    EXPECT_EQ(nlohmann::json(sum), d["confusion"]) << name;
    const double acc = d["accuracy"];
    const auto ci = d["ci95"]["accuracy"];
    EXPECT_LE(ci[0].get<double>(), acc + 1e-12) << name;
    EXPECT_GE(ci[1].get<double>(), acc - 1e-12) << name;
    // Every item's prediction as a CSV row: counted by reference and predicted class, the rows
    // are the confusion matrix; each beat names its record and an R-peak sample.
    std::ifstream csv(run.run_dir / "evaluate" / d["predictions"].get<std::string>());
    ASSERT_TRUE(csv) << name << ": no " << d["predictions"];
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "record,sample,reference,predicted,p_N,p_S,p_V,p_F,p_Q") << name;
    const std::vector<std::string> order = {"N", "S", "V", "F", "Q"};
    std::vector<std::vector<int64_t>> rows(5, std::vector<int64_t>(5, 0));
    while (std::getline(csv, line)) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(
          line, m, std::regex(R"((\w+),(\d+),([NSVFQ]),([NSVFQ])(,[01]\.\d{4}){5})")))
          << line;
      ASSERT_TRUE(d["by_record"].contains(m[1].str())) << line;
      const auto index = [&](const std::string& c) {
        return size_t(std::find(order.begin(), order.end(), c) - order.begin());
      };
      ++rows[index(m[3])][index(m[4])];
      // The predicted class is the most probable one: the p_ columns are in the classes' order.
      std::vector<double> p;
      const std::vector<std::string> fields = csv_fields(line);
      for (size_t k = 4; k < fields.size(); ++k) p.push_back(std::stod(fields[k]));
      // (Within the CSV's rounding: two classes may print alike.)
      EXPECT_GE(p.at(index(m[4])), *std::max_element(p.begin(), p.end()) - 1e-4) << line;
    }
    EXPECT_EQ(nlohmann::json(rows), d["confusion"]) << name;
  }
  const auto artifacts = stage_manifest(run.run_dir, "evaluate")["artifacts"];
  ASSERT_TRUE(artifacts.contains("confusion_1_png")) << artifacts.dump();
  std::ifstream png(artifacts["confusion_1_png"].get<std::string>(), std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_TRUE(fs::exists(artifacts["confusion_1_svg"].get<std::string>()));
  // report.md links every plot relative to the run folder, so the folder can move.
  std::ifstream report_file(run.run_dir / "report.md");
  const std::string report((std::istreambuf_iterator<char>(report_file)),
                           std::istreambuf_iterator<char>());
  const std::regex image(R"(!\[[^\]]*\]\(([^)]+)\))");
  int images = 0;
  for (std::sregex_iterator it(report.begin(), report.end(), image), end; it != end; ++it) {
    const std::string link = (*it)[1].str();
    EXPECT_NE(link.front(), '/') << link;
    EXPECT_TRUE(fs::exists(run.run_dir / link)) << link;
    ++images;
  }
  EXPECT_GE(images, 1) << report;
}

// backbone=scratch beside backbone=full: the difference of macro F1 on each dataset, with a
// paired interval over the records both scored, in results.json and the report.
TEST(FinetuneEvaluate, EvaluateComparesThePretrainedBackboneWithRandomWeightsPairedByRecord) {
  const auto& run = cross_validation_run();
  ASSERT_FALSE(run.run_dir.empty()) << run.output;
  std::ifstream in(run.run_dir / "evaluate" / "results.json");
  const auto results = nlohmann::json::parse(in);
  ASSERT_EQ(results["comparisons"].size(), 2u) << results.dump().substr(0, 600);
  std::set<std::string> datasets;
  for (const auto& c : results["comparisons"]) {
    datasets.insert(c["dataset"].get<std::string>());
    EXPECT_EQ(c["pretrained"], "backbone=full");
    EXPECT_EQ(c["scratch"], "backbone=scratch");
    EXPECT_EQ(c["metric"], "macro_f1");
    const std::string d = c["dataset"];
    const double expected =
        results["datasets"][d + " [backbone=full]"]["macro_f1"].get<double>() -
        results["datasets"][d + " [backbone=scratch]"]["macro_f1"].get<double>();
    EXPECT_NEAR(c["difference"].get<double>(), expected, 1e-12) << d;
    // The two levels the difference is of, and always answering the majority class, which
    // every dataset's own table shows too.
    EXPECT_NEAR(c["pretrained_value"].get<double>() - c["scratch_value"].get<double>(), expected,
                1e-12)
        << d;
    EXPECT_NEAR(c["majority_baseline"].get<double>(),
                results["datasets"][d + " [backbone=full]"]["majority_baseline_macro_f1"], 1e-12)
        << d;
    EXPECT_LE(c["ci95"][0].get<double>(), expected + 1e-12) << d;
    EXPECT_GE(c["ci95"][1].get<double>(), expected - 1e-12) << d;
  }
  EXPECT_EQ(datasets, (std::set<std::string>{"holdout", "more"}));
  const std::string report = hlm::test::read_text(run.run_dir / "report.md");
  EXPECT_NE(report.find("### Pretrained against random weights"), std::string::npos);
  EXPECT_NE(report.find("| holdout | backbone=full | macro_f1 |"), std::string::npos) << report;
}

TEST(FinetuneEvaluate, BackboneModesActAndEarlyStoppingKeepsTheBestValidatedStep) {
  const auto& run = cross_validation_run();
  ASSERT_FALSE(run.run_dir.empty()) << run.output;
  std::map<std::string, std::vector<double>> losses;
  for (const std::string backbone : {"full", "frozen", "scratch"}) {
    const auto r =
        stage_manifest(run.run_dir, "finetune[backbone=" + backbone + ",fold=0]")["results"];
    losses[backbone] = r["losses"].get<std::vector<double>>();
    EXPECT_EQ(r["head"]["backbone"], backbone);
    // Validation every 3 steps; the kept step is the first with the best macro F1.
    const auto history = r["validation"];
    ASSERT_FALSE(history.empty());
    double best = -1;
    int64_t best_step = 0;
    for (const auto& point : history)
      if (point[1].get<double>() > best) best = point[1], best_step = point[0];
    EXPECT_EQ(r["best_step"], best_step);
    EXPECT_EQ(history[0][0], 3);
    // Patience 2: training ends at most two checks after the best one.
    EXPECT_LE(r["steps_run"].get<int64_t>(), std::min<int64_t>(12, best_step + 6));
  }
  // The same seed and data: only the backbone differs, so the losses do.
  EXPECT_NE(losses["full"], losses["frozen"]);
  EXPECT_NE(losses["full"], losses["scratch"]);
  EXPECT_NE(losses["frozen"], losses["scratch"]);
  EXPECT_NE(run.output.find("fine-tuning beat classes (frozen backbone)"), std::string::npos);
}

// Seeds in the matrix are an ensemble: one model per fold and seed, each item scored once
// with the mean of its fold's seeds' probabilities, on the held-out records and another store.
TEST(FinetuneEvaluate, SeedsOfAFoldAreAveragedIntoOneModel) {
  hlm::test::ScratchDir runs("hlm_finetune_seeds");
  const auto r = run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                         " 'finetune.matrix.backbone=[full]' 'finetune.matrix.seed=[0, 1]'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run_dir = hlm::test::run_dir_of(r.output);
  // Seeds train different models on the same split.
  const auto a = stage_manifest(run_dir, "finetune[backbone=full,fold=1,seed=0]")["results"];
  const auto b = stage_manifest(run_dir, "finetune[backbone=full,fold=1,seed=1]")["results"];
  EXPECT_EQ(a["train_records"], b["train_records"]);
  EXPECT_NE(a["losses"], b["losses"]);
  const auto datasets = stage_manifest(run_dir, "evaluate")["results"]["datasets"];
  ASSERT_EQ(datasets.size(), 2u) << "one model per backbone, seeds and folds pooled: "
                                 << datasets.dump();
  const auto& holdout = datasets["holdout [backbone=full]"];
  EXPECT_EQ(holdout["records"], 7);
  EXPECT_EQ(holdout["items"], stage_manifest(run_dir, "tokenize")["results"]["beats"]);
  EXPECT_NE(holdout["scope"].get<std::string>().find("cross-validation over 3 folds"),
            std::string::npos)
      << holdout["scope"];
  EXPECT_NE(holdout["scope"].get<std::string>().find("mean of 2 seeds"), std::string::npos);
  const auto& more = datasets["more [backbone=full]"];
  EXPECT_EQ(more["items"],
            stage_manifest(run_dir, "tokenize_more")["results"]["beats"].get<int64_t>());
  EXPECT_NE(more["scope"].get<std::string>().find("6 models' probabilities (3 folds x 2 seeds)"),
            std::string::npos)
      << more["scope"];
}

// Fine-tuning reads any model plugin's hidden states: a bert (masked-token) checkpoint
// fine-tunes, its weights are loaded (the same seed from random weights trains otherwise), and
// evaluate scores the held-out records and another store with it.
TEST(FinetuneEvaluate, ABertCheckpointFineTunesAndIsEvaluated) {
  hlm::test::ScratchDir runs("hlm_finetune_bert");
  const auto r = run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                         " vars.model.plugin=bert 'finetune.matrix.fold=[0]'"
                         " 'finetune.matrix.backbone=[full, scratch]'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run_dir = hlm::test::run_dir_of(r.output);
  EXPECT_EQ(stage_manifest(run_dir, "pretrain")["results"]["model"]["plugin"], "bert");
  const auto full = stage_manifest(run_dir, "finetune[backbone=full,fold=0]")["results"];
  const auto scratch = stage_manifest(run_dir, "finetune[backbone=scratch,fold=0]")["results"];
  EXPECT_EQ(full["model"]["plugin"], "bert");
  EXPECT_EQ(full["train_records"], scratch["train_records"]);
  EXPECT_NE(full["losses"], scratch["losses"]) << "the pretrained weights were not loaded";
  const auto datasets = stage_manifest(run_dir, "evaluate")["results"]["datasets"];
  const auto& holdout = datasets["holdout [backbone=full]"];
  EXPECT_EQ(holdout["records"], full["holdout_records"].size());
  EXPECT_GT(holdout["items"].get<int64_t>(), 0);
  EXPECT_EQ(datasets["more [backbone=full]"]["items"],
            stage_manifest(run_dir, "tokenize_more")["results"]["beats"].get<int64_t>());
}

TEST(FinetuneEvaluate, SplitKeysAct) {
  hlm::test::ScratchDir runs("hlm_finetune_split_keys");
  const std::string base = "run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                           " 'finetune.matrix.fold=[0]' 'finetune.matrix.backbone=[full]' ";
  const auto r = run_hlm(base +
                         "finetune.split_seed=7 finetune.labelled_fraction=0.5 "
                         "finetune.validation_records=0 finetune.rr_features=false "
                         "finetune.class_weights=none finetune.head_lr_scale=10 "
                         "finetune.records=[syn000,syn001,"
                         "syn002,syn003,syn004,syn005]");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run_dir = hlm::test::run_dir_of(r.output);
  const auto got = stage_manifest(run_dir, "finetune[backbone=full,fold=0]")["results"];
  // records: syn006 is never used; folds of 6 records: 2 tested; half of the other 4 train.
  EXPECT_EQ(got["holdout_records"].size(), 2u);
  EXPECT_EQ(got["train_records"].size(), 2u);
  EXPECT_TRUE(got["validation_records"].empty());
  EXPECT_TRUE(got["validation"].empty());
  for (const auto& list : {got["train_records"], got["holdout_records"]})
    EXPECT_FALSE(as_set(list).count("syn006"));
  EXPECT_EQ(got["head"]["rr_features"], false);
  EXPECT_EQ(got["head"]["class_weights"], "none");
  EXPECT_EQ(got["head"]["head_lr_scale"], 10.0);
  // The head learning faster changes the losses against the same split at lr_scale 1.
  const auto r1 = run_hlm(base +
                          "finetune.split_seed=7 finetune.labelled_fraction=0.5 "
                          "finetune.validation_records=0 finetune.rr_features=false "
                          "finetune.class_weights=none finetune.records=[syn000,syn001,"
                          "syn002,syn003,syn004,syn005]");
  ASSERT_EQ(r1.exit_code, 0) << r1.output;
  const auto at_one =
      stage_manifest(hlm::test::run_dir_of(r1.output), "finetune[backbone=full,fold=0]")["results"];
  EXPECT_EQ(at_one["train_records"], got["train_records"]);
  EXPECT_NE(at_one["losses"], got["losses"]);
  // Another split seed deals other folds.
  const auto& cv = cross_validation_run();
  const auto seeded = stage_manifest(cv.run_dir, "finetune[backbone=full,fold=0]")["results"];
  EXPECT_NE(as_set(got["holdout_records"]), as_set(seeded["holdout_records"]));
  // Named records and a fold of the rest would both be held out: refused, naming the way out.
  expect_refused(run_hlm(base + "'finetune.holdout_records=[syn006]'"),
                 "holdout_records [\"syn006\"] and folds=3 would both hold records out; give "
                 "one of them (folds: 0 holds out the named records alone)");
}

TEST(FinetuneEvaluate, ACheckpointOrAnEvaluationStoreOfAnotherTokenizerOrCodebookIsRefused) {
  hlm::test::ScratchDir runs("hlm_finetune_refused");
  const fs::path workflow = runs.path / "other_codebook.yaml";
  std::ofstream(workflow) << R"(name: other-codebook
vars:
  model: {plugin: gpt, vocab_size: 20, context: 32, d_model: 16, n_layer: 1, n_head: 2, d_ff: 32}
stages:
  - id: tokenize
    kind: tokenize
    params:
      datasets: [{plugin: synthetic, records: 3, seconds: 60, seed: 3}]
      tokenizer: {plugin: beat-vq, codes: 16}
  - id: tokenize_other
    kind: tokenize
    params:
      datasets: [{plugin: synthetic, records: 2, seconds: 60, seed: 5}]
      tokenizer: {plugin: beat-vq, codes: 12}
  - id: tokenize_rhythm
    kind: tokenize
    params:
      datasets: [{plugin: synthetic, records: 2, seconds: 60, seed: 5}]
      tokenizer: {plugin: rhythm}
  - id: pretrain
    kind: pretrain
    needs: [tokenize]
    params: {model: "${vars.model}", steps: 2, batch: 4}
  - id: finetune
    kind: finetune
    needs: [pretrain, FINETUNE_STORE]
    params: {steps: 2, batch: 4, holdout_records: [syn000]}
  - id: evaluate
    kind: evaluate
    needs: [finetune, tokenize_other]
    params:
      datasets: [{name: other, stage: tokenize_other}]
)";
  const auto with_store = [&](const std::string& store) {
    std::ifstream in(workflow);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("FINETUNE_STORE"), 14, store);
    const fs::path path = runs.path / (store + ".yaml");
    std::ofstream(path) << text;
    return run_hlm("run " + path.string() + " --runs-dir " + (runs.path / store).string());
  };
  // Fine-tuning the checkpoint on the other store: another vocabulary and codebook; then on
  // another tokenizer altogether (rhythm tokens, whose ids mean AAMI class and RR bin).
  for (const auto& [store, kind] :
       {std::pair<std::string, std::string>{"tokenize_other", "beat-vq"},
        {"tokenize_rhythm", "rhythm"}}) {
    const auto finetune = with_store(store);
    expect_refused(finetune, "was pretrained on tokens of beat-vq:");
    expect_refused(finetune, store + "/tokens.hlmt holds tokens of " + kind + ":");
  }
  // Fine-tuning on the pretraining store works; evaluating the other store is refused.
  const auto evaluate = with_store("tokenize");
  EXPECT_NE(evaluate.exit_code, 0) << evaluate.output;
  EXPECT_NE(evaluate.output.find("finetune: classification loss"), std::string::npos)
      << evaluate.output;
  EXPECT_NE(evaluate.output.find("dataset 'other'"), std::string::npos) << evaluate.output;
  EXPECT_NE(evaluate.output.find("tokenize it with the pretraining codebook"), std::string::npos)
      << evaluate.output;
}

// Before: "accuracy nan on 0 items", the stage done and exit 0. Records of 4 s hold fewer
// beats than the shortest segment (min_segment_beats 8): there is nothing to score.
TEST(FinetuneEvaluate, AnEvaluationOverNoItemsFailsNamingWhy) {
  hlm::test::ScratchDir dir("hlm_no_items");
  std::ofstream(dir.path / "wf.yaml")
      << "name: no-items\nvars:\n  model: {plugin: gpt, vocab_size: 84, context: 64, d_model: "
         "32, n_layer: 1, n_head: 2, d_ff: 64}\nstages:\n"
         "  - id: tokenize\n    kind: tokenize\n    params:\n      datasets: [{plugin: "
         "synthetic, records: 4, seconds: 300, sampling_hz: 250, seed: 3, af_fraction: 0.5}]\n"
         "      tokenizer: {plugin: rhythm}\n"
         "  - id: short\n    kind: tokenize\n    params:\n      datasets: [{plugin: "
         "synthetic, records: 2, seconds: 4, sampling_hz: 250, seed: 9}]\n"
         "      tokenizer: {plugin: rhythm}\n"
         "  - id: pretrain\n    kind: pretrain\n    needs: [tokenize]\n"
         "    params: {model: \"${vars.model}\", steps: 5, batch: 8}\n"
         "  - id: finetune\n    kind: finetune\n    needs: [pretrain, tokenize]\n"
         "    params: {task: af, segment_beats: 16, steps: 5, batch: 8, holdout_records: "
         "[syn000]}\n"
         "  - id: evaluate\n    kind: evaluate\n    needs: [finetune, short]\n"
         "    params: {datasets: [{name: short, stage: short}]}\n";
  const auto r = run_hlm("run " + (dir.path / "wf.yaml").string() + " --runs-dir " +
                         (dir.path / "runs").string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stage 'evaluate' scored no items of short"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("on 0 items"), std::string::npos) << r.output;
}

TEST(FinetuneEvaluate, SegmentTaskLabelsAfFromRhythmAnnotationsAndReportsAuroc) {
  hlm::test::ScratchDir runs("hlm_af_segments");
  const auto r = run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
                         " evaluate.by_beat=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run_dir = hlm::test::run_dir_of(r.output);
  // The tokenize stage wrote each record's AF episodes.
  std::ifstream labels_file(run_dir / "tokenize" / "record_labels.json");
  const auto labels = nlohmann::json::parse(labels_file);
  EXPECT_EQ(labels["records"].size(), 6u);
  EXPECT_FALSE(labels["records"]["syn000"]["af"].empty());
  for (const std::string length : {"16", "41"}) {
    const auto tuned = stage_manifest(run_dir, "finetune[segment_beats=" + length + "]")["results"];
    EXPECT_EQ(tuned["task"], "af");
    EXPECT_EQ(tuned["classes"], nlohmann::json({"non-AF", "AF"}));
    EXPECT_EQ(tuned["segment_beats"], std::stoi(length));
    const auto d = stage_manifest(
        run_dir, "evaluate")["results"]["datasets"]["holdout [segment_beats=" + length + "]"];
    EXPECT_EQ(d["records"], 2);
    EXPECT_GT(d["classes"]["AF"]["items"].get<int64_t>(), 0);
    EXPECT_GT(d["classes"]["non-AF"]["items"].get<int64_t>(), 0);
    const double auroc = d["auroc"];
    EXPECT_GE(auroc, 0.0);
    EXPECT_LE(auroc, 1.0);
    // One CSV row per segment, named by the sample of its first beat.
    std::ifstream csv(run_dir / "evaluate" / d["predictions"].get<std::string>());
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "record,sample,reference,predicted,p_non-AF,p_AF");
    int64_t rows = 0;
    std::map<std::string, int64_t> rows_by_record;
    while (std::getline(csv, line)) {
      ++rows;
      ++rows_by_record[line.substr(0, line.find(','))];
      EXPECT_TRUE(std::regex_match(
          line, std::regex(R"(syn\d+,\d+,(non-AF|AF),(non-AF|AF),[01]\.\d{4},[01]\.\d{4})")))
          << line;
    }
    EXPECT_EQ(rows, d["items"].get<int64_t>());
    // by_beat: every beat of those segments, each with its own rhythm. The 600 s records are
    // longer than a segment, so every segment is whole. A segment's class is its majority's, so
    // AF's share moves a little from segments to beats, but only a little.
    const auto b = d["by_beat"];
    const int64_t segment_beats = std::stoi(length);
    EXPECT_EQ(b["items"].get<int64_t>(), d["items"].get<int64_t>() * segment_beats);
    EXPECT_EQ(b["records"], 2);
    EXPECT_EQ(b["segment_stride"], segment_beats);
    // Exactly the beats of record_labels.json's AF episodes (record-relative beat indices) that
    // the segments cover: each record's segments run from its first beat, one after another.
    int64_t af_beats_covered = 0;
    for (const auto& [record, segments] : rows_by_record) {
      const int64_t covered = segments * segment_beats;
      for (const auto& episode : labels["records"][record]["af"])
        af_beats_covered +=
            std::max<int64_t>(0, std::min<int64_t>(episode[1].get<int64_t>(), covered) -
                                     std::min<int64_t>(episode[0].get<int64_t>(), covered));
    }
    EXPECT_EQ(b["classes"]["AF"]["items"].get<int64_t>(), af_beats_covered);
    const double af_segments = d["classes"]["AF"]["items"].get<double>() / d["items"].get<double>();
    const double af_beats = b["classes"]["AF"]["items"].get<double>() / b["items"].get<double>();
    EXPECT_NEAR(af_beats, af_segments, 0.1);
    EXPECT_NE(af_beats * b["items"].get<double>(),
              af_segments * d["items"].get<double>() * std::stoi(length))
        << "the beats' own rhythm, not their segment's class";
    EXPECT_GE(b["auroc"].get<double>(), 0.0);
  }
  EXPECT_NE(hlm::test::read_text(run_dir / "report.md").find("#### By beat"), std::string::npos);
  // Longer segments: fewer items over the same records.
  const auto datasets = stage_manifest(run_dir, "evaluate")["results"]["datasets"];
  EXPECT_GT(datasets["holdout [segment_beats=16]"]["items"].get<int64_t>(),
            2 * datasets["holdout [segment_beats=41]"]["items"].get<int64_t>());
}

// by_beat acts on task af alone: a beat classifier's items are beats already; by_beat_overlap
// acts only with by_beat.
TEST(FinetuneEvaluate, ByBeatKeysAreRefusedWhereTheyCannotAct) {
  hlm::test::ScratchDir runs("hlm_by_beat_beats");
  expect_refused(run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                         " evaluate.by_beat=true"),
                 "by_beat scores the segments of task af beat by beat");
  hlm::test::ScratchDir af("hlm_by_beat_overlap_alone");
  expect_refused(run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + af.path.string() +
                         " evaluate.by_beat_overlap=4"),
                 "by_beat_overlap=4 must be at least 1, and above 1 only with by_beat: true");
  expect_refused(run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + af.path.string() +
                         " evaluate.by_beat=true evaluate.by_beat_overlap=0"),
                 "'by_beat_overlap' in params of stage 'evaluate' is 0, out of its range: "
                 "allowed 1 or more");
}

// by_beat_overlap: each beat scored from the mean of the overlapping segments that hold it.
// The segments' own scores stay those of segments that do not overlap.
TEST(FinetuneEvaluate, ByBeatOverlapScoresEachBeatFromTheSegmentsThatHoldIt) {
  const auto evaluate_with = [](const std::string& overrides) {
    hlm::test::ScratchDir runs("hlm_by_beat_overlap");
    const auto r = run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
                           " evaluate.by_beat=true " + overrides);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return stage_manifest(hlm::test::run_dir_of(r.output),
                          "evaluate")["results"]["datasets"]["holdout [segment_beats=41]"];
  };
  const auto apart = evaluate_with(""), overlapping = evaluate_with("evaluate.by_beat_overlap=4");
  EXPECT_EQ(overlapping["items"], apart["items"]);
  EXPECT_EQ(overlapping["confusion"], apart["confusion"]);
  // 41 beats in 4 overlapping segments: one every 11 beats (rounded up, so at most 4 hold a
  // beat); apart, one every 41.
  EXPECT_EQ(apart["by_beat"]["segment_stride"], 41);
  EXPECT_EQ(overlapping["by_beat"]["segment_stride"], 11);
  // Only the records' tails differ: a record's last segment ends within 10 beats of its end when
  // segments start every 11 beats, within 40 when every 41.
  const int64_t beats = overlapping["by_beat"]["items"], beats_apart = apart["by_beat"]["items"];
  EXPECT_GE(beats - beats_apart, -2 * 10);  // two records
  EXPECT_LE(beats - beats_apart, 2 * 40);
  EXPECT_NE(overlapping["by_beat"]["auroc"], apart["by_beat"]["auroc"]);
}

// rr_pattern_features: the segment head reads three more statistics (whether the rhythm
// repeats), trains to other losses, is rebuilt by evaluate and named in the report; refused
// for task beats and without rr_features.
TEST(FinetuneEvaluate, RrPatternFeaturesReachTheSegmentHeadAndAreRefusedWithoutASegment) {
  hlm::test::ScratchDir runs("hlm_af_pattern");
  const std::string base = "run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
                           " 'finetune.matrix.segment_beats=[41]'";
  const auto plain = run_hlm(base);
  const auto patterned = run_hlm(base + " finetune.rr_pattern_features=true");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_EQ(patterned.exit_code, 0) << patterned.output;
  const auto run_dir = hlm::test::run_dir_of(patterned.output);
  const auto without =
      stage_manifest(hlm::test::run_dir_of(plain.output), "finetune[segment_beats=41]")["results"];
  const auto with = stage_manifest(run_dir, "finetune[segment_beats=41]")["results"];
  EXPECT_EQ(with["head"]["rr_pattern_features"], true);
  EXPECT_EQ(with["head"]["input_mean"].size(), without["head"]["input_mean"].size() + 3);
  EXPECT_NE(with["losses"], without["losses"]);
  EXPECT_GT(stage_manifest(run_dir,
                           "evaluate")["results"]["datasets"]["holdout [segment_beats=41]"]["items"]
                .get<int64_t>(),
            0);
  EXPECT_NE(hlm::test::read_text(run_dir / "report.md").find("whether the rhythm repeats"),
            std::string::npos);
  expect_refused(run_hlm(base + " finetune.rr_pattern_features=true finetune.rr_features=false"),
                 "rr_pattern_features add whether a segment's rhythm repeats");
  hlm::test::ScratchDir beats("hlm_beats_pattern");
  expect_refused(run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " + beats.path.string() +
                         " finetune.rr_pattern_features=true"),
                 "rr_pattern_features add whether a segment's rhythm repeats");
}

// A head input key (`key`=value, true by default) reaches the head: the same split, seed and RR
// features as the shared run's fold 0, so only the head's input differs, and so do the losses;
// evaluate rebuilds the head for a store of other records (another sampling rate) tokenized with
// the same codebook, and the report names the input (`phrase`). Inputs from the codebook
// (`uses_codebook`) name it in the fine-tune's results.
namespace {
void expect_head_input_acts(const std::string& key, const std::string& phrase, bool uses_codebook,
                            const std::string& more_overrides = "",
                            const std::string& value = "true",
                            const std::function<void(const fs::path&)>& also = nullptr) {
  const auto& cv = cross_validation_run();
  hlm::test::ScratchDir runs("hlm_finetune_" + key);
  const auto r = run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                         " 'finetune.matrix.fold=[0]' 'finetune.matrix.backbone=[full]' finetune." +
                         key + "=" + value + more_overrides);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run_dir = hlm::test::run_dir_of(r.output);
  const auto got = stage_manifest(run_dir, "finetune[backbone=full,fold=0]")["results"];
  EXPECT_EQ(got["head"][key], nlohmann::json::parse(value));
  // Every one of the head's per-beat inputs is standardised; the scaling is kept for evaluate.
  EXPECT_FALSE(got["head"]["input_mean"].empty()) << got["head"].dump();
  EXPECT_EQ(got["head"]["input_mean"].size(), got["head"]["input_scale"].size());
  EXPECT_NE(hlm::test::read_text(run_dir / "report.md")
                .find("these inputs standardised over the training beats"),
            std::string::npos);
  if (uses_codebook)
    EXPECT_EQ(got["codebook"], stage_manifest(run_dir, "tokenize")["artifacts"]["codebook"]);
  else
    EXPECT_FALSE(got.contains("codebook"));
  const auto without = stage_manifest(cv.run_dir, "finetune[backbone=full,fold=0]")["results"];
  EXPECT_NE(without["head"][key], got["head"][key]);
  EXPECT_EQ(got["train_records"], without["train_records"]);
  EXPECT_NE(got["losses"], without["losses"]);
  std::ifstream in(run_dir / "evaluate" / "results.json");
  const auto results = nlohmann::json::parse(in);
  EXPECT_EQ(results["datasets"]["more [backbone=full]"]["items"],
            stage_manifest(run_dir, "tokenize_more")["results"]["beats"]);
  std::ifstream report(run_dir / "report.md");
  const std::string md((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(md.find(phrase), std::string::npos);
  if (also) also(run_dir);
}
}  // namespace

// morphology_features: each beat's shape against its record's template, from the codebook of
// the fine-tuning store.
TEST(FinetuneEvaluate, MorphologyFeaturesReachTheHeadAndAnotherStore) {
  expect_head_input_acts("morphology_features", "shape against its record's template",
                         /*uses_codebook=*/true);
}

// record_rhythm_features: each beat's RR against its whole record's median and the local
// irregularity.
TEST(FinetuneEvaluate, RecordRhythmFeaturesReachTheHeadAndAnotherStore) {
  expect_head_input_acts("record_rhythm_features", "rhythm against the record",
                         /*uses_codebook=*/false);
}

TEST(FinetuneEvaluate, RhythmContextFeaturesReachTheHeadAndAnotherStore) {
  expect_head_input_acts("rhythm_context_features", "the rhythm around the beat",
                         /*uses_codebook=*/false);
}

TEST(FinetuneEvaluate, RrWithinContextReachesTheHeadAndAnotherStore) {
  expect_head_input_acts("rr_within_context", "fall among the intervals around it",
                         /*uses_codebook=*/false);
}

// descriptors: the token store's per-beat descriptors (beat-vq's template_descriptors), in
// both stores; standardised on the training records, the scaling kept for evaluate.
TEST(FinetuneEvaluate, DescriptorsReachTheHeadAndAnotherStore) {
  const std::string both =
      " tokenize.tokenizer.template_descriptors=true"
      " tokenize_more.tokenizer.template_descriptors=true";
  expect_head_input_acts("descriptors", "10 descriptors per beat", /*uses_codebook=*/false, both);
}

// head_hidden: a hidden layer in the head, saved beside the output layer and rebuilt by
// evaluate.
TEST(FinetuneEvaluate, AHiddenHeadLayerTrainsAndIsRebuiltForEvaluation) {
  expect_head_input_acts("head_hidden", "a head with 16 hidden units", /*uses_codebook=*/false, "",
                         "16", [](const fs::path& run_dir) {
                           const fs::path tuned = run_dir / "finetune[backbone=full,fold=0]";
                           EXPECT_TRUE(fs::exists(tuned / "classifier.head_hidden"));
                           EXPECT_TRUE(fs::exists(tuned / "classifier.head"));
                         });
}

TEST(FinetuneEvaluate, DescriptorsAreRefusedWhereAStoreHasNone) {
  hlm::test::ScratchDir runs("hlm_finetune_descriptors_refused");
  const std::string base = "run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                           " 'finetune.matrix.fold=[0]' 'finetune.matrix.backbone=[full]'"
                           " finetune.descriptors=true";
  const auto none = run_hlm(base);
  expect_refused(none,
                 "tokens.hlmt: the head's descriptors input needs a token store with "
                 "descriptors");
  EXPECT_NE(none.output.find("template_descriptors: true"), std::string::npos) << none.output;
  // Fine-tuned with them, evaluated on a store made without them.
  const auto other = run_hlm(base + " tokenize.tokenizer.template_descriptors=true");
  expect_refused(other, "the classifier reads 10 descriptors per beat, this token store has 0");
  EXPECT_NE(other.output.find("tokenize_more"), std::string::npos) << other.output;
}

TEST(FinetuneEvaluate, BeatInputsWithoutABeatCodebookOrForAfSegmentsAreRefused) {
  hlm::test::ScratchDir runs("hlm_finetune_morphology_refused");
  const std::string base =
      "run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
      " 'finetune.matrix.segment_beats=[16]' finetune.morphology_features=true";
  // Rhythm tokens have no beat shapes.
  const auto beats = run_hlm(base + " finetune.task=beats");
  expect_refused(beats, "morphology_features need the beat-vq codebook");
  // Segments are not single beats.
  const auto segments = run_hlm(base);
  expect_refused(segments, "morphology_features describe single beats");
  // A record's rhythm extremes are one value for all its segments: no use to task af.
  const auto rhythm =
      run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
              " 'finetune.matrix.segment_beats=[16]' finetune.record_rhythm_features=true");
  expect_refused(rhythm, "cannot tell AF stretches of one record apart");
  const auto context =
      run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
              " 'finetune.matrix.segment_beats=[16]' finetune.rhythm_context_features=true");
  expect_refused(context, "rhythm_context_features describe the rhythm around single beats");
  const auto within =
      run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
              " 'finetune.matrix.segment_beats=[16]' finetune.rr_within_context=true");
  expect_refused(within, "rr_within_context places single beats' intervals");
}

TEST(FinetuneEvaluate, TreesKeysActOnlyWithTrees) {
  hlm::test::ScratchDir runs("hlm_finetune_trees_refused");
  const std::string base = "run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
                           " 'finetune.matrix.segment_beats=[16]'";
  const auto negative = run_hlm(base + " finetune.trees=-1");
  expect_refused(negative,
                 "'trees' in params of stage 'finetune' is -1, out of its range: "
                 "allowed 0 or more");
  const auto weight_alone = run_hlm(base + " finetune.trees_weight=0.3");
  expect_refused(weight_alone, "which trees: 0 turns off");
  const auto out_of_range = run_hlm(base + " finetune.trees_weight=1.5");
  expect_refused(out_of_range, "trees_weight=1.5 must be from 0 to 1");
  const auto descriptors = run_hlm(base + " finetune.trees_descriptors=true");
  expect_refused(descriptors,
                 "trees_descriptors gives the store's descriptors to the boosted trees, which "
                 "trees: 0 turns off");
  const auto class_weights = run_hlm(base + " finetune.trees_class_weights=inverse");
  expect_refused(class_weights, "trees_class_weights weighs the classes for the boosted trees");
  // The share is fit on validation records, and this workflow keeps none.
  const auto no_validation = run_hlm(base + " finetune.trees=10");
  expect_refused(no_validation, "trees_weight -1 fits the trees' share on the validation records");
}

namespace {
// A run of `workflow` (with its overrides) with 10 rounds of trees at share `weight`.
fs::path run_with_trees_at_share(const hlm::test::ScratchDir& runs, const std::string& workflow,
                                 int weight) {
  const auto r = run_hlm("run " + workflow + " --runs-dir " + runs.path.string() +
                         " finetune.trees=10 finetune.trees_weight=" + std::to_string(weight));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return hlm::test::run_dir_of(r.output);
}

// Every dataset the run evaluated scores as its blend's part `part` alone: macro F1, each
// class's Se and +P, and AUROC where the task has two classes. The predictions CSV holds each
// part's probabilities beside the blend's, and the blend's are `part`'s.
void expect_scores_as_part(const fs::path& run, const std::string& part) {
  std::ifstream in(run / "evaluate" / "results.json");
  const std::string report = hlm::test::read_text(run / "report.md");
  for (const auto& [name, d] : nlohmann::json::parse(in)["datasets"].items()) {
    ASSERT_TRUE(d.contains("parts")) << name;
    // The parts' table ends with the majority-class baseline, its class's Se 1 and +P its share.
    const std::string always = "| always " + d["majority_class"].get<std::string>() + " | ";
    const size_t row = report.find(always, report.find("### " + name + "\n"));
    ASSERT_NE(row, std::string::npos) << report;
    const std::string cells = report.substr(row, report.find('\n', row) - row);
    EXPECT_NE(cells.find("1.000 / " + hlm::eval::score_text(d["majority_baseline"])),
              std::string::npos)
        << cells;
    EXPECT_GT(d["items"].get<int64_t>(), 0) << name;
    EXPECT_EQ(d["macro_f1"], d["parts"][part]["macro_f1"]) << name << " as " << part;
    for (const auto& [c, scores] : d["classes"].items())
      for (const char* key : {"se", "ppv"})
        EXPECT_EQ(scores[key], d["parts"][part]["classes"][c][key]) << name << " " << c << key;
    if (d.contains("auroc")) {
      EXPECT_EQ(d["auroc"], d["parts"][part]["auroc"]) << name;
    }
    std::ifstream csv(run / "evaluate" / d["predictions"].get<std::string>());
    std::string line;
    std::getline(csv, line);
    const std::vector<std::string> header = csv_fields(line);
    // Each class's column of the blend beside its column of the part.
    std::vector<std::pair<size_t, size_t>> pairs;
    for (const auto& [c, unused] : d["classes"].items()) {
      const auto blend = std::find(header.begin(), header.end(), "p_" + c);
      const auto alone = std::find(header.begin(), header.end(), "p_" + part + "_" + c);
      ASSERT_NE(blend, header.end()) << "no column p_" << c << " in " << line;
      ASSERT_NE(alone, header.end()) << "no column p_" << part << "_" << c << " in " << line;
      pairs.emplace_back(size_t(blend - header.begin()), size_t(alone - header.begin()));
    }
    size_t checked = 0;
    while (std::getline(csv, line)) {
      const std::vector<std::string> fields = csv_fields(line);
      ASSERT_EQ(fields.size(), header.size()) << line;
      for (const auto& [blend, alone] : pairs) {
        EXPECT_EQ(fields[blend], fields[alone]) << header[blend] << " in " << line;
        ++checked;
      }
    }
    EXPECT_GT(checked, 0u) << name;
  }
}
}  // namespace

// Beside an AF segment head, trees read each segment's statistics of its RR features; at share
// 1 the blend scores as the trees alone, at 0 as the head alone, segment by segment. With
// validation records the share is fit on their segments, and trees_refit boosts again for the
// rounds they kept.
TEST(FinetuneEvaluate, AfTreesBlendWithTheSegmentHeadSegmentBySegment) {
  const std::string stage = "finetune[segment_beats=16]";
  for (const auto& [weight, part] : {std::pair{1, "trees"}, std::pair{0, "head"}}) {
    hlm::test::ScratchDir runs("hlm_finetune_af_trees");
    const auto run = run_with_trees_at_share(
        runs, "tests/fixtures/af_segments.yaml 'finetune.matrix.segment_beats=[16]'", weight);
    const auto names = hlm::test::stage_manifest(run, stage)["results"]["trees"]["statistics"];
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names[0], std::string(hlm::kRrFeatureNames[0]) + " mean");
    expect_scores_as_part(run, part);
    EXPECT_NE(hlm::test::read_text(run / "report.md").find("each segment's statistics"),
              std::string::npos);
  }
  hlm::test::ScratchDir runs("hlm_finetune_af_trees_fit");
  const auto fit = run_hlm("run tests/fixtures/af_segments.yaml --runs-dir " + runs.path.string() +
                           " 'finetune.matrix.segment_beats=[16]' finetune.trees=10 "
                           "finetune.validation_records=1 finetune.trees_refit=true");
  ASSERT_EQ(fit.exit_code, 0) << fit.output;
  const auto trees =
      hlm::test::stage_manifest(hlm::test::run_dir_of(fit.output), stage)["results"]["trees"];
  EXPECT_EQ(trees["weight_from"], "validation records' log loss");
  EXPECT_GT(trees["weight_items"].get<int64_t>(), 1) << "segments, not records";
  EXPECT_EQ(trees["refit"], true);

  // trees_leave_out: the trees read neither the named columns when fit nor when evaluate
  // scores; a prefix naming no column, or the key without trees, is refused before training.
  hlm::test::ScratchDir rate("hlm_finetune_af_trees_leave_out");
  const std::string leave_out = "run tests/fixtures/af_segments.yaml --runs-dir " +
                                rate.path.string() + " 'finetune.matrix.segment_beats=[16]'";
  const auto without_rate = run_hlm(leave_out +
                                    " finetune.trees=10 finetune.trees_weight=1 "
                                    "'finetune.trees_leave_out=[\"log(local RR / 1 s)\"]'");
  ASSERT_EQ(without_rate.exit_code, 0) << without_rate.output;
  const auto run = hlm::test::run_dir_of(without_rate.output);
  const auto fitted = hlm::test::stage_manifest(run, stage)["results"]["trees"];
  for (const auto& name : fitted["statistics"])
    EXPECT_NE(name.get<std::string>().rfind("log(local RR", 0), 0u) << name;
  EXPECT_EQ(fitted["leave_out"][0], "log(local RR / 1 s)");
  std::ifstream in(run / "evaluate" / "results.json");
  for (const auto& [name, d] : nlohmann::json::parse(in)["datasets"].items())
    EXPECT_EQ(d["macro_f1"], d["parts"]["trees"]["macro_f1"]) << name;
  expect_refused(run_hlm(leave_out + " finetune.trees=10 finetune.trees_weight=1 "
                                     "'finetune.trees_leave_out=[\"heart rate\"]'"),
                 "no column of the trees' rows begins with 'heart rate'");
  expect_refused(run_hlm(leave_out + " 'finetune.trees_leave_out=[\"log(local RR / 1 s)\"]'"),
                 "trees_leave_out keeps columns from the boosted trees, which trees: 0");
}

// Beside a beat head, trees read each beat's RR features and its code's centroid; at share 1
// the blend scores as the trees alone, at 0 as the head alone, on the held-out records and on
// another store: each beat's row is the one blended with its head probabilities.
TEST(FinetuneEvaluate, BeatTreesBlendWithTheHeadBeatByBeat) {
  for (const auto& [weight, part] : {std::pair{1, "trees"}, std::pair{0, "head"}}) {
    hlm::test::ScratchDir runs("hlm_finetune_beat_trees");
    const auto run = run_with_trees_at_share(
        runs, "tests/fixtures/finetune_cv.yaml 'finetune.matrix.backbone=[full]'", weight);
    const auto tuned = hlm::test::stage_manifest(run, "finetune[backbone=full,fold=0]");
    const auto& names = tuned["results"]["trees"]["statistics"];
    ASSERT_EQ(names.size(), size_t(hlm::kRrFeatureCount) + 64u) << names.dump();
    EXPECT_EQ(names[0], hlm::kRrFeatureNames[0]);
    EXPECT_EQ(names[hlm::kRrFeatureCount], "code centroid 0");
    expect_scores_as_part(run, part);
  }
}

// trees_refit: the beat trees are boosted again on the training and validation records
// together, for the rounds the validation record kept; the share of the blend stays the one
// fit on the first trees, which were only cut back on it. Refused where there is nothing to
// refit.
TEST(FinetuneEvaluate, BeatTreesRefitWithTheValidationRecordKeepTheirRoundsAndShare) {
  hlm::test::ScratchDir runs("hlm_finetune_beat_trees_refit");
  const std::string base = "run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                           " 'finetune.matrix.backbone=[full]' 'finetune.matrix.fold=[0]' "
                           "finetune.trees=1500";
  const std::string stage = "finetune[backbone=full,fold=0]";
  std::map<bool, nlohmann::json> trees;
  std::map<bool, std::string> saved;
  for (const bool refit : {false, true}) {
    const auto r = run_hlm(base + " finetune.trees_refit=" + (refit ? "true" : "false"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto run = hlm::test::run_dir_of(r.output);
    trees[refit] = hlm::test::stage_manifest(run, stage)["results"]["trees"];
    saved[refit] = hlm::test::read_text(run / stage / "trees.json");
    EXPECT_TRUE(fs::exists(run / "evaluate" / "results.json"));
  }
  // The validation record cut the rounds back, so keeping them is seen (not the 1500 asked).
  ASSERT_LT(trees[false]["rounds"].get<int>(), 1500) << trees[false].dump();
  EXPECT_EQ(trees[false]["refit"], false);
  EXPECT_EQ(trees[true]["refit"], true);
  EXPECT_EQ(trees[true]["rounds"], trees[false]["rounds"]);
  EXPECT_EQ(trees[true]["weight"], trees[false]["weight"]);
  EXPECT_EQ(trees[true]["weight_from"], "validation records' log loss");
  EXPECT_NE(saved[true], saved[false]);

  const auto no_validation = run_hlm(base +
                                     " finetune.trees_refit=true finetune.validation_records=0 "
                                     "finetune.trees_weight=1");
  expect_refused(no_validation, "trees_refit boosts the trees again");
  const auto no_trees = run_hlm("run tests/fixtures/finetune_cv.yaml --runs-dir " +
                                runs.path.string() + " finetune.trees_refit=true");
  expect_refused(no_trees, "trees_refit boosts the trees again");
}

// The trees' share and their refit both learn from the validation records' labels: a
// validation record without any (MIT-BIH 101 read with no annotator) is refused, naming what
// to change, instead of a share or rounds chosen on nothing. On the training side the same
// record is left out of the head's batches (a batch without a labelled beat has a NaN loss).
TEST(FinetuneEvaluate, BeatTreesRefuseAValidationRecordWithoutLabels) {
  HLM_REQUIRE_DATA("mitdb");
  // finetune draws its validation records with holdout_split(pool, count, split_seed + 2).
  const std::vector<std::string> pool{"101", "syn000", "syn001", "syn002"};
  auto validates_101 = [&](int split_seed) {
    return hlm::eval::holdout_split(pool, 1, uint64_t(split_seed) + 2).test ==
           std::vector<std::string>{"101"};
  };
  int unlabelled = 0, labelled = 0;
  while (!validates_101(unlabelled)) ASSERT_LT(++unlabelled, 100);
  while (validates_101(labelled)) ASSERT_LT(++labelled, 100);
  hlm::test::ScratchDir runs("hlm_finetune_unlabelled_validation");
  const std::string base = "run tests/fixtures/finetune_unlabelled_validation.yaml --runs-dir " +
                           runs.path.string() + " vars.mitdb_dir=" + hlm::test::data_path("mitdb") +
                           " vars.split_seed=";
  const std::string unlabelled_validation = base + std::to_string(unlabelled);
  expect_refused(run_hlm(unlabelled_validation), "the validation records have no labelled beat");
  expect_refused(run_hlm(unlabelled_validation + " finetune.trees_refit=true"),
                 "trees_refit boosts the trees again with the validation records, and none");
  // With a fixed share and no refit nothing is learnt from them, and the run goes through.
  const auto fixed = run_hlm(unlabelled_validation + " finetune.trees_weight=0.5");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.output;
  // One window a step: a step on one of 101's windows would have a NaN loss and stop the run.
  const auto trained =
      run_hlm(base + std::to_string(labelled) + " finetune.batch=1 finetune.steps=12");
  EXPECT_EQ(trained.exit_code, 0) << trained.output;
  EXPECT_NE(trained.output.find("windows hold no labelled beat and are left out"),
            std::string::npos)
      << trained.output;
}

// trees_descriptors: the trees of a beat head read the store's descriptors (here beat-vq's
// waveform) although the head does not, on the held-out records and on another store alike,
// all of them or those trees_descriptor_prefix names; refused without trees, for a store
// without descriptors (naming it), and for a prefix that is off, selects nothing or would be
// overridden by a head that reads every descriptor.
TEST(FinetuneEvaluate, BeatTreesReadTheStoresDescriptorsWhenAskedAndRefuseAStoreWithout) {
  hlm::test::ScratchDir runs("hlm_finetune_tree_descriptors");
  const std::string base = "run tests/fixtures/finetune_cv.yaml --runs-dir " + runs.path.string() +
                           " 'finetune.matrix.backbone=[full]'";
  const std::string shaped = base +
                             " tokenize.tokenizer.shape_descriptors=8"
                             " tokenize_more.tokenizer.shape_descriptors=8";
  const auto r = run_hlm(shaped + " finetune.trees=10 finetune.trees_descriptors=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run = hlm::test::run_dir_of(r.output);
  const auto tuned = hlm::test::stage_manifest(run, "finetune[backbone=full,fold=0]");
  const auto& names = tuned["results"]["trees"]["statistics"];
  ASSERT_EQ(names.size(), size_t(hlm::kRrFeatureCount) + 16u + 64u) << names.dump();
  // Named as the tokenize manifest names them: the waveform, then the waveform minus the template.
  EXPECT_EQ(names[hlm::kRrFeatureCount].get<std::string>().rfind("beat at ", 0), 0u) << names;
  EXPECT_EQ(names[hlm::kRrFeatureCount + 8].get<std::string>().rfind("beat minus template", 0), 0u)
      << names;
  EXPECT_EQ(tuned["results"]["trees"]["store_descriptors"], true);
  EXPECT_FALSE(tuned["results"]["head"].value("descriptors", false));
  std::ifstream in(run / "evaluate" / "results.json");
  const auto results = nlohmann::json::parse(in);
  for (const auto& [name, d] : results["datasets"].items())
    EXPECT_TRUE(d.contains("parts")) << name;

  // The prefix: the waveform minus the template alone, on the other store too (evaluate ran).
  const auto some = run_hlm(shaped +
                            " finetune.trees=10 finetune.trees_descriptors=true"
                            " 'finetune.trees_descriptor_prefix=beat minus template'");
  ASSERT_EQ(some.exit_code, 0) << some.output;
  const auto some_run = hlm::test::run_dir_of(some.output);
  const auto chosen = hlm::test::stage_manifest(some_run, "finetune[backbone=full,fold=0]");
  const auto& chosen_names = chosen["results"]["trees"]["statistics"];
  ASSERT_EQ(chosen_names.size(), size_t(hlm::kRrFeatureCount) + 8u + 64u) << chosen_names;
  EXPECT_EQ(chosen["results"]["trees"]["store_descriptor_columns"][0], 8);
  EXPECT_TRUE(fs::exists(some_run / "evaluate" / "results.json"));
  // Another store with as many descriptors, other ones in the columns the trees read (4 points
  // on two leads: its columns 8-15 are the second lead's), is refused by evaluate, naming both.
  const auto other_layout = run_hlm(
      base +
      " tokenize.tokenizer.shape_descriptors=8 tokenize_more.tokenizer.shape_descriptors=4"
      " tokenize_more.tokenizer.shape_descriptor_leads=2 finetune.trees=10"
      " finetune.trees_descriptors=true 'finetune.trees_descriptor_prefix=beat minus template'");
  expect_refused(other_layout,
                 "the boosted trees read its descriptor column 8 as 'beat minus template at "
                 "-0.250 s / template QRS', but stage 'tokenize_more' tokenized 'beat at -0.250 s "
                 "/ template QRS, lead 2' there");

  const auto without_trees = run_hlm(shaped + " finetune.trees_descriptors=true");
  expect_refused(without_trees, "trees_descriptors gives the store's descriptors");
  const auto bare = run_hlm(base + " finetune.trees=10 finetune.trees_descriptors=true");
  expect_refused(bare, "tokens.hlmt: the trees are to read the token store's descriptors");
  const auto prefix_off =
      run_hlm(shaped + " finetune.trees=10 finetune.trees_descriptor_prefix=beat");
  expect_refused(prefix_off, "trees_descriptor_prefix chooses among the descriptors");
  const auto typo = run_hlm(shaped +
                            " finetune.trees=10 finetune.trees_descriptors=true"
                            " finetune.trees_descriptor_prefix=bet");
  expect_refused(typo, "trees_descriptor_prefix='bet' selects none of the token store's 16");
  const auto head_reads_all = run_hlm(shaped +
                                      " finetune.trees=10 finetune.trees_descriptors=true"
                                      " finetune.descriptors=true"
                                      " finetune.trees_descriptor_prefix=beat");
  expect_refused(head_reads_all,
                 "descriptors: true gives the head, and so the trees of task beats, all of them");
}

// validation_covers_classes: of eight DS1 records, the two that can show S and V to early
// stopping while training keeps more of each are the validation records at every seed; a
// random draw mostly misses one of them. Refused where there are no beat classes to draw by.
TEST(FinetuneEvaluate, ValidationRecordsDrawnByClassShowSAndV) {
  HLM_REQUIRE_DATA("mitdb");
  hlm::test::ScratchDir runs("hlm_finetune_validation_classes");
  const std::string base = "run tests/fixtures/finetune_validation_classes.yaml --runs-dir " +
                           runs.path.string() + " vars.mitdb_dir=" + hlm::test::data_path("mitdb");
  const std::set<std::string> s_and_v{"119", "220"};
  int random_draws_missing = 0;
  for (const int seed : {1, 2, 3}) {
    for (const bool covering : {true, false}) {
      const auto r = run_hlm(base + " vars.split_seed=" + std::to_string(seed) +
                             (covering ? "" : " finetune.validation_covers_classes=false"));
      ASSERT_EQ(r.exit_code, 0) << r.output;
      const auto validation = as_set(stage_manifest(hlm::test::run_dir_of(r.output),
                                                    "finetune")["results"]["validation_records"]);
      if (covering)
        EXPECT_EQ(validation, s_and_v) << "seed " << seed;
      else if (validation != s_and_v)
        ++random_draws_missing;
    }
  }
  EXPECT_GT(random_draws_missing, 0);
  expect_refused(run_hlm(base + " finetune.validation_records=0"),
                 "validation_covers_classes draws the validation records of task beats");
  expect_refused(run_hlm(base + " finetune.task=af"),
                 "validation_covers_classes draws the validation records of task beats");
}

// validation_per_seed: the seeds of one fold draw their own validation records (at least two
// draws differ over four seeds) while the fold's test records stay put, and seed 0 keeps the
// draw it has without the key. Without it every seed keeps the same validation records.
TEST(FinetuneEvaluate, ValidationRecordsDrawnPerSeedLeaveTheFoldAlone) {
  HLM_REQUIRE_DATA("mitdb");
  hlm::test::ScratchDir runs("hlm_finetune_validation_per_seed");
  const std::string base = "run tests/fixtures/finetune_validation_classes.yaml --runs-dir " +
                           runs.path.string() + " vars.mitdb_dir=" + hlm::test::data_path("mitdb") +
                           " finetune.validation_covers_classes=false finetune.folds=4"
                           " finetune.fold=1";
  auto records_of = [&](const std::string& overrides) {
    const auto r = run_hlm(base + overrides);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto results = stage_manifest(hlm::test::run_dir_of(r.output), "finetune")["results"];
    return std::pair{as_set(results["validation_records"]), as_set(results["holdout_records"])};
  };
  const auto [unmoved_validation, fold_test] = records_of(" finetune.seed=0");
  std::set<std::set<std::string>> per_seed_draws;
  for (const int seed : {0, 1, 2, 3}) {
    const std::string s = " finetune.seed=" + std::to_string(seed);
    const auto [validation, test] = records_of(s + " finetune.validation_per_seed=true");
    EXPECT_EQ(test, fold_test) << "seed " << seed;
    for (const auto& name : validation) EXPECT_EQ(fold_test.count(name), 0u) << name;
    if (seed == 0) {
      EXPECT_EQ(validation, unmoved_validation);
    } else {
      EXPECT_EQ(records_of(s).first, unmoved_validation) << "seed " << seed;
    }
    per_seed_draws.insert(validation);
  }
  EXPECT_GE(per_seed_draws.size(), 2u);
}
