// Every key a stage declares must act. Training keys must reach the options the training loop
// runs with; every other key is listed here with where it acts, so a new key cannot be added
// without saying so; and the fine-tune loop, which once ignored most of its keys, is checked
// by behaviour through the hlm binary.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "engine/stage.h"
#include "stages/train_params.h"
#include "support/hlm_cli.h"
#include "train/train_options.h"

namespace fs = std::filesystem;

namespace {

// Keys that are not training options, with where they act.
const std::map<std::string, std::string> kOtherKeys = {
    {"tokenize.datasets", "records read (and the cache key's data part)"},
    {"tokenize.tokenizer", "the tokenizer plugin and its params"},
    {"tokenize.threads", "records tokenized in parallel"},
    {"tokenize.fit_sample_cap", "beats kept for the codebook fit (FitSample capacity)"},
    {"pretrain.model", "the model plugin"},
    {"pretrain.backend", "the process-group plugin of multi-rank runs"},
    {"pretrain.world_size", "ranks launched"},
    {"pretrain.max_restarts", "restarts of a failed group of ranks"},
    {"finetune.holdout_records", "records left out of fine-tuning, evaluated later"},
    {"finetune.holdout_tail", "tail of every other record left out"},
    {"finetune.records", "records fine-tuning may use (FinetuneEvaluate.SplitKeysAct)"},
    {"finetune.folds", "record-wise folds (FinetuneEvaluate.CrossValidation...)"},
    {"finetune.fold", "the test fold (FinetuneEvaluate.CrossValidation...)"},
    {"finetune.split_seed", "the record shuffle (FinetuneEvaluate.SplitKeysAct)"},
    {"finetune.labelled_fraction", "training records kept (FinetuneEvaluate.SplitKeysAct)"},
    {"finetune.validation_records", "early-stopping records (FinetuneEvaluate.*)"},
    {"finetune.validation_covers_classes",
     "validation records drawn by beat class (FinetuneEvaluate.ValidationRecordsDrawnByClass...)"},
    {"finetune.validation_per_seed",
     "validation records per seed (FinetuneEvaluate.ValidationRecordsDrawnPerSeed...)"},
    {"finetune.eval_every", "validation checks (FinetuneEvaluate.BackboneModes...)"},
    {"finetune.patience", "when training stops (FinetuneEvaluate.BackboneModes...)"},
    {"finetune.backbone", "full, frozen or scratch (FinetuneEvaluate.BackboneModes...)"},
    {"finetune.rr_features", "the head's input (FinetuneEvaluate.SplitKeysAct)"},
    {"finetune.record_rhythm_features",
     "the head's input (FinetuneEvaluate.RecordRhythmFeaturesReachTheHeadAndAnotherStore)"},
    {"finetune.rhythm_context_features",
     "the head's input (FinetuneEvaluate.RhythmContextFeaturesReachTheHeadAndAnotherStore)"},
    {"finetune.rr_pattern_features",
     "segment heads' inputs (FinetuneEvaluate.RrPatternFeaturesReachTheSegmentHead...)"},
    {"finetune.rr_within_context",
     "the head's input (FinetuneEvaluate.RrWithinContextReachesTheHeadAndAnotherStore)"},
    {"finetune.morphology_features",
     "the head's input (FinetuneEvaluate.MorphologyFeaturesReachTheHeadAndAnotherStore)"},
    {"finetune.descriptors",
     "the head's input (FinetuneEvaluate.DescriptorsReachTheHeadAndAnotherStore)"},
    {"finetune.record_statistics",
     "the record head's input (ClinicalWorkflows.Challenge2017RecordStatisticsReachTheHead...)"},
    {"finetune.head_hidden",
     "the head's layers (FinetuneEvaluate.AHiddenHeadLayerTrainsAndIsRebuiltForEvaluation)"},
    {"finetune.class_weights", "the loss weights (FinetuneEvaluate.SplitKeysAct)"},
    {"finetune.head_lr_scale", "the head's learning rate (FinetuneEvaluate.SplitKeysAct)"},
    {"finetune.task", "beats, af or record (FinetuneEvaluate.Segment...)"},
    {"finetune.segment_beats", "segment length (FinetuneEvaluate.Segment...)"},
    {"finetune.min_segment_beats", "shortest record scored (FinetuneEvaluate.RecordTask...)"},
    {"finetune.classes", "the record classes (FinetuneEvaluate.RecordTask...)"},
    {"finetune.trees",
     "boosted trees beside the head (ClinicalWorkflows.Challenge2017ReportsThe...)"},
    {"finetune.trees_weight",
     "the trees' share (ClinicalWorkflows.Challenge2017TreesWeightActs...)"},
    {"finetune.trees_class_weights",
     "the trees' class weights (ClinicalWorkflows.Challenge2017TreesWeightActs...)"},
    {"finetune.trees_refit",
     "the trees boosted again with the validation records "
     "(ClinicalWorkflows.Challenge2017TreesWeightActs..., FinetuneEvaluate.BeatTreesRefit...)"},
    {"finetune.trees_descriptors",
     "the store's descriptors to the trees (FinetuneEvaluate.BeatTreesReadTheStores..., "
     "ClinicalWorkflows.Challenge2017ReportsThe...)"},
    {"finetune.descriptor_prefix",
     "which descriptors the head reads (FinetuneEvaluate.AHeadReadsOnlyTheDescriptors...)"},
    {"finetune.trees_descriptor_prefix",
     "which of them, by name (FinetuneEvaluate.BeatTreesReadTheStores...)"},
    {"finetune.trees_annotated_beats",
     "other patients' annotated beats as rows of the beat trees "
     "(ClinicalWorkflows.MitdbAamiCrossValidates..., AnnotatedBeatRows.*)"},
    {"finetune.trees_annotated_share",
     "their share of each class's weight (AnnotatedBeatRows.JoinTheTrainingRows..., "
     "ClinicalWorkflows.MitdbAamiCrossValidates...)"},
    {"finetune.trees_leave_out",
     "columns the trees do not read (FinetuneEvaluate.AfTreesBlendWithTheSegmentHead...)"},
    {"evaluate.records", "records evaluated"},
    {"evaluate.published", "the literature table (ClinicalWorkflows.*)"},
    {"evaluate.published_points",
     "Se at each published +P or specificity (ClinicalWorkflows.MitdbAamiCrossValidates..., "
     "ClinicalWorkflows.AfRhythmScores..., ClinicalWorkflows.MitdbAamiRefusesAPublished...)"},
    {"evaluate.protocol_note", "under the literature table (ClinicalWorkflows.*)"},
    {"evaluate.by_beat",
     "task af scored beat by beat (FinetuneEvaluate.SegmentTaskLabelsAf..., "
     "FinetuneEvaluate.ByBeatKeysAreRefused..., ClinicalWorkflows.AfRhythmScores...)"},
    {"evaluate.by_beat_overlap",
     "beats from overlapping segments (FinetuneEvaluate.ByBeatOverlapScoresEachBeat...)"},
    {"evaluate.datasets", "token stores scored (FinetuneEvaluate.ResultsJson...)"},
    {"evaluate.threads", "intra-op threads (set_compute_threads)"},
    {"scale-analysis.model", "the model plugin"},
    {"scale-analysis.backend", "the process-group plugin"},
    {"scale-analysis.world_sizes", "rows of the table"},
    {"scale-analysis.grid", "points of the study (test_scale_analysis)"},
    {"scale-analysis.repeats", "runs per point (test_scale_analysis)"},
    {"scale-analysis.scaling", "steps per rank (test_scale_analysis)"},
    {"scale-analysis.oversubscribe", "points skipped (test_scaling_grid)"},
    {"scale-analysis.ceiling", "independent runs (test_scale_analysis)"},
    {"scale-analysis.cluster", "hardware predicted (test_scale_analysis)"},
    {"scale-analysis.overlap", "the model's overlap (test_scale_analysis)"},
    {"pretrain.device", "refused before any work where it cannot run (DeviceRefusal.*)"},
    {"finetune.device", "the GPU (WorkflowOnCuda.*); refused where it cannot run"},
    {"evaluate.device", "the GPU (WorkflowOnCuda.*); refused where it cannot run"},
    {"scale-analysis.device", "the ranks' device, as pretrain's (PretrainOnCuda.*)"},
    {"pretrain.from", "another run's checkpoint, nothing trained (Foundation.*)"},
    {"pretrain.store_weights",
     "each store's share of the windows (WindowSampler.StoresShareTheWindowsByWeight..., "
     "Foundation.StoreWeightsAreCheckedBeforeAnyStageRuns)"},
    {"tokenize.codebook_from", "another run's codebook, nothing fitted (Foundation.*)"},
};

// Another value of the parameter's type, within its range ("int[1,]": the default + 1; a
// fraction in [0, 1) moves towards 0.5).
nlohmann::json changed(const hlm::workflow::ParamSpec& spec) {
  const nlohmann::json value = nlohmann::json::parse(spec.default_json);
  const std::string type = spec.type.substr(0, spec.type.find_first_of("[("));
  if (type == "bool") return !value.get<bool>();
  if (type == "int") return value.get<int64_t>() + 1;
  if (type == "float" && spec.type.find(",1") != std::string::npos)
    return (value.get<double>() + 0.5) / 2;
  if (type == "float") return value.get<double>() + 0.25;
  ADD_FAILURE() << spec.name << ": no changed value for type " << spec.type;
  return value;
}

nlohmann::json options_with(const nlohmann::json& params) {
  return hlm::TrainOptions::from_params(hlm::training_options_json(params)).to_json();
}

TEST(StageParams, EveryDeclaredKeyActsOrIsNamedWithWhereItActs) {
  std::set<std::string> training;
  for (const auto& spec : hlm::training_param_specs("1", "0.1")) training.insert(spec.name);
  for (const auto& kind : hlm::stage_kinds())
    for (const auto& spec : kind.params) {
      const std::string key = kind.kind + "." + spec.name;
      if (!training.count(spec.name)) {
        EXPECT_TRUE(kOtherKeys.count(key)) << key << " is declared but acts nowhere named here";
        continue;
      }
      const nlohmann::json base = {{spec.name, nlohmann::json::parse(spec.default_json)}};
      const nlohmann::json other = {{spec.name, changed(spec)}};
      EXPECT_NE(options_with(base), options_with(other))
          << key << " does not reach the training options";
    }
}

TEST(StageParams, FineTuningDeclaresNoKeyItsLoopIgnores) {
  std::set<std::string> declared;
  for (const auto& spec : hlm::stage_kind("finetune").params) declared.insert(spec.name);
  for (const std::string ignored :
       {"bucket_cap_mb", "eval_batches", "holdout_fraction", "profile_step", "bind_cores"})
    EXPECT_FALSE(declared.count(ignored)) << ignored;
}

// One finetune run per changed key, reusing the cached tokenize and pretrain stages.
class FinetuneKeys : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { runs_ = new hlm::test::ScratchDir("hlm_finetune_keys"); }
  static void TearDownTestSuite() { delete runs_; }

