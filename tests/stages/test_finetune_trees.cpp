// finetune and evaluate on tests/fixtures/finetune_cv.yaml: boosted trees beside the head,
// blended with it item by item (at share 1 the blend scores as the trees, at 0 as the head),
// refitted with the validation records, reading the store's descriptors; validation records
// drawn by class and per seed.
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
// part's probabilities beside the blend's, and the blend's are `part`'s; paired by record, the
// blend differs from `part` by exactly nothing, and the head from the trees by their difference.
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
    // Paired by record: the blend is `part`, so it differs from it by nothing in any draw.
    EXPECT_EQ(d["parts"][part]["blend_minus_part"]["value"], 0.0) << name;
    EXPECT_EQ(d["parts"][part]["blend_minus_part"]["ci95"], nlohmann::json::array({0.0, 0.0}));
    EXPECT_EQ(d["parts_difference"]["of"], "head minus trees") << name;
    EXPECT_DOUBLE_EQ(d["parts_difference"]["value"].get<double>(),
                     d["parts"]["head"]["macro_f1"].get<double>() -
                         d["parts"]["trees"]["macro_f1"].get<double>());
    const auto& ci = d["parts_difference"]["ci95"];
    EXPECT_LE(ci[0].get<double>(), ci[1].get<double>()) << name;
    EXPECT_NE(report.find("Paired by record (macro_f1, 95 % interval): blend minus head "),
              std::string::npos);
    for (const auto& [c, scores] : d["classes"].items())
      for (const char* key : {"se", "ppv"})
        EXPECT_EQ(scores[key], d["parts"][part]["classes"][c][key]) << name << " " << c << key;
    // Class by class against the trees: the head's F1 and its difference, and the blend's, which
    // is `part`'s (nothing against the trees in any draw when `part` is the trees).
    EXPECT_NE(report.find("Each class's F1, and minus the trees' (paired by record"),
              std::string::npos);
    ASSERT_FALSE(d["parts_by_class"]["head"].empty()) << name;
    for (const auto& [c, unused] : d["parts_by_class"]["head"].items()) {
      const auto& head = d["parts_by_class"]["head"][c];
      const double trees_f1 = d["parts"]["trees"]["classes"][c]["f1"].get<double>();
      EXPECT_DOUBLE_EQ(head["f1"].get<double>(),
                       d["parts"]["head"]["classes"][c]["f1"].get<double>());
      EXPECT_DOUBLE_EQ(head["minus_trees"]["value"].get<double>(),
                       head["f1"].get<double>() - trees_f1)
          << name << " " << c;
      const auto& blend = d["parts_by_class"]["blend"][c];
      EXPECT_DOUBLE_EQ(blend["f1"].get<double>(),
                       d["parts"][part]["classes"][c]["f1"].get<double>());
      if (std::string(part) == "trees") {
        EXPECT_EQ(blend["minus_trees"]["value"], 0.0) << name << " " << c;
        EXPECT_EQ(blend["minus_trees"]["ci95"], nlohmann::json::array({0.0, 0.0}));
      }
    }
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
// overridden by a head that reads every descriptor. A head's own descriptors keep their names
// in the trees' columns.
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

  // A head that reads the descriptors gives them to the trees under the manifest's names, which
  // trees_leave_out can name (under "descriptor J" they could not, and checking the prefixes
  // before the descriptors' scaling was fitted stopped the stage with an internal error).
  const auto left_out = run_hlm(shaped +
                                " finetune.trees=10 finetune.descriptors=true"
                                " 'finetune.trees_leave_out=[\"beat at \"]'");
  ASSERT_EQ(left_out.exit_code, 0) << left_out.output;
  const auto kept = hlm::test::stage_manifest(hlm::test::run_dir_of(left_out.output),
                                              "finetune[backbone=full,fold=0]")["results"]["trees"];
  ASSERT_EQ(kept["statistics"].size(), size_t(hlm::kRrFeatureCount) + 8u + 64u) << kept;
  EXPECT_EQ(kept["statistics"][hlm::kRrFeatureCount].get<std::string>().rfind("beat minus", 0), 0u)
      << kept;
  for (const auto& name : kept["statistics"])
    EXPECT_NE(name.get<std::string>().rfind("beat at ", 0), 0u) << name;

  // A head that reads descriptors from a store that has none is refused before training, the
  // trees' column names not asked for.
  expect_refused(run_hlm(base + " finetune.trees=10 finetune.descriptors=true"
                                " 'finetune.trees_leave_out=[\"beat at \"]'"),
                 "the head's descriptors input needs a token store with descriptors");

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

