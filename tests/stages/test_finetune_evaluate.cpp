// finetune and evaluate through the hlm binary on small synthetic data
// (tests/fixtures/finetune_cv.yaml): record-wise cross-validation never puts a record on both
// sides and scores each record once; the backbone modes, seeds and early stopping act;
// results.json and the confusion plot are written; a checkpoint or an evaluation store of
// another tokenizer or codebook is refused with an error naming both; a bert checkpoint
// fine-tunes and is evaluated as a gpt one is. Segment tasks and head inputs:
// test_finetune_inputs.cpp; boosted trees: test_finetune_trees.cpp.
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
#include "support/finetune_cv.h"
#include "support/hlm_cli.h"
#include "support/wfdb_test_util.h"

namespace fs = std::filesystem;
using hlm::test::as_set;
using hlm::test::cross_validation_run;
using hlm::test::csv_fields;
using hlm::test::expect_refused;
using hlm::test::run_hlm;
using hlm::test::stage_manifest;

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
    EXPECT_EQ(c["scored"], "model");  // no trees: the head is the model
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
  EXPECT_NE(report.find("| holdout | backbone=full | model | macro_f1 |"), std::string::npos)
      << report;
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
