// finetune's boosted trees beside the head (see finetune_trees.h).
#include "stages/finetune_trees.h"

#include <memory>

#include "hlm/errors.h"
#include "tasks/annotated_beat_rows.h"
#include "tasks/beat_tree_inputs.h"
#include "tasks/record_statistics.h"
#include "tasks/score_items.h"

namespace hlm {

namespace {

// How the trees weight each class: trees_class_weights, or, at "head", the head's own
// class_weights. Their own key because the two learners need not want the same weights: in
// the Challenge the head lost with 1/f, and the trees gained with it (docs/clinical.md).
std::string trees_class_weights(const StageContext& ctx, const HeadOptions& head) {
  const std::string own = ctx.params().at("trees_class_weights");
  return own == "head" ? head.class_weights : own;
}

}  // namespace

// The columns the trees do not read (trees_leave_out: name prefixes).
std::vector<std::string> trees_leave_out(const StageContext& ctx) {
  return ctx.params().at("trees_leave_out").get<std::vector<std::string>>();
}

namespace {

// Rows as the trees read them: without trees_leave_out's columns.
TreeRows read_by_trees(const StageContext& ctx, TreeRows rows) {
  return without_columns(std::move(rows), trees_leave_out(ctx));
}

// The trees' rows of some items (as read_by_trees) into `data`, whose labels are set apart;
// their column names into `names`.
void take_rows(const StageContext& ctx, TreeRows rows, TreeData& data,
               std::vector<std::string>& names) {
  rows = read_by_trees(ctx, std::move(rows));
  data.rows = std::move(rows.values);
  data.columns = rows.names.size();
  names = std::move(rows.names);
}

// Boosts `rounds` rounds of trees on `train` (rows weighted by class, trees_class_weights),
// cut back on `validation` when it has rows; `what` names the rows in the progress line.
// With `annotated`, other patients' annotated beats (tasks/annotated_beat_rows.h) join the
// training rows at trees_annotated_share of each class's weight.
BoostedTrees boost_trees(const StageContext& ctx, TreeData train, const TreeData& validation,
                         int rounds, int classes, const HeadOptions& head,
                         const TrainOptions& train_options, const std::string& what,
                         const TreeData* annotated = nullptr) {
  std::vector<double> counts(size_t(classes), 0.0);
  for (int label : train.labels) counts[size_t(label)] += 1.0;
  const std::vector<float> class_weight = loss_weights(counts, trees_class_weights(ctx, head));
  train.weights.clear();
  for (int label : train.labels) train.weights.push_back(class_weight[size_t(label)]);
  if (annotated != nullptr)
    append_annotated_rows(train, *annotated, ctx.params().at("trees_annotated_share"));
  TreeOptions options;
  options.rounds = rounds;
  options.threads = train_options.threads;
  options.seed = train_options.seed;
  ctx.progress("boosting trees over " + std::to_string(train.size()) + " " + what);
  return BoostedTrees::fit(train, classes, options, validation);
}

// The trees of `train`, cut back on `validation`, and with trees_refit boosted again on both
// (FittedTrees in finetune_trees.h).
FittedTrees fit_trees(const StageContext& ctx, const TreeData& train, const TreeData& validation,
                      int classes, const HeadOptions& head, const TrainOptions& train_options,
                      const std::string& what, const TreeData* annotated = nullptr) {
  FittedTrees fitted{boost_trees(ctx, train, validation, ctx.params().at("trees"), classes, head,
                                 train_options, what, annotated),
                     std::nullopt};
  if (!ctx.params().at("trees_refit").get<bool>()) return fitted;
  // Without labelled validation rows there is nothing to add, and nothing chose the rounds.
  if (validation.size() == 0)
    throw DataError(
        "stage '{}': trees_refit boosts the trees again with the validation records, and none "
        "of their items is labelled; set other validation_records or trees_refit: false",
        ctx.instance.id);
  TreeData all = train;
  all.rows.insert(all.rows.end(), validation.rows.begin(), validation.rows.end());
  all.labels.insert(all.labels.end(), validation.labels.begin(), validation.labels.end());
  fitted.refit =
      boost_trees(ctx, std::move(all), {}, fitted.held_out.rounds(), classes, head, train_options,
                  what + ", training and validation records together", annotated);
  return fitted;
}

}  // namespace

// What the results keep of the trees: the share and where it came from, the rounds, the
// class weights, the columns' names.
nlohmann::json trees_results(const StageContext& ctx, const HeadOptions& head,
                             const FittedTrees& trees, const BlendWeight& weight,
                             const std::vector<std::string>& names) {
  const bool fitted = weight.items > 0;
  nlohmann::json out = {{"weight", weight.share},
                        {"weight_from", fitted ? "validation records' log loss" : "trees_weight"},
                        {"max_rounds", ctx.params().at("trees").get<int>()},
                        {"rounds", trees.kept().rounds()},
                        {"refit", trees.refit.has_value()},
                        {"class_weights", trees_class_weights(ctx, head)},
                        {"leave_out", trees_leave_out(ctx)},
                        {"statistics", names}};
  if (fitted) out["weight_items"] = weight.items;
  return out;
}

// The store's descriptor columns evaluate gives the trees (score_items' fitted_store_columns).
void keep_store_columns(const StoreDescriptorColumns& store_columns, nlohmann::json& trees) {
  trees["store_descriptors"] = !store_columns.columns.empty();
  trees["store_descriptor_columns"] = store_columns.columns;
  trees["store_descriptor_names"] = store_columns.names;
}

// finetune's trees_annotated_beats: a list of {dir, records, annotator}.
std::vector<AnnotatedBeatSource> annotated_sources(const StageContext& ctx) {
  std::vector<AnnotatedBeatSource> sources;
  for (const nlohmann::json& item : ctx.params().at("trees_annotated_beats")) {
    if (!item.is_object() || !item.contains("dir") || !item.at("dir").is_string())
      throw ConfigError(
          "stage '{}': each item of trees_annotated_beats is {{dir: FOLDER, records: [..], "
          "annotator: atr}} with dir a folder of WFDB annotations; got {}",
          ctx.instance.id, item.dump());
    for (const auto& [key, value] : item.items())
      if (key != "dir" && key != "records" && key != "annotator")
        throw ConfigError(
            "stage '{}': trees_annotated_beats: unknown key '{}' (known: dir, records, "
            "annotator)",
            ctx.instance.id, key);
    try {
      sources.push_back({item.at("dir").get<std::string>(),
                         item.value("records", std::vector<std::string>{}),
                         item.value("annotator", std::string("atr"))});
    } catch (const nlohmann::json::exception&) {
      throw ConfigError(
          "stage '{}': trees_annotated_beats: in {}, records is a list of record names and "
          "annotator a file suffix such as atr",
          ctx.instance.id, item.dump());
    }
  }
  return sources;
}

namespace {

// The annotated beats of other patients over the trees' columns `names` (made once per process
// for each draw), or none without trees_annotated_beats.
std::shared_ptr<const AnnotatedBeats> annotated_beats(const StageContext& ctx,
                                                      const std::vector<std::string>& names,
                                                      const TrainOptions& train_options) {
  const std::vector<AnnotatedBeatSource> sources = annotated_sources(ctx);
  if (sources.empty()) return nullptr;
  auto beats =
      shared_annotated_beat_rows(sources, names, train_options.seed, train_options.threads);
  ctx.progress("the trees also learn from " + std::to_string(beats->data.size()) + " of the " +
               std::to_string(beats->beats) + " annotated beats of " +
               std::to_string(beats->records) + " other records (their RR columns alone)");
  return beats;
}

}  // namespace

// Task beats: boosted trees over the training beats' rows (tasks/beat_tree_inputs.h), cut back
// on the validation beats, saved to `path`; the share fixed or fit on the validation beats.
nlohmann::json fit_beat_trees(const StageContext& ctx, const TokenStore& store,
                              const HeadOptions& head, const std::string& codebook,
                              const StoreDescriptorColumns& store_columns,
                              BeatClassifier& classifier, const std::vector<BeatWindow>& windows,
                              const std::vector<BeatWindow>& validation_windows,
                              const TrainOptions& train_options, const std::string& path) {
  const BeatTreeInputs inputs(store, head, codebook, store_columns);
  std::vector<std::string> names;
  auto data_of = [&](const std::vector<uint64_t>& beats, TreeData& data) {
    std::vector<uint64_t> labelled;
    for (uint64_t beat : beats)
      if (const uint8_t label = store.labels()[beat]; label < kBeatClassCount) {
        labelled.push_back(beat);
        data.labels.push_back(int(label));
      }
    take_rows(ctx, inputs.rows(labelled), data, names);
  };
  TreeData train, validation;
  data_of(kept_beats(windows), train);
  if (!validation_windows.empty()) data_of(kept_beats(validation_windows), validation);
  const std::shared_ptr<const AnnotatedBeats> annotated =
      annotated_beats(ctx, names, train_options);
  const FittedTrees trees = fit_trees(ctx, train, validation, kBeatClassCount, head, train_options,
                                      "beats' " + std::to_string(names.size()) + " inputs",
                                      annotated ? &annotated->data : nullptr);
  trees.kept().save(path);
  const double fixed = ctx.params().at("trees_weight");
  const bool fit_weight = fixed == kWeightFromValidation;
  BlendWeight weight{fixed, 0};
  if (fit_weight) {
    std::vector<uint64_t> beats;
    std::vector<int> labels;
    std::vector<float> head_probs;
    for (auto& [beat, probs] : classifier.probabilities(store, validation_windows))
      if (const uint8_t label = store.labels()[beat]; label < kBeatClassCount) {
        beats.push_back(beat);
        labels.push_back(int(label));
        head_probs.insert(head_probs.end(), probs.begin(), probs.end());
      }
    if (beats.empty())
      throw DataError(
          "stage '{}': the validation records have no labelled beat, so the trees' share cannot "
          "be fit on them; set other validation_records or a trees_weight from 0 to 1",
          ctx.instance.id);
    const TreeRows rows = read_by_trees(ctx, inputs.rows(beats));
    weight = {fit_blend_weight(head_probs, trees.held_out.predict(rows.values, rows.columns()),
                               labels, kBeatClassCount),
              beats.size()};
  }
  nlohmann::json out = trees_results(ctx, head, trees, weight, names);
  if (annotated)
    out["annotated_beats"] = {{"records", annotated->records},
                              {"beats", annotated->beats},
                              {"rows", annotated->data.size()},
                              {"share", ctx.params().at("trees_annotated_share")},
                              {"columns", annotated->filled}};
  out["codebook"] = codebook;  // the centroids evaluate gives the trees
  keep_store_columns(store_columns, out);
  return out;
}

// Task record: boosted trees over the training records' statistics (with the medians of
// `store_columns`), cut back on the validation records' log loss, weighted by class
// (trees_class_weights). `names` gets the statistics' names.
FittedTrees fit_record_trees(const StageContext& ctx, const TokenStore& store,
                             const HeadOptions& head, const StoreDescriptorColumns& store_columns,
                             const SegmentLabeler& label_of, const std::vector<std::string>& train,
                             const std::vector<std::string>& validation, int classes,
                             const TrainOptions& train_options, std::vector<std::string>& names) {
  // The statistics' names are the same for every record set.
  auto data_of = [&](const std::vector<std::string>& records, TreeData& data) {
    std::vector<size_t> labelled;
    for (size_t r : select_records(store, records, /*exclude=*/false)) {
      const int label = label_of(r, 0, int64_t(store.record(r).length));
      if (label < 0) continue;
      labelled.push_back(r);
      data.labels.push_back(label);
    }
    take_rows(ctx, record_statistics(store, labelled, head, store_columns), data, names);
  };
  TreeData train_data, validation_data;
  if (!validation.empty()) data_of(validation, validation_data);
  data_of(train, train_data);
  return fit_trees(ctx, train_data, validation_data, classes, head, train_options,
                   "records' " + std::to_string(names.size()) + " statistics");
}

// Task af: boosted trees over the training segments' statistics (with the medians of
// `store_columns`, as a record's), cut back on the validation segments' log loss, weighted by
// class (trees_class_weights). `names` gets the statistics' names.
FittedTrees fit_segment_trees(const StageContext& ctx, const TokenStore& store,
                              const HeadOptions& head, const StoreDescriptorColumns& store_columns,
                              const std::vector<Segment>& train,
                              const std::vector<Segment>& validation, int classes,
                              const TrainOptions& train_options, std::vector<std::string>& names) {
  auto data_of = [&](const std::vector<Segment>& segments, TreeData& data) {
    for (const Segment& segment : segments) data.labels.push_back(segment.label);
    take_rows(ctx, segment_statistics(store, segments, head, store_columns), data, names);
  };
  TreeData train_data, validation_data;
  if (!validation.empty()) data_of(validation, validation_data);
  data_of(train, train_data);
  return fit_trees(ctx, train_data, validation_data, classes, head, train_options,
                   "segments' " + std::to_string(names.size()) + " statistics");
}

// Task af: the trees' share of the blend with the lowest log loss on the validation segments.
BlendWeight validation_segment_blend_weight(const StageContext& ctx, SegmentClassifier& classifier,
                                            const BoostedTrees& trees, const TokenStore& store,
                                            const HeadOptions& head,
                                            const StoreDescriptorColumns& store_columns,
                                            const std::vector<Segment>& validation_segments) {
  if (validation_segments.empty())
    throw DataError(
        "stage '{}': the validation records have no labelled segment, so the trees' share "
        "cannot be fit on them; set more validation_records or a trees_weight from 0 to 1",
        ctx.instance.id);
  std::vector<int> labels;
  for (const Segment& segment : validation_segments) labels.push_back(segment.label);
  const TreeRows rows =
      read_by_trees(ctx, segment_statistics(store, validation_segments, head, store_columns));
  return {
      fit_blend_weight(classifier.predict(store, validation_segments),
                       trees.predict(rows.values, rows.columns()), labels, classifier.classes()),
      validation_segments.size()};
}

// The trees' share of the blend with the lowest log loss on the validation records, each
// scored as evaluate scores a record (the mean of its segments' probabilities; a record too
// short for a segment with even head probabilities, as evaluate gives it).
BlendWeight validation_blend_weight(const StageContext& ctx, SegmentClassifier& classifier,
                                    const BoostedTrees& trees, const TokenStore& store,
                                    const HeadOptions& head,
                                    const StoreDescriptorColumns& store_columns,
                                    const std::vector<Segment>& validation_segments,
                                    const std::vector<size_t>& validation_records,
                                    const SegmentLabeler& label_of) {
  const int k = classifier.classes();
  auto items = pool_by_record(validation_segments, classifier.predict(store, validation_segments),
                              size_t(k));
  add_records_too_short(store, validation_records, label_of, size_t(k), items);
  if (items.empty())
    throw DataError(
        "stage '{}': no validation record is labelled, so the trees' share cannot be fit on "
        "them; set more validation_records or a trees_weight from 0 to 1",
        ctx.instance.id);
  std::vector<size_t> records;
  std::vector<int> labels;
  std::vector<float> head_probs;
  for (const auto& item : items) {
    records.push_back(item.record);
    labels.push_back(item.truth);
    head_probs.insert(head_probs.end(), item.probs.begin(), item.probs.end());
  }
  const RecordStatistics statistics =
      read_by_trees(ctx, record_statistics(store, records, head, store_columns));
  return {fit_blend_weight(head_probs, trees.predict(statistics.values, statistics.columns()),
                           labels, k),
          items.size()};
}

}  // namespace hlm