  struct Finetuned {
    std::vector<double> losses;
    std::string output;
    fs::path dir;
  };
  static Finetuned finetune(const std::string& overrides) {
    const auto r = hlm::test::run_hlm(
        "run tests/fixtures/every_stage.yaml --runs-dir " + runs_->path.string() +
        " finetune.steps=12 finetune.log_every=100 scale.world_sizes=[1] "
        "scale.steps=1 " +
        overrides);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    Finetuned out;
    out.output = r.output;
    out.dir = hlm::test::run_dir_of(r.output) / "finetune";
    std::ifstream in(out.dir / "manifest.json");
    const auto manifest = nlohmann::json::parse(in);
    out.losses = manifest["results"]["losses"].get<std::vector<double>>();
    return out;
  }
  static hlm::test::ScratchDir* runs_;
};
hlm::test::ScratchDir* FinetuneKeys::runs_ = nullptr;

TEST_F(FinetuneKeys, AccumulationBf16AndTheScheduleChangeTheLosses) {
  const auto base = finetune("");
  ASSERT_EQ(base.losses.size(), 12u);
  for (const std::string key :
       {"finetune.accumulation=2", "finetune.bf16=true", "finetune.warmup_steps=2",
        "finetune.grad_clip=0.01", "finetune.batch=4", "finetune.seed=5"}) {
    const auto other = finetune(key);
    EXPECT_NE(other.losses, base.losses) << key;
  }
}

TEST_F(FinetuneKeys, CheckpointAndLogKeysAct) {
  const auto checkpointed =
      finetune("finetune.checkpoint_every=2 finetune.keep_checkpoints=2 finetune.log_every=4");
  std::set<std::string> kept;
  for (const auto& e : fs::directory_iterator(checkpointed.dir / "checkpoints"))
    kept.insert(e.path().filename().string());
  EXPECT_EQ(kept, (std::set<std::string>{"step_10", "step_12"}));
  EXPECT_NE(checkpointed.output.find("finetune: step 8/12"), std::string::npos)
      << checkpointed.output;
  EXPECT_EQ(checkpointed.output.find("finetune: step 6/12"), std::string::npos)
      << checkpointed.output;
}

}  // namespace
