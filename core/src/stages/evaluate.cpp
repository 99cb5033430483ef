// evaluate: fine-tuned beat classifiers + labelled records -> scores per dataset (see
// eval/score_table.h), a confusion-matrix plot and a CSV of every item's prediction per
// dataset, and results.json in the stage folder ({"datasets": {NAME: {...}}}).
//
// Models: the finetune instances this stage needs. Instances that differ only in `fold` are
// one model scored by cross-validation: each fold's model predicts its own held-out records
// and the predictions are pooled. Instances that differ in `seed` too are an ensemble: each
// item's class probabilities are averaged over the seeds (fine-tuning on a score of patients
// moves with the seed; the mean of a few seeds moves less). Datasets: by default each model's
// held-out records ("holdout"); `datasets` adds token stores of other tokenize stages (which
// must use the pretraining codebook: a store of another tokenizer or codebook is refused).
// With `by_beat`, task af's segments are scored once more beat by beat (see
// tasks/beats_of_segments.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "engine/stage.h"
#include "eval/classification_metrics.h"
#include "eval/score_table.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "ops/compute.h"
#include "plots/confusion_plot.h"
#include "stages/model_comparisons.h"
#include "stages/train_params.h"
#include "tasks/beat_classifier.h"
#include "tasks/beat_features.h"
#include "tasks/beats_of_segments.h"
#include "tasks/head_options.h"
#include "tasks/item_mean.h"
#include "tasks/predictions_csv.h"
#include "tasks/score_items.h"
#include "train/train_device.h"
#include "util/atomic_file.h"

