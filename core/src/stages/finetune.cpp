// finetune: foundation checkpoint + labelled token store -> beat classifier (N/S/V/F/Q).
// Which records train is decided by record, never by beat: `records` (default all), minus
// holdout_records, minus the test fold of a k-fold cross-validation, minus the validation
// records early stopping watches; holdout_tail keeps the end of every record out instead
// (intra-patient). The head sits on a fine-tuned, frozen or randomly initialised backbone.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "engine/stage.h"
#include "eval/record_split.h"
#include "hlm/errors.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "ops/compute.h"
#include "stages/finetune_plan.h"
#include "stages/finetune_report.h"
#include "stages/finetune_trees.h"
#include "stages/train_params.h"
#include "tasks/annotated_beat_rows.h"
#include "tasks/beat_classifier.h"
#include "tasks/beat_features.h"
#include "tasks/beat_tree_inputs.h"
#include "tasks/record_statistics.h"
#include "tasks/score_items.h"
#include "tasks/segment_classifier.h"
#include "tasks/segment_labels.h"
#include "train/checkpoint.h"
#include "train/train_device.h"
#include "train/train_options.h"

namespace hlm {
namespace {

std::vector<std::string> names_of(const TokenStore& store, const std::vector<size_t>& indices) {
  std::vector<std::string> out;
  for (size_t i : indices) out.push_back(store.record(i).name);
  return out;
}

// A checkpoint reads token ids: those of another tokenizer or codebook mean other beats.
void expect_same_tokens(const StageContext& ctx, const nlohmann::json& foundation,
                        const TokenStore& store, const nlohmann::json& model_block) {
  const std::string trained_on = foundation.at("results").value("tokenizer", std::string());
  if (trained_on != store.tokenizer_identity())
    throw ConfigError(
        "stage '{}': the checkpoint was pretrained on tokens of {} but the token store {} holds "
        "tokens of {}; fine-tune on the store of the tokenize stage the pretrain stage used (or "
        "tokenize with the same tokenizer and codebook)",
        ctx.instance.id, trained_on.empty() ? "an unknown tokenizer" : trained_on, store.path(),
        store.tokenizer_identity());
  if (model_block.at("vocab_size").get<int64_t>() < int64_t(store.vocab_size()))
    throw ConfigError("stage '{}': the model's vocab_size {} is smaller than the {} tokens of {}",
                      ctx.instance.id, model_block.at("vocab_size").get<int64_t>(),
                      store.vocab_size(), store.path());
}

// A class the validation records show has at least this many beats there: fewer make its F1,
// and so the macro F1 early stopping follows, jump with a beat or two.
constexpr int64_t kCoverMinBeats = 20;

// validation_per_seed moves the validation draw's seed by this much per fine-tuning seed: far
// from the small offsets the other draws take from split_seed, so no two draws coincide.
constexpr uint64_t kValidationSeedStride = 1000003;

// Labelled beats of each AAMI class in each of these records.
eval::ClassCounts beat_class_counts(const TokenStore& store,
                                    const std::vector<std::string>& records) {
  eval::ClassCounts counts;
  for (const auto& name : records) {
    const TokenStore::RecordView r = store.record(store.find_record(name));
    std::vector<int64_t>& items = counts[name];
    items.assign(kBeatClassCount, 0);
    for (uint64_t k = r.offset; k < r.offset + r.length; ++k)
      if (store.labels()[k] < kBeatClassCount) ++items[store.labels()[k]];
  }
  return counts;
}

// The training records after the record-wise splits; fills the results' record lists.
std::vector<std::string> training_records(const nlohmann::json& p, const TokenStore& store,
                                          std::vector<std::string>& holdout,
                                          std::vector<std::string>& validation) {
  const std::vector<std::string> listed = p.at("records");
  for (const auto& name : listed)
    if (store.find_record(name) == store.record_count())
      throw ConfigError("finetune: record '{}' of 'records' is not in the token store {}", name,
                        store.path());
  std::vector<std::string> pool =
      names_of(store, listed.empty() ? select_records(store, {}, /*exclude=*/true)
                                     : select_records(store, listed, /*exclude=*/false));
  pool.erase(std::remove_if(pool.begin(), pool.end(),
                            [&](const std::string& r) {
                              return std::find(holdout.begin(), holdout.end(), r) != holdout.end();
                            }),
             pool.end());
  const uint64_t seed = p.at("split_seed").get<uint64_t>();
  const bool covering = p.at("validation_covers_classes");
  if (covering && (p.at("task") != "beats" || p.at("validation_records").get<int>() == 0))
    throw ConfigError(
        "finetune: validation_covers_classes draws the validation records of task beats by "
        "their beat classes; here task is {} and validation_records={} (set task: beats and "
        "validation_records, or drop validation_covers_classes)",
        p.at("task").get<std::string>(), p.at("validation_records").get<int>());
  if (const int folds = p.at("folds"); folds > 0) {
    // Both would hold records out: the named ones beside a fold of the rest, which no
    // protocol means.
    if (!holdout.empty())
      throw ConfigError(
          "finetune: holdout_records {} and folds={} would both hold records out; give one of "
          "them (folds: 0 holds out the named records alone)",
          nlohmann::json(holdout).dump(), folds);
    const auto split = eval::kfold_split(pool, folds, p.at("fold"), seed);
    holdout.insert(holdout.end(), split.test.begin(), split.test.end());
    pool = split.train;
  }
  if (const double labelled = p.at("labelled_fraction"); labelled < 1.0) {
    // The first records of a seeded shuffle: a smaller fraction is a subset of a larger one.
    const int keep = std::max(1, int(std::ceil(labelled * double(pool.size()))));
    if (size_t(keep) < pool.size()) pool = eval::holdout_split(pool, keep, seed + 1).test;
  }
  if (const int count = p.at("validation_records"); count > 0) {
    // Per seed, each member of a seed ensemble keeps other records for early stopping, so
    // together they train on every record of the fold; the folds themselves stay put.
    const uint64_t draw = seed + 2 +
                          (p.at("validation_per_seed").get<bool>()
                               ? kValidationSeedStride * p.at("seed").get<uint64_t>()
                               : 0);
    const auto split = covering ? eval::class_covering_split(beat_class_counts(store, pool), count,
                                                             draw, kCoverMinBeats)
                                : eval::holdout_split(pool, count, draw);
    validation = split.test;
    pool = split.train;
  }
  return pool;
}

// The trees keys act only with trees; a weight fit on the validation records needs some; the
// trees of a record or segment need per-beat inputs to summarise. Checked before any training.
void expect_tree_keys(const StageContext& ctx, const std::string& task, const HeadOptions& head,
                      bool codebook) {
  const auto& p = ctx.params();
  const int rounds = p.at("trees");
  const double weight = p.at("trees_weight");
  if (!(weight >= 0.0 && weight <= 1.0) && weight != kWeightFromValidation)
    throw ConfigError(
        "stage '{}': trees_weight={} must be from 0 to 1, or -1 to fit it on the "
        "validation records",
        ctx.instance.id, weight);
  if (rounds == 0 && weight != kWeightFromValidation)
    throw ConfigError(
        "stage '{}': trees_weight weighs the boosted trees, which trees: 0 turns "
        "off; set trees to a number of rounds or drop trees_weight",
        ctx.instance.id);
  if (p.at("trees_class_weights").get<std::string>() != "head" && rounds == 0)
    throw ConfigError(
        "stage '{}': trees_class_weights weighs the classes for the boosted trees, which "
        "trees: 0 turns off (set trees, or drop trees_class_weights)",
        ctx.instance.id);
  if (p.at("trees_refit").get<bool>() &&
      (rounds == 0 || p.at("validation_records").get<int>() == 0))
    throw ConfigError(
        "stage '{}': trees_refit boosts the trees again on the training and validation records "
        "together; here trees={} and validation_records={} (it needs both; or drop "
        "trees_refit)",
        ctx.instance.id, rounds, p.at("validation_records").get<int>());
  if (rounds > 0 && weight == kWeightFromValidation && p.at("validation_records").get<int>() == 0)
    throw ConfigError(
        "stage '{}': trees_weight -1 fits the trees' share on the validation records, and "
        "validation_records is 0; set validation_records or a trees_weight from 0 to 1",
        ctx.instance.id);
  // What a record's or segment's statistics summarise (rhythm_context_features are task beats'
  // alone).
  const bool inputs = head.rr_features || head.record_rhythm_features || head.descriptors;
  const bool store_inputs = p.at("trees_descriptors").get<bool>();
  const bool prefix = !p.at("trees_descriptor_prefix").get<std::string>().empty();
  if (rounds > 0 && task != "beats" && !inputs && !store_inputs)
    throw ConfigError(
        "stage '{}': trees summarise the head's per-beat inputs over each {}, and none is on; "
        "set rr_features, record_rhythm_features, descriptors or trees_descriptors, or "
        "trees: 0",
        ctx.instance.id, statistics_unit(task));
  if (!p.at("trees_annotated_beats").empty() && (rounds == 0 || task != "beats"))
    throw ConfigError(
        "stage '{}': trees_annotated_beats gives other patients' annotated beats to the beat "
        "trees of task beats; here task={} and trees={} (set task: beats and trees, or drop "
        "trees_annotated_beats)",
        ctx.instance.id, task, rounds);
  if (p.at("trees_annotated_beats").empty() && p.at("trees_annotated_share").get<double>() != 0.5)
    throw ConfigError(
        "stage '{}': trees_annotated_share weighs the annotated beats of trees_annotated_beats, "
        "which lists none (list some, or drop trees_annotated_share)",
        ctx.instance.id);
  // Their form, folders and files, before any training.
  expect_annotated_files(annotated_sources(ctx));
  if (!p.at("trees_leave_out").empty() && rounds == 0)
    throw ConfigError(
        "stage '{}': trees_leave_out keeps columns from the boosted trees, which trees: 0 turns "
        "off (set trees, or drop trees_leave_out)",
        ctx.instance.id);
  if (store_inputs && rounds == 0)
    throw ConfigError(
        "stage '{}': trees_descriptors gives the store's descriptors to the boosted trees, which "
        "trees: 0 turns off (set trees, or drop trees_descriptors)",
        ctx.instance.id);
  if (prefix && !store_inputs)
    throw ConfigError(
        "stage '{}': trees_descriptor_prefix chooses among the descriptors trees_descriptors "
        "gives the trees, and trees_descriptors is off (set it to true, or drop the prefix)",
        ctx.instance.id);
  // Task beats: with descriptors the head reads every one of them (or descriptor_prefix's), and
  // the trees read the head's inputs. (A record's trees read the chosen ones by their median
  // instead of nine statistics.)
  if (prefix && head.descriptors && task == "beats")
    throw ConfigError(
        "stage '{}': trees_descriptor_prefix keeps some of the store's descriptors from the "
        "trees, and descriptors: true gives the head, and so the trees of task beats, all of "
        "them or descriptor_prefix's (drop one of the two)",
        ctx.instance.id);
  if (rounds > 0 && task == "beats" && !inputs && !head.rhythm_context_features &&
      !head.rr_within_context && !head.morphology_features && !codebook)
    throw ConfigError(
        "stage '{}': trees read each beat's inputs and its code's centroid, and there are "
        "neither; set rr_features, record_rhythm_features, rhythm_context_features, "
        "rr_within_context, morphology_features or descriptors, "
        "tokenize with a fitted beat-vq codebook, or set trees: 0",
        ctx.instance.id);
}

// descriptor_prefix: the head reads only the store's descriptors whose names begin with it
// (head.descriptor_columns). Refused without descriptors: true, or when it selects none.
void choose_head_descriptors(const StageContext& ctx, HeadOptions& head,
                             const std::vector<std::string>& names) {
  const std::string prefix = ctx.params().at("descriptor_prefix");
  if (prefix.empty()) return;
  if (!head.descriptors)
    throw ConfigError(
        "stage '{}': descriptor_prefix chooses among the descriptors the head reads, and "
        "descriptors is off (set descriptors: true, or drop descriptor_prefix)",
        ctx.instance.id);
  head.descriptor_columns =
      select_store_descriptors(names, prefix, "stage '" + ctx.instance.id + "': descriptor_prefix")
          .columns;
}

// The tokenize manifest's names of the store columns the head reads as its descriptors, in its
// input order: evaluate checks another store by them. None where the manifest does not name
// every column (a store tokenized before descriptors were named).
std::vector<std::string> head_descriptor_names(const HeadOptions& head, const TokenStore& store,
                                               const nlohmann::json& tokens) {
  const auto names = tokens.at("results").value("descriptors", std::vector<std::string>());
  if (names.size() != store.descriptor_count()) return {};
  std::vector<std::string> out;
  for (const size_t column : head_descriptor_columns(head, names.size()))
    out.push_back(names.at(column));
  return out;
}

// Refuses, before any training, options that cannot act together (trees keys, trees_leave_out
// prefixes, head features of another task) and sets the head's descriptor columns
// (descriptor_prefix) and their names; returns the store's descriptors the trees read
// beside the head's inputs (a beat's trees: none when the head reads them all; a record's: their
// medians).
StoreDescriptorColumns checked_options(const StageContext& ctx, const std::string& task,
                                       HeadOptions& head, const TokenStore& store,
                                       const nlohmann::json& tokens) {
  expect_tree_keys(ctx, task, head,
                   !tokens.at("artifacts").value("codebook", std::string()).empty());
  StoreDescriptorColumns store_columns;
  const auto& p = ctx.params();
  const std::vector<std::string> descriptor_names =
      tokens.at("results").value("descriptors", std::vector<std::string>());
  choose_head_descriptors(ctx, head, descriptor_names);
  if (head.descriptors) {
    expect_head_descriptors(store);
    head.descriptor_names = head_descriptor_names(head, store, tokens);
  }
  const bool trees_descriptors = p.at("trees_descriptors");
  if (trees_descriptors) expect_tree_descriptors(store);
  if (trees_descriptors && (!head.descriptors || task != "beats")) {
    store_columns =
        select_store_descriptors(descriptor_names, p.at("trees_descriptor_prefix"),
                                 "stage '" + ctx.instance.id + "': trees_descriptor_prefix");
  }
  // Every prefix of trees_leave_out must name columns: checked on the columns' names, which
  // follow from the options (no row is made).
  if (const auto left_out = trees_leave_out(ctx); !left_out.empty()) {
    if (head.descriptors && head.descriptor_names.empty())
      throw ConfigError(
          "stage '{}': trees_leave_out names the trees' columns, and the tokenize manifest of "
          "this token store does not name its descriptors (tokenized before they were named); "
          "tokenize again, or drop trees_leave_out",
          ctx.instance.id);
    TreeRows names;
    names.names =
        task == "beats"
            ? BeatTreeInputs::column_names(
                  head, tokens.at("artifacts").value("codebook", std::string()), store_columns)
            : record_statistics_names(head, store_columns, statistics_unit(task));
    try {
      without_columns(names, left_out);
    } catch (const ConfigError& e) {
      throw ConfigError("stage '{}': {}", ctx.instance.id, e.what());
    }
  }
  try {
    head.check_task(task);
  } catch (const ConfigError& e) {
    throw ConfigError("stage '{}': {}", ctx.instance.id, e.what());
  }
  return store_columns;
}

// What both tasks' fine-tuning reads: the stage, its options, the model and the tokens, and the
// records it trains and validates on.
struct FinetuneInputs {
  StageContext& ctx;
  const nlohmann::json& p;
  const nlohmann::json& tokens;  // the tokenize stage's manifest
  std::shared_ptr<Model> model;
  const TokenStore& store;
  const TrainOptions& options;
  const std::vector<std::string>& train;
  const std::vector<std::string>& validation;
  double tail;  // holdout_tail
  const StoreDescriptorColumns& store_columns;
  const std::string& codebook;  // for morphology_features; empty otherwise
  FitHooks hooks;
  EarlyStopping early;
  std::string classifier_path() const { return ctx.stage_dir + "/classifier"; }
  std::string tokens_codebook() const {
    return tokens.at("artifacts").value("codebook", std::string());
  }
};

// A task's classifier, fitted and saved, with its part of the results and its trees' file
// (empty without trees).
struct TaskFit {
  FitResult fit;
  nlohmann::json results;
  std::string trees_path;
};

// task beats: a class per beat, from the windows around each beat; head then holds the input
// scaling fit() set, for evaluate.
TaskFit finetune_beats(const FinetuneInputs& in, HeadOptions& head) {
  const TokenStore& store = in.store;
  const auto windows = beat_windows(store, select_records(store, in.train, /*exclude=*/false),
                                    in.model->context(), 0.0, 1.0 - in.tail);
  std::vector<BeatWindow> validation_windows;
  if (!in.validation.empty())
    validation_windows = beat_windows(store, select_records(store, in.validation, false),
                                      in.model->context(), 0.0, 1.0 - in.tail);
  BeatClassifier classifier(in.model, in.options.seed, head, in.codebook);
  in.ctx.progress("fine-tuning beat classes (" + head.backbone + " backbone) on " +
                  std::to_string(in.train.size()) + " records, " + std::to_string(windows.size()) +
                  " windows, " + std::to_string(in.options.steps) + " steps");
  TaskFit out;
  out.fit = classifier.fit(store, windows, in.options, in.hooks, validation_windows, in.early);
  classifier.save(in.classifier_path());
  head = classifier.options();
  out.results = {{"task", "beats"}, {"classes", {"N", "S", "V", "F", "Q"}}};
  if (in.p.at("trees").get<int>() > 0) {
    out.trees_path = in.ctx.stage_dir + "/trees.json";
    out.results["trees"] =
        fit_beat_trees(in.ctx, store, head, in.tokens_codebook(), in.store_columns, classifier,
                       windows, validation_windows, in.options, out.trees_path);
  }
  return out;
}

// The boosted trees beside a segment head, and the weight of their vote in the blend.
nlohmann::json fit_trees_beside_segments(const FinetuneInputs& in, const HeadOptions& head,
                                         SegmentClassifier& classifier,
                                         const SegmentLabeler& label_of,
                                         const std::vector<Segment>& segments,
                                         const std::vector<Segment>& validation_segments,
                                         int classes, const std::string& trees_path) {
  const std::string task = in.p.at("task");
  std::vector<std::string> names;
  const FittedTrees trees =
      task == "record" ? fit_record_trees(in.ctx, in.store, head, in.store_columns, label_of,
                                          in.train, in.validation, classes, in.options, names)
                       : fit_segment_trees(in.ctx, in.store, head, in.store_columns, segments,
                                           validation_segments, classes, in.options, names);
  trees.kept().save(trees_path);
  const double fixed = in.p.at("trees_weight");
  BlendWeight weight{fixed, 0};
  if (fixed == kWeightFromValidation)
    weight = task == "record"
                 ? validation_blend_weight(in.ctx, classifier, trees.held_out, in.store, head,
                                           in.store_columns, validation_segments,
                                           select_records(in.store, in.validation, false), label_of)
                 : validation_segment_blend_weight(in.ctx, classifier, trees.held_out, in.store,
                                                   head, in.store_columns, validation_segments);
  nlohmann::json results = trees_results(in.ctx, head, trees, weight, names);
  keep_store_columns(in.store_columns, results);
  return results;
}

// tasks af and record: a class per segment of segment_beats beats (a record's class read from
// all of its beats); head then holds the input scaling fit() set, for evaluate.
TaskFit finetune_segments(const FinetuneInputs& in, HeadOptions& head) {
  const StageContext& ctx = in.ctx;
  const std::string task = in.p.at("task");
  if (in.tail > 0.0)
    throw ConfigError(
        "stage '{}': holdout_tail splits beats; task {} is scored by record (use "
        "holdout_records or folds)",
        ctx.instance.id, task);
  const int64_t length = in.p.at("segment_beats");
  if (length < 2 || length > in.model->context())
    throw ConfigError("stage '{}': segment_beats={} must be 2 to the model's context ({})",
                      ctx.instance.id, length, in.model->context());
  const auto labels =
      read_record_labels(in.tokens.at("artifacts").at("record_labels").get<std::string>());
  const auto classes = segment_classes(task, in.p.at("classes"), labels);
  if (classes.size() < 2)
    throw DataError("stage '{}': task {} needs at least two classes; the records have {}",
                    ctx.instance.id, task, nlohmann::json(classes).dump());
  const SegmentLabeler label_of = segment_labeler(task, classes, in.store, labels);
  const int64_t min_beats = in.p.at("min_segment_beats");
  const bool cover_tail = task == "record";  // a record's class is read from all of its beats
  const auto segments =
      make_segments(in.store, select_records(in.store, in.train, false), length,
                    std::max<int64_t>(1, length / 2), min_beats, label_of, cover_tail);
  const auto validation_segments =
      make_segments(in.store, select_records(in.store, in.validation, false), length, length,
                    min_beats, label_of, cover_tail);
  SegmentClassifier classifier(in.model, in.options.seed, head, int(classes.size()));
  in.ctx.progress("fine-tuning " + task + " classes (" + head.backbone + " backbone) on " +
                  std::to_string(in.train.size()) + " records, " + std::to_string(segments.size()) +
                  " segments of " + std::to_string(length) + " beats, " +
                  std::to_string(in.options.steps) + " steps");
  TaskFit out;
  out.fit = classifier.fit(in.store, segments, in.options, in.hooks, validation_segments, in.early);
  classifier.save(in.classifier_path());
  head = classifier.options();
  out.results = {{"task", task},
                 {"classes", classes},
                 {"segment_beats", length},
                 {"min_segment_beats", min_beats}};
  if (in.p.at("trees").get<int>() > 0) {
    out.trees_path = in.ctx.stage_dir + "/trees.json";
    out.results["trees"] =
        fit_trees_beside_segments(in, head, classifier, label_of, segments, validation_segments,
                                  int(classes.size()), out.trees_path);
  }
  return out;
}

StageOutput run_finetune(StageContext& ctx) {
  const auto& p = ctx.params();
  const auto& foundation = ctx.input_of_kind("pretrain");
  const nlohmann::json& tokens = ctx.input_of_kind("tokenize");
  const auto options = TrainOptions::from_params(training_options_json(p));
  set_compute_threads(options.threads);
  HeadOptions head = HeadOptions::from_json(p);

  const nlohmann::json model_block = foundation.at("results").at("model");
  auto model = ctx.plugins.create<Model>("model", model_block.at("plugin"), model_block);
  auto store = TokenStore::open(tokens.at("artifacts").at("token_store"));
  expect_same_tokens(ctx, foundation, store, model_block);
  // From scratch: the same architecture and head with the plugin's random initial weights.
  if (head.backbone != "scratch")
    load_module(model->module(), foundation.at("artifacts").at("checkpoint"));
  // The classifiers put their heads and batches where the model is.
  model->module().to(rank_device(p.value("device", "auto"), 0, ctx.instance.id));

  std::vector<std::string> holdout = p.at("holdout_records"), validation;
  const std::vector<std::string> train = training_records(p, store, holdout, validation);
  const double tail = p.at("holdout_tail").get<double>();
  EarlyStopping early;
  early.every = p.at("eval_every");
  early.patience = p.at("patience");
  const std::string task = p.at("task");
  const StoreDescriptorColumns store_columns = checked_options(ctx, task, head, store, tokens);
  // Standardised on the beats the head trains on, so no held-out beat shapes its inputs.
  if (head.descriptors)
    fit_descriptor_scaling(head, store, select_records(store, train, /*exclude=*/false), tail);
  // The codebook the tokens were made with, for the beats' shapes (morphology_features).
  const std::string codebook =
      head.morphology_features ? tokens.at("artifacts").value("codebook", std::string()) : "";
  const FinetuneInputs in{ctx,           p,          tokens,
                          model,         store,      options,
                          train,         validation, tail,
                          store_columns, codebook,   {ctx.stage_dir + "/checkpoints", ctx.progress},
                          early};
  const TaskFit fitted = task == "beats" ? finetune_beats(in, head) : finetune_segments(in, head);
  const FitResult& fit = fitted.fit;
  const nlohmann::json& task_results = fitted.results;
  const std::string& trees_path = fitted.trees_path;
  const std::string path = in.classifier_path();
  StageOutput out;
  out.artifacts["classifier"] = path;
  if (!trees_path.empty()) out.artifacts["trees"] = trees_path;
  out.artifacts["token_store"] = tokens.at("artifacts").at("token_store");
  out.artifacts["record_labels"] = tokens.at("artifacts").at("record_labels");
  const auto& losses = fit.losses;
  out.results = task_results;
  if (!codebook.empty()) out.results["codebook"] = codebook;
  out.results.update(nlohmann::json{{"model", model_block},
                                    {"head", head.to_json()},
                                    {"tokenizer", store.tokenizer_identity()},
                                    {"losses", losses},
                                    {"train_records", train},
                                    {"validation_records", validation},
                                    {"holdout_records", holdout},
                                    {"holdout_tail", tail},
                                    {"steps_run", fit.steps_run},
                                    {"best_step", fit.best_step},
                                    {"validation", fit.validation},
                                    {"loss_first", losses.empty() ? 0.0 : losses.front()},
                                    {"loss_last", losses.empty() ? 0.0 : losses.back()}});
  if (p.at("folds").get<int>() > 0)
    out.results["fold"] = {{"folds", p.at("folds")}, {"fold", p.at("fold")}};
  // What the backbone saw unlabelled, for evaluate to name the scored records among them.
  out.results["pretrained_records"] =
      foundation.at("results").value("pretrained_records", nlohmann::json::array());
  char line[200];
  std::snprintf(line, sizeof(line), "classification loss %.3f -> %.3f over %lld steps",
                out.results["loss_first"].get<double>(), out.results["loss_last"].get<double>(),
                (long long)fit.steps_run);
  out.report_md = finetune_report_md(line, head, task, task_results, train.size(),
                                     validation.size(), fit.best_step, holdout, tail);
  ctx.progress(line);
  return out;
}

}  // namespace

StageKind finetune_stage() {
  auto params = training_param_specs("200", "1e-4", TrainingStage::kFineTune);
  params.push_back(device_param_spec());
  const std::vector<workflow::ParamSpec> own = {
      {"records", "list", "[]", "records fine-tuning may use (default: every record of the store)",
       false},
      {"holdout_records", "list", "[]",
       "records kept out of fine-tuning (inter-patient evaluation)", false},
      {"holdout_tail", "float[0,1)", "0.0",
       "last fraction of every other record kept out (intra-patient evaluation)", false},
      {"folds", "int[0,]", "0",
       "record-wise k-fold cross-validation over `records`: the test fold is held out (0 = off)",
       false},
      {"fold", "int[0,]", "0", "which fold is the test side (0 .. folds-1; sweep it with a matrix)",
       false},
      {"split_seed", "int", "1", "seed of the record shuffles behind folds and validation", false},
      {"labelled_fraction", "float(0,1]", "1.0",
       "fraction of the training records whose labels are used (record-wise)", false},
      {"validation_records", "int[0,]", "0",
       "training records kept for early stopping on their macro F1 (0 = off)", false},
      {"validation_covers_classes", "bool", "false",
       "task beats: draw the validation records so that they show the classes training sees "
       "(records bringing a class the others lack, with at least 20 beats of it, while training "
       "keeps at least as many), instead of at random",
       false},
      {"validation_per_seed", "bool", "false",
       "each fine-tuning seed draws its own validation records from the same training records "
       "(the members of a seed ensemble then train on different records; folds do not move); "
       "seed 0 keeps the draw it has without this",
       false},
      {"eval_every", "int[1,]", "50", "steps between validation checks", false},
      {"patience", "int[1,]", "5", "validation checks without a gain before stopping", false},
      {"backbone", "choice:full|frozen|scratch", "\"full\"",
       "fine-tune the pretrained backbone, freeze it (linear probe) or start from random weights",
       false},
      {"rr_features", "bool", "false",
       "append each beat's RR features (before and after it, against the local average) to the "
       "head's input",
       false},
      {"record_rhythm_features", "bool", "false",
       "append each beat's rhythm against its whole record (RR before and after it over the "
       "record's median RR, the local irregularity of the rhythm) to the head's input; task "
       "record reads each one's minimum and maximum over the record; not task af",
       false},
      {"rhythm_context_features", "bool", "false",
       "append the irregularity of the rhythm around each beat, its own intervals left out "
       "(30 beats either side: median change between successive intervals, share of changes "
       "above 0.1, 25th percentile), to the head's input: atrial fibrillation against a "
       "premature beat; task beats",
       false},
      {"rr_within_context", "bool", "false",
       "append where each beat's RR before and after fall among the intervals of the 30 beats "
       "either side, its own left out (log RR minus their median, over their interquartile "
       "range), to the head's input: a premature beat in a regular rhythm against an early one "
       "in atrial fibrillation; task beats",
       false},
      {"rr_pattern_features", "bool", "false",
       "tasks af and record, beside rr_features: append the quartiles over the segment of each "
       "interval's smallest change against the three before it (whether the rhythm repeats: "
       "bigeminy and trigeminy do, atrial fibrillation does not) to the head's input, and their "
       "quantiles over the record to a record's trees",
       false},
      {"morphology_features", "bool", "false",
       "append each beat's shape against its own record's template (the median beat around it: "
       "distance, correlation, amplitude, distance in and outside the QRS) to the head's input; "
       "task beats, beat-vq tokens",
       false},
      {"descriptors", "bool", "false",
       "append the token store's per-beat descriptors (beat-vq's template_descriptors: the "
       "beat's template and the beat against it), standardised on the training records, to the "
       "head's input; segment heads read their mean over the segment",
       false},
      {"descriptor_prefix", "string", "\"\"",
       "with descriptors: the head reads only the store's descriptors whose names (the "
       "tokenize manifest's `descriptors`) begin with this text, such as \"beat minus "
       "template\"; empty: all",
       false},
      {"record_statistics", "bool", "false",
       "task record: append the whole record's statistics, the row its trees read (each of the "
       "inputs above summarised over the record by mean, spread, quantiles and extremes, the "
       "descriptors by their median), standardised on the training segments, to the head's input "
       "beside each segment's own",
       false},
      {"class_weights", "choice:sqrt|inverse|none", "\"sqrt\"",
       "loss weight per class from its frequency f: 1/sqrt(f), 1/f or none", false},
      {"head_lr_scale", "float(0,]", "1.0",
       "the head's learning rate over the backbone's (lr); > 0", false},
      {"head_hidden", "int[0,]", "0",
       "units of a hidden layer (GELU) between the head's inputs and the classes; 0: one linear "
       "layer",
       false},
      {"task", "choice:beats|af|record", "\"beats\"",
       "beats: AAMI class of each beat; af: AF or not of segments of segment_beats beats (rhythm "
       "annotations); record: the record's class (dataset record_labels) from its segments",
       false},
      {"segment_beats", "int[1,]", "41", "beats per segment (tasks af and record)", false},
      {"min_segment_beats", "int[1,]", "8",
       "records shorter than a segment but at least this long give one shorter segment", false},
      {"classes", "list", "[]",
       "task record: the classes, in order (default: the sorted labels of the records)", false},
      {"trees", "int[0,]", "0",
       "boosted trees (XGBoost) beside the head, this many rounds cut back to the one with the "
       "lowest log loss on the validation records (when there are some); task record: over each "
       "record's statistics of the head's per-beat inputs (and, with trees_descriptors, its "
       "median of the store's descriptors); task af: the same over each segment's beats; task "
       "beats: over each beat's inputs and its code's centroid; 0 = off",
       false},
      {"trees_weight", "float", "-1",
       "the trees' share of an item's (record's, segment's or beat's) probabilities (the head's: 1 "
       "- it), 0 "
       "to 1; -1: the share "
       "of 0, 0.1, ..., 1 with the lowest log loss on the validation records",
       false},
      {"trees_class_weights", "choice:head|sqrt|inverse|none", "\"head\"",
       "the trees' weight per class from its frequency f: 1/sqrt(f), 1/f or none; head: the "
       "head's class_weights",
       false},
      {"trees_refit", "bool", "false",
       "after the validation records have cut the trees' rounds back (and, at trees_weight -1, "
       "fit their share), boost the trees again for those rounds on the training and validation "
       "records together (the trees saved and evaluated); the share stays the one fit on the "
       "first trees",
       false},
      {"trees_descriptors", "bool", "false",
       "the trees also read the token store's per-beat descriptors (beat-vq's "
       "template_descriptors, shape_descriptors and p_wave_descriptors), whether or not the head "
       "does: task beats as they are, tasks record and af by their median over the record's or "
       "segment's beats (with shape_descriptors, the record's median beat) instead of nine "
       "statistics",
       false},
      {"trees_leave_out", "list", "[]",
       "the trees do not read the columns whose names (the results' trees.statistics) begin "
       "with one of these, such as \"log(local RR / 1 s)\" (the heart rate, which differs "
       "between databases more than rhythm does); a prefix matching no column is refused",
       false},
      {"trees_annotated_beats", "list:map", "[]",
       "task beats: other patients' beats known only from WFDB annotations (no signal), "
       "[{dir: FOLDER, records: [..] (default every record with the annotator's file), "
       "annotator: atr}], as extra rows of the trees with their RR columns (rr_features, "
       "record_rhythm_features, rhythm_context_features, rr_within_context; each record cut into "
       "30-minute stretches) and every other column missing; at most 20000 beats per class drawn",
       false},
      {"trees_annotated_share", "float(0,1)", "0.5",
       "with trees_annotated_beats: their share of each class's weight in the trees' training "
       "(0 to 1, both left out)",
       false},
      {"trees_descriptor_prefix", "string", "\"\"",
       "with trees_descriptors: only the store's descriptors whose names (the tokenize "
       "manifest's `descriptors`) begin with this text, such as \"beat minus template\" (the "
       "beat's waveform against its record's template, without the waveform itself); empty: all",
       false}};
  params.insert(params.end(), own.begin(), own.end());
  return {"finetune",
          "17",
          params,
          run_finetune,
          /*external_inputs=*/nullptr,
          check_training_device,
          check_finetune_plan};
}

}  // namespace hlm
