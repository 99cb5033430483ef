// finetune and evaluate on tests/fixtures/finetune_cv.yaml: segment tasks (AF from rhythm
// annotations, scored segment by segment or beat by beat) and the head's inputs (RR patterns,
// shape, rhythm, descriptors, a hidden layer) reach the head and another store, and are
// refused where they cannot act.
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
  EXPECT_NE(none.output.find("template_descriptors, shape_descriptors or p_wave_descriptors: true"),
            std::string::npos)
      << none.output;
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