// descriptor_prefix: the head reads only the descriptors whose names begin with it (here the
// waveform minus the template, columns 8-15 of beat-vq's 16), standardised, and the trees of
// task beats read them as the head's inputs; evaluate reads the same columns of the other store,
// and refuses one that names other descriptors there. Refused with the head's descriptors off,
// and for a prefix that selects nothing.
TEST(FinetuneEvaluate, AHeadReadsOnlyTheDescriptorsItsPrefixNames) {
  hlm::test::ScratchDir runs("hlm_finetune_head_descriptor_prefix");
  const std::string shaped = "run tests/fixtures/finetune_cv.yaml --runs-dir " +
                             runs.path.string() +
                             " 'finetune.matrix.backbone=[full]'"
                             " tokenize.tokenizer.shape_descriptors=8"
                             " tokenize_more.tokenizer.shape_descriptors=8 finetune.trees=10";
  const auto r =
      run_hlm(shaped + " finetune.descriptors=true 'finetune.descriptor_prefix=beat minus'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run = hlm::test::run_dir_of(r.output);
  const auto tuned = hlm::test::stage_manifest(run, "finetune[backbone=full,fold=0]");
  const auto& head = tuned["results"]["head"];
  EXPECT_EQ(head["descriptor_columns"], nlohmann::json({8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(head["descriptor_mean"].size(), 8u);
  const auto& names = tuned["results"]["trees"]["statistics"];
  EXPECT_EQ(names.size(), size_t(hlm::kRrFeatureCount) + 8u + 64u) << names.dump();
  EXPECT_TRUE(fs::exists(run / "evaluate" / "results.json"));
  const std::string report = hlm::test::read_text(hlm::test::report_path(r.output));
  EXPECT_NE(report.find("8 descriptors per beat (those of descriptor_prefix, store columns 8 ... "
                        "15)"),
            std::string::npos)
      << report;

  // The columns' names are kept: another store with other descriptors there is refused by
  // evaluate, naming both, whether the head reads some of its columns or all of them.
  EXPECT_EQ(head["descriptor_names"].size(), 8u);
  EXPECT_EQ(head["descriptor_names"][0].get<std::string>().rfind("beat minus template", 0), 0u)
      << head;
  const std::string other_layout =
      " tokenize_more.tokenizer.shape_descriptors=4 "
      "tokenize_more.tokenizer.shape_descriptor_leads=2";
  const std::string other_base = "run tests/fixtures/finetune_cv.yaml --runs-dir " +
                                 runs.path.string() +
                                 " 'finetune.matrix.backbone=[full]'"
                                 " tokenize.tokenizer.shape_descriptors=8 finetune.trees=10" +
                                 other_layout;
  expect_refused(
      run_hlm(other_base + " finetune.descriptors=true 'finetune.descriptor_prefix=beat minus'"),
      "the head read its descriptor column 8 as 'beat minus template at -0.250 s / template QRS', "
      "but stage 'tokenize_more' tokenized 'beat at -0.250 s / template QRS, lead 2' there");
  expect_refused(run_hlm(other_base + " finetune.descriptors=true"),
                 "the head read its descriptor column 1 as 'beat at -0.157 s / template QRS', "
                 "but stage 'tokenize_more' tokenized 'beat at -0.033 s / template QRS' there");

  const auto off = run_hlm(shaped + " 'finetune.descriptor_prefix=beat minus'");
  expect_refused(off, "descriptor_prefix chooses among the descriptors the head reads");
  const auto typo = run_hlm(shaped + " finetune.descriptors=true finetune.descriptor_prefix=bet");
  expect_refused(typo, "descriptor_prefix='bet' selects none of the token store's 16");
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
  expect_refused(run_hlm(base + " finetune.task=af finetune.segment_beats=16"),
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