namespace hlm {
namespace {

struct DatasetSpec {
  std::string name;
  std::string stage;                 // tokenize stage id; empty: each model's held-out records
  std::vector<std::string> records;  // empty: the default (held-out, or every record)
};

// The matrix keys whose instances are pooled into one model: folds (cross-validation) and
// seeds (an ensemble). A matrix key may name the param with or without "params.".
const char* pooled_by(const std::string& matrix_key) {
  for (const char* key : {"fold", "seed"})
    if (matrix_key == key || matrix_key == std::string("params.") + key) return key;
  return nullptr;
}

// A matrix value of a finetune instance (`key` or `params.key`), as text; empty when unset.
std::string matrix_value(const nlohmann::json& instance, const std::string& key) {
  const nlohmann::json matrix = instance.value("matrix", nlohmann::json::object());
  for (const auto& [k, value] : matrix.items())
    if (const char* pooled = pooled_by(k); pooled && key == pooled) return value.dump();
  return "";
}

// What a group of models is made of: "5 folds", "3 seeds" or "5 folds x 3 seeds".
std::string models_made_of(const std::set<std::string>& folds, const std::set<std::string>& seeds) {
  std::string out;
  if (folds.size() > 1) out = std::to_string(folds.size()) + " folds";
  if (seeds.size() > 1) out += (out.empty() ? "" : " x ") + std::to_string(seeds.size()) + " seeds";
  return out;
}

// Finetune instances grouped by their matrix values other than the fold and the seed.
std::map<std::string, std::vector<const nlohmann::json*>> models_of(const StageContext& ctx) {
  std::map<std::string, std::vector<const nlohmann::json*>> groups;
  for (const nlohmann::json* m : ctx.inputs_of_kind("finetune")) {
    std::string label;
    const nlohmann::json matrix = m->value("matrix", nlohmann::json::object());
    for (const auto& [key, value] : matrix.items())
      if (!pooled_by(key))
        label += (label.empty() ? "" : ", ") + key + "=" +
                 (value.is_string() ? value.get<std::string>() : value.dump());
    groups[label].push_back(m);
  }
  if (groups.empty()) (void)ctx.input_of_kind("finetune");  // the error naming the stage
  return groups;
}

std::vector<DatasetSpec> datasets_of(const StageContext& ctx) {
  std::vector<DatasetSpec> out;
  for (const auto& d : ctx.params().at("datasets")) {
    for (const auto& [key, value] : d.items())
      if (key != "name" && key != "stage" && key != "records")
        throw ConfigError(
            "stage '{}': unknown key '{}' in an entry of datasets (name, stage, records)",
            ctx.instance.id, key);
    DatasetSpec spec{d.value("name", std::string()), d.value("stage", std::string()), {}};
    if (spec.name.empty())
      throw ConfigError("stage '{}': every entry of datasets needs a name", ctx.instance.id);
    if (d.contains("records")) spec.records = d.at("records").get<std::vector<std::string>>();
    if (!spec.stage.empty() && !ctx.inputs.count(spec.stage))
      throw ConfigError("stage '{}': dataset '{}' names stage '{}', which is not in its needs",
                        ctx.instance.id, spec.name, spec.stage);
    out.push_back(spec);
  }
  if (out.empty()) out.push_back({"holdout", "", ctx.params().at("records")});
  return out;
}

// The head and the trees read a store's descriptors by column. Another store must name the same
// descriptors in those columns: one tokenized with other descriptor settings (beat-vq's
// template_descriptors, shape_descriptors, shape_descriptor_leads) can have as many columns
// holding other values, and the tokens' identity does not tell them apart. `reader` read
// `fitted` in `columns` of the store it was fine-tuned on.
void expect_columns_named(const StageContext& ctx, const DatasetSpec& dataset,
                          const TokenStore& store, const std::vector<std::string>& names,
                          const std::string& reader, const std::vector<size_t>& columns,
                          const std::vector<std::string>& fitted) {
  if (fitted.size() != columns.size() || names.empty()) return;  // older manifests name none
  for (size_t j = 0; j < columns.size(); ++j) {
    const std::string here = columns[j] < names.size() ? names[columns[j]] : "(no such column)";
    if (here != fitted[j])
      throw ConfigError(
          "stage '{}': dataset '{}' ({}): {} read its descriptor column {} as '{}', but stage "
          "'{}' tokenized '{}' there (HINT: tokenize it with the descriptor settings of the "
          "store the model was fine-tuned on)",
          ctx.instance.id, dataset.name, store.path(), reader, columns[j], fitted[j], dataset.stage,
          here);
  }
}

void expect_same_descriptor_columns(const StageContext& ctx, const DatasetSpec& dataset,
                                    const TokenStore& store, const nlohmann::json& results,
                                    const nlohmann::json& tokenized) {
  const auto names = tokenized.value("descriptors", std::vector<std::string>());
  if (results.contains("trees")) {
    const auto& trees = results.at("trees");
    expect_columns_named(ctx, dataset, store, names, "the boosted trees",
                         trees.value("store_descriptor_columns", std::vector<size_t>()),
                         trees.value("store_descriptor_names", std::vector<std::string>()));
  }
  const HeadOptions head = HeadOptions::from_json(results.value("head", nlohmann::json::object()));
  if (head.descriptors)
    expect_columns_named(ctx, dataset, store, names, "the head",
                         head_descriptor_columns(head, head.descriptor_names.size()),
                         head.descriptor_names);
}

// The record_labels.json of a dataset's token store (segment tasks; empty for task beats).
std::string record_labels_of(const StageContext& ctx, const nlohmann::json& tuned,
                             const DatasetSpec& dataset) {
  const nlohmann::json& artifacts =
      dataset.stage.empty() ? tuned.at("artifacts") : ctx.inputs.at(dataset.stage).at("artifacts");
  return artifacts.value("record_labels", std::string());
}

// One model's scored items on one dataset; `scope` says what was scored. Segment tasks: a
// segment starts every segment_stride beats (0: every segment length, so none overlap).
std::vector<ScoredItem> predict_dataset(StageContext& ctx, const nlohmann::json& tuned,
                                        const DatasetSpec& dataset, const TokenStore& store,
                                        std::string& scope, int64_t segment_stride = 0) {
  const auto& results = tuned.at("results");
  if (store.tokenizer_identity() != results.at("tokenizer").get<std::string>())
    throw ConfigError(
        "stage '{}': dataset '{}' ({}) was tokenized by {}, but the classifier of '{}' reads "
        "tokens of {}; tokenize it with the pretraining codebook (a tokenize stage that needs "
        "the one pretraining used takes its codebook)",
        ctx.instance.id, dataset.name, store.path(), store.tokenizer_identity(),
        tuned.value("id", std::string()), results.at("tokenizer").get<std::string>());
  const bool own = dataset.stage.empty();
  std::vector<std::string> records = dataset.records;
  double tail = 0.0;
  if (own && records.empty()) {
    // The records fine-tuning left out, plus the tails it left out of the others.
    records = results.at("holdout_records").get<std::vector<std::string>>();
    tail = results.value("holdout_tail", 0.0);
    if (records.empty() && tail <= 0.0)
      throw ConfigError(
          "{}:{}: stage '{}' has nothing to evaluate; set params.records, or holdout_records, "
          "holdout_tail or folds in the finetune stage",
          ctx.instance.file, ctx.instance.line, ctx.instance.id);
  }
  for (const auto& name : records)
    if (store.find_record(name) == store.record_count())
      throw ConfigError("stage '{}': record '{}' is not in the token store {}", ctx.instance.id,
                        name, store.path());
  const bool all = !own && records.empty();
  RecordSelection selection;
  selection.whole = select_records(store, records, /*exclude=*/all);
  if (tail > 0.0) {
    selection.tails = select_records(store, records, /*exclude=*/true);
    selection.tail = tail;
  }
  const nlohmann::json& model_block = results.at("model");
  auto model = ctx.plugins.create<Model>("model", model_block.at("plugin"), model_block);
  // The classifiers put their heads and batches where the model is.
  model->module().to(rank_device(ctx.params().value("device", "auto"), 0, ctx.instance.id));
  if (!own)
    expect_same_descriptor_columns(ctx, dataset, store, results,
                                   ctx.inputs.at(dataset.stage).value("results", nlohmann::json()));
  auto items = score_items(results, tuned.at("artifacts").at("classifier"), model, store, selection,
                           record_labels_of(ctx, tuned, dataset),
                           tuned.at("artifacts").value("trees", std::string()), segment_stride);
  if (scope.empty()) {
    if (all) scope = "every record of " + store.path();
    if (!records.empty()) scope = "records " + nlohmann::json(records).dump();
    if (tail > 0)
      scope += std::string(records.empty() ? "" : " and ") + "the last " +
               std::to_string(int(tail * 100)) + " % of every " +
               (records.empty() ? "" : "other ") + "record";
  }
  return items;
}

std::string store_of(const StageContext& ctx, const nlohmann::json& tuned,
                     const DatasetSpec& dataset) {
  return dataset.stage.empty()
             ? tuned.at("artifacts").at("token_store").get<std::string>()
             : ctx.inputs.at(dataset.stage).at("artifacts").at("token_store").get<std::string>();
}

// Each record's confusion matrix, an item's prediction the most probable class of
// probs_of(item).
std::map<std::string, eval::Confusion> record_matrices(
    const std::vector<ScoredItem>& items, const TokenStore& store, size_t classes,
    const std::function<const std::vector<float>&(const ScoredItem&)>& probs_of) {
  std::map<std::string, eval::Confusion> by_record;
  for (const auto& item : items) {
    by_record.try_emplace(store.record(item.record).name, classes)
        .first->second.add(size_t(item.truth), most_probable(probs_of(item)));
  }
  return by_record;
}

// The items' probabilities, reference classes and records, for curves over the items.
eval::ProbabilityItems probability_items(const std::vector<ScoredItem>& items) {
  eval::ProbabilityItems out;
  std::map<size_t, size_t> record_index;  // store record -> 0 .. records - 1
  for (const auto& item : items) {
    const auto [it, fresh] = record_index.try_emplace(item.record, record_index.size());
    out.probs.push_back(item.probs);
    out.truth.push_back(size_t(item.truth));
    out.record.push_back(it->second);
  }
  out.records = record_index.size();
  return out;
}

// Scores of the items: per-record matrices (for intervals by record), AUROC of a binary task,
// the Challenge 2017 score when the classes include N, A and O, and the sensitivity at each
// published operating point.
nlohmann::json scores_of(const std::vector<ScoredItem>& items, const TokenStore& store,
                         const std::vector<std::string>& classes,
                         const std::vector<eval::PublishedPoint>& points, std::string& table,
                         std::map<std::string, eval::Confusion>& by_record) {
  by_record = record_matrices(
      items, store, classes.size(),
      [](const ScoredItem& item) -> const auto& { return item.probs; });
  std::vector<double> positive;
  std::vector<int> truth;
  if (classes.size() == 2)
    for (const auto& item : items) {
      positive.push_back(item.probs[1]);
      truth.push_back(item.truth);
    }
  std::vector<eval::Confusion> per_record;
  for (const auto& [record, m] : by_record) per_record.push_back(m);
  nlohmann::json r;
  table = eval::score_table(per_record, classes, r);
  // The beat classification literature reports V and S by EC57's rules; empty for other tasks.
  table += eval::ec57_table(per_record, classes, r);
  // Each record's own matrix, so a reader can see which patients the errors come from (the
  // pooled figures hide that one record can hold most of a class).
  for (const auto& [record, m] : by_record) r["by_record"][record] = eval::confusion_rows(m);
  if (classes.size() == 2) {
    r["auroc"] = eval::auroc(positive, truth);
    table += "\nAUROC (" + classes[1] + " against " + classes[0] +
             ", from its probability): " + std::to_string(r["auroc"].get<double>()).substr(0, 5) +
             " (always answering one class, a constant score: 0.500)\n";
  }
  table += eval::published_points_table(probability_items(items), classes, points, r);
  if (const auto headline = headline_metric(classes); headline.first == "cinc2017_score") {
    const auto& metric = headline.second;
    const eval::Confusion pooled = eval::pooled(per_record, classes.size());
    const auto ci = eval::bootstrap_by_record(per_record, metric);
    r["cinc2017_score"] = metric(pooled);
    r["ci95"]["cinc2017_score"] = {ci.low, ci.high};
    const size_t majority = eval::majority_class(pooled);
    const double baseline = metric(eval::always_answering(pooled, majority));
    r["majority_baseline_cinc2017_score"] = baseline;
    char line[200];
    std::snprintf(line, sizeof(line),
                  "\nChallenge 2017 score (mean F1 of N, A and O): %.3f (%.3f-%.3f); always "
                  "answering %s: %.3f\n",
                  metric(pooled), ci.low, ci.high, classes[majority].c_str(), baseline);
    table += line;
  }
  return r;
}

// A blended model's parts alone (items' parts: the head and the boosted trees), by the
// headline metric with its interval by record and by each class's Se, +P and F1: what each
// part brings, and to which class (a blend can trade one class for another while its
// headline barely moves). `model` holds the parts' matrices by record, of `items`. Adds
// results["parts"]; returns the markdown (empty without parts).
std::string part_scores(const std::vector<ScoredItem>& items, const ScoredModel& model,
                        nlohmann::json& results) {
  if (items.empty() || model.parts_by_record.empty()) return "";
  const std::vector<std::string>& classes = model.classes;
  const auto [metric_name, metric] = headline_metric(classes);
  std::string md = "\nEach part of the blend alone (" + metric_name + "):";
  std::string by_class = "\n| part |";
  for (const auto& c : classes) by_class += " " + c + " Se / +P |";
  by_class += "\n|---|";
  for (size_t c = 0; c < classes.size(); ++c) by_class += "---|";
  by_class += "\n";
  eval::Confusion reference(classes.size());  // the items' classes, for the baseline's row
  for (const auto& item : items) reference.add(size_t(item.truth), size_t(item.truth));
  for (const auto& [part, by_record] : model.parts_by_record) {
    std::vector<eval::Confusion> per_record;
    for (const auto& [record, m] : by_record) per_record.push_back(m);
    const eval::Confusion pooled = eval::pooled(per_record, classes.size());
    const auto ci = eval::bootstrap_by_record(per_record, metric);
    results["parts"][part] = {{metric_name, metric(pooled)}, {"ci95", {ci.low, ci.high}}};
    char line[160];
    std::snprintf(line, sizeof(line), " %s %.3f (%.3f-%.3f)", part.c_str(), metric(pooled), ci.low,
                  ci.high);
    md += line;
    by_class += "| " + part + " |";
    for (size_t c = 0; c < classes.size(); ++c) {
      const eval::ClassScores k = eval::class_scores(pooled, c);
      results["parts"][part]["classes"][classes[c]] = {
          {"se", k.se}, {"ppv", k.ppv}, {"f1", k.f1}, {"predicted", k.predicted}};
      by_class += " " + eval::score_text(k.se) + " / " + eval::score_text(k.ppv) + " |";
    }
    by_class += "\n";
    // A binary task's parts by AUROC too, as the blend is reported.
    if (classes.size() == 2) {
      std::vector<double> positive;
      std::vector<int> truth;
      for (const auto& item : items) {
        positive.push_back(item.parts.at(part)[1]);
        truth.push_back(item.truth);
      }
      const double auroc = eval::auroc(positive, truth);
      results["parts"][part]["auroc"] = auroc;
      std::snprintf(line, sizeof(line), ", AUROC %.3f", auroc);
      md += line;
    }
    md += ";";
  }
  // Always answering the majority class, scored the same way: the floor both parts stand on.
  const size_t majority = eval::majority_class(reference);
  const eval::Confusion baseline = eval::always_answering(reference, majority);
  const std::string always = "always " + classes[majority];
  md += " " + always + " " + eval::score_text(metric(baseline)) + ".";
  by_class += "| " + always + " |";
  for (size_t c = 0; c < classes.size(); ++c) {
    const eval::ClassScores k = eval::class_scores(baseline, c);
    by_class += " " + eval::score_text(k.se) + " / " + eval::score_text(k.ppv) + " |";
  }
  return md + "\n" + by_class + "\n";
}

// The blend against each of its parts, and the first part against the second, paired by
// record (the same records drawn for both): whether the blend beats the trees alone, and
// whether the head matches them, beyond record-to-record chance; and class by class, each
// class's F1 (class_f1_differences). Adds results["parts"][part]["blend_minus_part"],
// results["parts_difference"] and results["parts_by_class"]; returns the markdown (empty without
// parts).
std::string paired_part_differences(const ScoredModel& model, nlohmann::json& results) {
  if (model.parts_by_record.empty()) return "";
  const std::vector<std::string>& classes = model.classes;
  const auto [metric_name, metric] = headline_metric(classes);
  const auto matrices = [](const std::map<std::string, eval::Confusion>& by_record) {
    std::vector<eval::Confusion> per_record;
    for (const auto& [record, m] : by_record) per_record.push_back(m);
    return per_record;  // in record order, the same for every part
  };
  const auto blend = matrices(model.by_record);
  std::vector<std::pair<std::string, std::vector<eval::Confusion>>> parts;
  for (const auto& [part, by_record] : model.parts_by_record)
    parts.emplace_back(part, matrices(by_record));
  const auto difference = [&](const std::vector<eval::Confusion>& a,
                              const std::vector<eval::Confusion>& b, nlohmann::json& out) {
    eval::Confusion pa(classes.size()), pb(classes.size());
    for (size_t k = 0; k < a.size(); ++k) pa += a[k], pb += b[k];
    const auto ci = eval::bootstrap_difference_by_record(a, b, metric);
    out = {{"value", metric(pa) - metric(pb)}, {"ci95", {ci.low, ci.high}}};
    char text[96];
    std::snprintf(text, sizeof(text), "%+.3f (%+.3f to %+.3f)", metric(pa) - metric(pb), ci.low,
                  ci.high);
    return std::string(text);
  };
  std::string md = "\nPaired by record (" + metric_name + ", 95 % interval):";
  for (const auto& [part, per_record] : parts)
    md += " blend minus " + part + " " +
          difference(blend, per_record, results["parts"][part]["blend_minus_part"]) + ";";
  if (parts.size() == 2)
    md += " " + parts[0].first + " minus " + parts[1].first + " " +
          difference(parts[0].second, parts[1].second, results["parts_difference"]) + ";",
        results["parts_difference"]["of"] = parts[0].first + " minus " + parts[1].first;
  md.back() = '.';
  md += "\n";
  // Class by class: where the first part gains or loses against the second.
  if (parts.size() == 2)
    md += "\nEach class's F1, and minus the " + parts[1].first +
          "' (paired by record, 95 % interval):\n" +
          class_f1_differences(classes, {parts[0], {"blend", blend}}, parts[1],
                               results["parts_by_class"]);
  return md;
}

// Task af's segments scored once more beat by beat, each beat's class its own rhythm (in an
// "(AFIB" episode of record_labels.json or not): the unit of the AF detectors that classify
// each beat. `segments` start every `stride` beats; they overlap when that is shorter than
// `length`, and each beat then takes the mean of those that hold it. Adds results["by_beat"]
// (the scores the segments have, less the per-record matrices, to keep results.json small);
// returns the markdown.
std::string beat_scores(const std::vector<ScoredItem>& segments, const TokenStore& store,
                        const std::vector<std::string>& classes,
                        const std::vector<eval::PublishedPoint>& points,
                        const std::string& record_labels, int64_t length, int64_t stride,
                        nlohmann::json& results) {
  const auto labels = read_record_labels(record_labels);
  // Each record's AF flags, made once: a beat's class is then one lookup.
  struct RecordFlags {
    uint64_t offset = 0;
    std::vector<uint8_t> in_af;  // empty: no rhythm annotations, so the class is unknown
  };
  std::map<size_t, RecordFlags> flags;
  const auto beats = beats_of_segments(segments, [&](size_t record, uint64_t beat) {
    auto it = flags.find(record);
    if (it == flags.end()) {
      const auto view = store.record(record);
      RecordFlags f{view.offset, {}};
      if (const auto l = labels.find(view.name); l != labels.end() && l->second.rhythm_annotated)
        f.in_af = af_flags(l->second, view.length);
      it = flags.emplace(record, std::move(f)).first;
    }
    const uint64_t at = beat - it->second.offset;
    return at < it->second.in_af.size() ? int(it->second.in_af[at]) : -1;
  });
  std::string table;
  std::map<std::string, eval::Confusion> by_record;
  results["by_beat"] = scores_of(beats, store, classes, points, table, by_record);
  results["by_beat"].erase("by_record");
  results["by_beat"]["segment_stride"] = stride;
  const int64_t most = (length + stride - 1) / stride;  // segments that can hold one beat
  const std::string from =
      stride < length ? "the mean prediction of the segments that hold it (a segment starting "
                        "every " +
                            std::to_string(stride) + " beats, so up to " + std::to_string(most) +
                            " of them; scored apart from the segments above)"
                      : "its segment's prediction";
  return "\n#### By beat\n\nEach beat of the segments, with " + from +
         " and its own rhythm as reference (" + std::to_string(beats.size()) +
         " beats; a record's last beats that make no whole segment are not scored):\n\n" + table;
}

// The published operating points (evaluate's published_points), checked against every model's
// classes before anything is scored.
std::vector<eval::PublishedPoint> published_points_of(
    const StageContext& ctx,
    const std::map<std::string, std::vector<const nlohmann::json*>>& models,
    const std::vector<DatasetSpec>& datasets, const std::vector<std::string>& beat_classes) {
  std::vector<std::string> dataset_names;
  for (const DatasetSpec& d : datasets) dataset_names.push_back(d.name);
  std::vector<eval::PublishedPoint> points;
  for (const auto& row : ctx.params().at("published_points")) {
    for (const auto& [key, value] : row.items())
      if (key != "source" && key != "class" && key != "se" && key != "ppv" &&
          key != "specificity" && key != "dataset")
        throw ConfigError(
            "{}:{}: stage '{}': unknown key '{}' in a row of published_points (source, class, "
            "se, ppv or specificity, and optionally dataset)",
            ctx.instance.file, ctx.instance.line, ctx.instance.id, key);
    // Wrong types read as missing, so the error below names the row.
    const auto text = [&row](const char* key) {
      return row.contains(key) && row.at(key).is_string() ? row.at(key).get<std::string>() : "";
    };
    const auto fraction = [&row](const char* key) {
      return row.contains(key) && row.at(key).is_number() ? row.at(key).get<double>() : -1.0;
    };
    const bool by_ppv = row.contains("ppv");
    const eval::PublishedPoint point{text("source"),
                                     text("class"),
                                     fraction("se"),
                                     by_ppv ? eval::Held::kPpv : eval::Held::kSpecificity,
                                     fraction(by_ppv ? "ppv" : "specificity"),
                                     text("dataset")};
    if (row.contains("dataset") &&
        std::find(dataset_names.begin(), dataset_names.end(), point.dataset) == dataset_names.end())
      throw ConfigError(
          "{}:{}: stage '{}': published_points row {} names dataset {}, but the stage scores "
          "{}; name one of them, or leave dataset out to score the point on every dataset",
          ctx.instance.file, ctx.instance.line, ctx.instance.id, row.dump(),
          row.at("dataset").dump(), nlohmann::json(dataset_names).dump());
    if (point.source.empty() || point.class_name.empty() || !(point.se >= 0 && point.se <= 1) ||
        !(point.held_value > 0 && point.held_value <= 1) || (by_ppv && row.contains("specificity")))
      throw ConfigError(
          "{}:{}: stage '{}': published_points row {} needs a source and a class (text), se in "
          "[0, 1], and exactly one of ppv and specificity in (0, 1] (numbers, as fractions: "
          "0.39 for 39 %)",
          ctx.instance.file, ctx.instance.line, ctx.instance.id, row.dump());
    for (const auto& [label, instances] : models) {
      const auto classes = instances.front()->at("results").value("classes", beat_classes);
      if (std::find(classes.begin(), classes.end(), point.class_name) == classes.end())
        throw ConfigError(
            "{}:{}: stage '{}': published_points names class '{}' ({}), but the model of '{}' "
            "has classes {}",
            ctx.instance.file, ctx.instance.line, ctx.instance.id, point.class_name, point.source,
            instances.front()->value("id", std::string()), nlohmann::json(classes).dump());
    }
    points.push_back(point);
  }
  return points;
}

// The published results a workflow lists beside its own, with how its protocol differs.
std::string published_table(const StageContext& ctx, const nlohmann::json& datasets) {
  const auto& rows = ctx.params().at("published");
  if (rows.empty()) return "";
  std::string md = "### Published results\n\n| source | protocol | result |\n|---|---|---|\n";
  for (const auto& row : rows) {
    for (const auto& [key, value] : row.items())
      if (key != "source" && key != "protocol" && key != "result")
        throw ConfigError(
            "stage '{}': unknown key '{}' in a row of published (source, "
            "protocol, result)",
            ctx.instance.id, key);
    md += "| " + row.value("source", std::string()) + " | " + row.value("protocol", std::string()) +
          " | " + row.value("result", std::string()) + " |\n";
  }
  // This run's floor on its own items, beside the published figures: once per dataset and
  // floor (the models of one dataset, from either backbone, score the same items).
  std::set<std::string> shown;
  for (const auto& [name, r] : datasets.items()) {
    char result[160];
    std::snprintf(result, sizeof(result), "accuracy %.1f %%; macro F1 %.3f",
                  100 * r.at("majority_baseline").get<double>(),
                  r.at("majority_baseline_macro_f1").get<double>());
    std::string text = result;
    if (r.contains("majority_baseline_cinc2017_score")) {
      std::snprintf(result, sizeof(result), "; Challenge 2017 score %.3f",
                    r.at("majority_baseline_cinc2017_score").get<double>());
      text += result;
    }
    if (!shown.insert(name.substr(0, name.find(" [")) + "\n" + text).second) continue;
    md += "| always " + r.at("majority_class").get<std::string>() +
          " (the majority baseline) | this run's items of " + name + " | " + text + " |\n";
  }
  const std::string note = ctx.params().at("protocol_note");
  return md + (note.empty() ? "" : "\nThis run: " + note + "\n") + "\n";
}

using ModelGroups = std::map<std::string, std::vector<const nlohmann::json*>>;

// by_beat (task af segments scored beat by beat) and its overlap, refused where they cannot act.
void check_by_beat(const StageContext& ctx, const ModelGroups& models, bool by_beat,
                   int64_t overlap) {
  if (overlap < 1 || (overlap > 1 && !by_beat))
    throw ConfigError(
        "{}:{}: stage '{}': by_beat_overlap={} must be at least 1, and above 1 only with "
        "by_beat: true (it sets how many segments each beat is scored from)",
        ctx.instance.file, ctx.instance.line, ctx.instance.id, overlap);
  if (!by_beat) return;
  for (const auto& [label, instances] : models)
    if (const std::string task = instances.front()->at("results").value("task", "beats");
        task != "af")
      throw ConfigError(
          "{}:{}: stage '{}': by_beat scores the segments of task af beat by beat, but the "
          "model of '{}' is of task {}; remove by_beat or evaluate an af model",
          ctx.instance.file, ctx.instance.line, ctx.instance.id,
          instances.front()->value("id", std::string()), task);
}

// One model group's predictions on one dataset: the items' mean probabilities over the models
// that scored them, and with by_beat_overlap the overlapping segments' too.
struct GroupPredictions {
  ItemMean mean, overlapping;
  int64_t length = 0, stride = 0;  // task af: segment_beats, and the overlapping ones' stride
  std::set<std::string> folds, seeds;
  std::string scope;
  std::optional<TokenStore> store;
};

GroupPredictions predict_group(StageContext& ctx,
                               const std::vector<const nlohmann::json*>& instances,
                               const DatasetSpec& dataset, bool by_beat, int64_t overlap) {
  GroupPredictions g;
  std::set<std::string> scopes;
  for (const nlohmann::json* tuned : instances) {
    g.folds.insert(matrix_value(*tuned, "fold"));
    g.seeds.insert(matrix_value(*tuned, "seed"));
    // Fold models usually share one store: open (and checksum) it once.
    if (const std::string path = store_of(ctx, *tuned, dataset);
        !g.store || g.store->path() != path)
      g.store = TokenStore::open(path);
    std::string model_scope;
    g.mean.add(predict_dataset(ctx, *tuned, dataset, *g.store, model_scope));
    if (by_beat) {
      g.length = tuned->at("results").at("segment_beats");
      // Rounded up, so no beat lies in more than by_beat_overlap segments.
      g.stride = (g.length + overlap - 1) / overlap;
    }
    if (overlap > 1)
      g.overlapping.add(predict_dataset(ctx, *tuned, dataset, *g.store, model_scope, g.stride));
    if (!dataset.stage.empty())
      g.scope = model_scope;
    else if (scopes.insert(model_scope).second)  // a fold's seeds share one
      g.scope += (g.scope.empty() ? "" : "; ") + model_scope;
  }
  return g;
}

// What the scores of a group rest on: the cross-validation's folds, or the models' scope.
std::string scope_text(const GroupPredictions& g, const DatasetSpec& dataset, size_t models) {
  const std::string ensemble = g.seeds.size() > 1
                                   ? ", the mean of " + std::to_string(g.seeds.size()) +
                                         " seeds' probabilities (an ensemble)"
                                   : "";
  if (g.folds.size() > 1 && dataset.stage.empty())
    return "cross-validation over " + std::to_string(g.folds.size()) +
           " folds, each record scored by the model that did not train on it" + ensemble;
  return g.scope + (models > 1
                        ? ", the mean of the " + std::to_string(models) +
                              " models' probabilities (" + models_made_of(g.folds, g.seeds) + ")"
                        : "");
}

// Each item as a row of predictions_<index>.csv (so errors can be looked up in the signals),
// and the confusion matrix drawn, both linked from the stage's outputs and report.
void write_item_outputs(const StageContext& ctx, const std::string& name, nlohmann::json& r,
                        const std::vector<ScoredItem>& items, const TokenStore& store,
                        const std::vector<std::string>& classes, const std::string& task,
                        StageOutput& out) {
  const std::string index = std::to_string(out.results["datasets"].size());
  const std::string predictions = "predictions_" + index;
  write_predictions_csv(ctx.stage_dir + "/" + predictions + ".csv", items, store, classes, task);
  r["predictions"] = predictions + ".csv";
  out.artifacts[predictions] = ctx.stage_dir + "/" + predictions + ".csv";
  std::string note;
  const std::string stem = "confusion_" + index;
  for (const auto& plot : render_confusion_plot(stem, "Confusion matrix: " + name, classes,
                                                r["confusion"], ctx.stage_dir + "/plots", &note)) {
    out.artifacts[stem + "_png"] = plot.png;
    out.artifacts[stem + "_svg"] = plot.svg;
    // report.md sits in the run folder: a relative link moves with it.
    out.report_md += "\n![" + plot.title + "](" + ctx.instance.id + "/plots/" +
                     std::filesystem::path(plot.png).filename().string() + ")\n";
  }
  if (!note.empty()) out.report_md += "\n(" + note + ")\n";
  out.report_md += "\n";
}

// The records that items were scored on, as indices into their store.
std::set<size_t> scored_records(const std::vector<ScoredItem>& items) {
  std::set<size_t> scored;
  for (const ScoredItem& item : items) scored.insert(item.record);
  return scored;
}

// The scored records the models' backbone was pretrained on (unlabelled: transductive for it),
// in store order.
nlohmann::json seen_by_pretraining(const std::set<size_t>& scored, const TokenStore& store,
                                   const std::vector<const nlohmann::json*>& instances) {
  std::set<std::string> seen;
  for (const nlohmann::json* tuned : instances)
    for (const auto& name :
         tuned->at("results").value("pretrained_records", nlohmann::json::array()))
      seen.insert(name.get<std::string>());
  nlohmann::json out = nlohmann::json::array();
  for (const size_t r : scored)
    if (const std::string name = store.record(r).name; seen.count(name)) out.push_back(name);
  return out;
}

// seen_by_pretraining's records, of `scored` records, as the report's sentence.
std::string seen_text(const nlohmann::json& seen, size_t scored) {
  if (seen.empty())
    return "Pretraining saw none of the " + std::to_string(scored) + " scored records.";
  std::string names;
  for (size_t i = 0; i < seen.size() && i < 10; ++i)
    names += (i ? ", " : "") + seen[i].get<std::string>();
  if (seen.size() > 10) names += ", ...";
  return "Pretraining saw " + std::to_string(seen.size()) + " of the " + std::to_string(scored) +
         " scored records without their labels (transductive for the backbone): " + names + ".";
}

std::string accuracy_line(const std::string& name, const nlohmann::json& r) {
  char line[200];
  std::snprintf(line, sizeof(line), "%s: accuracy %.3f on %lld items (always %s: %.3f)",
                name.c_str(), r["accuracy"].get<double>(), (long long)r["items"].get<int64_t>(),
                r["majority_class"].get<std::string>().c_str(),
                r["majority_baseline"].get<double>());
  return line;
}

StageOutput run_evaluate(StageContext& ctx) {
  set_compute_threads(ctx.params().at("threads").get<int>());
  std::vector<std::string> beat_classes;
  for (int c = 0; c < kBeatClassCount; ++c) beat_classes.push_back(beat_class_name(BeatClass(c)));
  const auto models = models_of(ctx);
  const auto datasets = datasets_of(ctx);
  const auto points = published_points_of(ctx, models, datasets, beat_classes);
  const bool by_beat = ctx.params().at("by_beat").get<bool>();
  const int64_t by_beat_overlap = ctx.params().at("by_beat_overlap").get<int64_t>();
  check_by_beat(ctx, models, by_beat, by_beat_overlap);
  StageOutput out;
  out.results["datasets"] = nlohmann::json::object();
  std::string first_line;
  ScoredModels scored;  // [dataset][model label]
  for (const auto& [label, instances] : models) {
    for (const auto& dataset : datasets) {
      // Held-out records: each fold's models score their own. Another dataset: every model
      // scores every item. Either way an item's probabilities are the mean over the models
      // that scored it, so each item is counted once.
      const std::vector<std::string> classes =
          instances.front()->at("results").value("classes", beat_classes);
      GroupPredictions g = predict_group(ctx, instances, dataset, by_beat, by_beat_overlap);
      const TokenStore& store = *g.store;
      const std::vector<ScoredItem> items = g.mean.take();
      if (items.empty())
        throw DataError(
            "{}:{}: stage '{}' scored no items of {}{} ({}): its records give no segment of the "
            "model's length, or none was held out; check the records evaluated and the "
            "finetune stage's holdout settings (a score over nothing is no result)",
            ctx.instance.file, ctx.instance.line, ctx.instance.id, dataset.name,
            label.empty() ? "" : " [" + label + "]", g.scope.empty() ? "no models" : g.scope);
      const std::string name = dataset.name + (label.empty() ? "" : " [" + label + "]");
      std::string table;
      nlohmann::json& r = out.results["datasets"][name];
      ScoredModel& model_scores = scored[dataset.name][label];
      model_scores.classes = classes;
      std::vector<eval::PublishedPoint> points_here;
      for (const auto& point : points)
        if (point.dataset.empty() || point.dataset == dataset.name) points_here.push_back(point);
      r = scores_of(items, store, classes, points_here, table, model_scores.by_record);
      for (const auto& [part, unused] : items.front().parts)
        model_scores.parts_by_record[part] =
            record_matrices(items, store, classes.size(),
                            [&part = part](const ScoredItem& item) -> const std::vector<float>& {
                              return item.parts.at(part);
                            });
      table += part_scores(items, model_scores, r);
      table += paired_part_differences(model_scores, r);
      if (by_beat) {
        const std::vector<ScoredItem> overlapped =
            by_beat_overlap > 1 ? g.overlapping.take() : std::vector<ScoredItem>();
        table +=
            beat_scores(by_beat_overlap > 1 ? overlapped : items, store, classes, points_here,
                        record_labels_of(ctx, *instances.front(), dataset), g.length, g.stride, r);
      }
      r["scope"] = scope_text(g, dataset, instances.size());
      const std::set<size_t> scored_on = scored_records(items);
      r["pretrained_records"] = seen_by_pretraining(scored_on, store, instances);
      out.report_md += "### " + name + "\n\nScored on " + r["scope"].get<std::string>() + ". " +
                       seen_text(r["pretrained_records"], scored_on.size()) + "\n\n" + table;
      write_item_outputs(ctx, name, r, items, store, classes,
                         instances.front()->at("results").value("task", std::string("beats")), out);
      if (first_line.empty()) first_line = accuracy_line(name, r);
    }
  }
  out.report_md += pretraining_comparisons(scored, out.results);
  out.report_md += published_table(ctx, out.results["datasets"]);
  out.report_md =
      "The tokenize stage's codebook and pretraining saw the records they were given; "
      "fine-tuning never saw the records evaluated here.\n\n" +
      out.report_md;
  const std::string table_path = ctx.stage_dir + "/evaluation.md";
  write_file_atomic(table_path, out.report_md);
  out.artifacts["table"] = table_path;
  const std::string json_path = ctx.stage_dir + "/results.json";
  write_file_atomic(json_path, out.results.dump(2) + "\n");
  out.artifacts["results"] = json_path;
  ctx.progress(first_line);
  return out;
}

}  // namespace

StageKind evaluate_stage() {
  return {"evaluate",
          "5",
          {{"records", "list", "[]", "records to evaluate (default: the finetune holdout)", false},
           {"datasets", "list:map", "[]",
            "labelled datasets scored, each {name, stage: a tokenize stage in needs, records: "
            "[...] (default every record)}; default: the finetune holdout, named holdout",
            false},
           {"published", "list:map", "[]",
            "published results shown beside this run's, each {source, protocol, result}", false},
           {"published_points", "list:map", "[]",
            "published operating points {source, class, se, ppv or specificity, and optionally "
            "dataset: the one it stands beside} (fractions): each dataset reports the highest "
            "Se this run's curve reaches with that +P or specificity held (the class's "
            "probability scaled before the most probable class is taken; S and V as EC57 counts "
            "them)",
            false},
           {"by_beat", "bool", "false",
            "task af: also score every beat of the segments, with its segment's probabilities "
            "and its own rhythm as reference (the unit of AF detectors that classify each beat); "
            "results under datasets.NAME.by_beat",
            false},
           {"by_beat_overlap", "int[1,]", "1",
            "with by_beat: segments start every segment_beats / by_beat_overlap beats (rounded "
            "up) and each beat takes the mean of the up to by_beat_overlap segments that hold "
            "it (a window nearer to one centred on the beat); the model scores about that many "
            "times as many segments",
            false},
           {"protocol_note", "string", "\"\"",
            "how this run's protocol differs from the published ones (shown with them)", false},
           {"threads", "int[1,]", "1", "intra-op threads", false},
           device_param_spec()},
          run_evaluate,
          /*external_inputs=*/nullptr,
          check_training_device,
          /*check_plan=*/nullptr};
}

}  // namespace hlm
