// evaluate: fine-tuned beat classifiers + labelled records -> scores per dataset (see
// eval/score_table.h), a confusion-matrix plot per dataset, and results.json in the stage
// folder ({"datasets": {NAME: {...}}}).
//
// Models: the finetune instances this stage needs. Instances that differ only in `fold` are
// one model scored by cross-validation: each fold's model predicts its own held-out records
// and the predictions are pooled. Datasets: by default each model's held-out records
// ("holdout"); `datasets` adds token stores of other tokenize stages (which must use the
// pretraining codebook: a store of another tokenizer or codebook is refused).
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "engine/stage.h"
#include "eval/classification_metrics.h"
#include "eval/score_table.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "ops/compute.h"
#include "plots/confusion_plot.h"
#include "tasks/beat_classifier.h"
#include "util/atomic_file.h"

namespace hlm {
namespace {

struct DatasetSpec {
  std::string name;
  std::string stage;                 // tokenize stage id; empty: each model's held-out records
  std::vector<std::string> records;  // empty: the default (held-out, or every record)
};

// Finetune instances grouped by their matrix values other than the fold.
std::map<std::string, std::vector<const nlohmann::json*>> models_of(const StageContext& ctx) {
  std::map<std::string, std::vector<const nlohmann::json*>> groups;
  for (const nlohmann::json* m : ctx.inputs_of_kind("finetune")) {
    std::string label;
    const nlohmann::json matrix = m->value("matrix", nlohmann::json::object());
    for (const auto& [key, value] : matrix.items())
      if (key != "fold" && key != "params.fold")
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

struct Predictions {
  TokenStore store;
  std::vector<std::pair<uint64_t, int>> classes;  // (beat index in store, predicted class)
};

// Adds predictions to per-record matrices (keyed by record name) for the labelled beats.
void add_to(std::map<std::string, eval::Confusion>& by_record, const Predictions& p) {
  std::vector<uint64_t> record_starts(p.store.record_count());
  for (size_t r = 0; r < p.store.record_count(); ++r) record_starts[r] = p.store.record(r).offset;
  for (const auto& [beat, predicted] : p.classes) {
    const uint8_t truth = p.store.labels()[beat];
    if (truth >= kBeatClassCount) continue;
    const size_t record =
        size_t(std::upper_bound(record_starts.begin(), record_starts.end(), uint64_t(beat)) -
               record_starts.begin()) -
        1;
    by_record.try_emplace(p.store.record(record).name, kBeatClassCount)
        .first->second.add(truth, size_t(predicted));
  }
}

// One model's predictions on one dataset.
Predictions predict_dataset(StageContext& ctx, const nlohmann::json& tuned,
                            const DatasetSpec& dataset, std::string& scope) {
  const auto& results = tuned.at("results");
  const nlohmann::json& model_block = results.at("model");
  auto model = ctx.plugins.create<Model>("model", model_block.at("plugin"), model_block);
  BeatClassifier classifier(model, 0, BeatHeadOptions::from_json(results.at("head")));
  classifier.load(tuned.at("artifacts").at("classifier"));
  const bool own = dataset.stage.empty();
  const std::string store_path =
      own ? tuned.at("artifacts").at("token_store").get<std::string>()
          : ctx.inputs.at(dataset.stage).at("artifacts").at("token_store").get<std::string>();
  auto store = TokenStore::open(store_path);
  if (store.tokenizer_identity() != results.at("tokenizer").get<std::string>())
    throw ConfigError(
        "stage '{}': dataset '{}' ({}) was tokenized by {}, but the classifier of '{}' reads "
        "tokens of {}; tokenize it with the pretraining codebook (a tokenize stage that needs "
        "the one pretraining used takes its codebook)",
        ctx.instance.id, dataset.name, store_path, store.tokenizer_identity(),
        tuned.value("id", std::string()), results.at("tokenizer").get<std::string>());
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
  std::vector<BeatWindow> windows =
      beat_windows(store, select_records(store, records, /*exclude=*/all), model->context());
  if (tail > 0.0) {
    const auto tails = beat_windows(store, select_records(store, records, /*exclude=*/true),
                                    model->context(), 1.0 - tail, 1.0);
    windows.insert(windows.end(), tails.begin(), tails.end());
  }
  auto predicted = classifier.predict(store, windows);
  if (scope.empty()) {
    if (all) scope = "every record of " + store_path;
    if (!records.empty()) scope = "records " + nlohmann::json(records).dump();
    if (tail > 0)
      scope += std::string(records.empty() ? "" : " and ") + "the last " +
               std::to_string(int(tail * 100)) + " % of every " +
               (records.empty() ? "" : "other ") + "record";
  }
  return {std::move(store), std::move(predicted)};
}

// The majority vote of several models per beat (ties go to the lower class, N first).
std::vector<std::pair<uint64_t, int>> vote(const std::map<uint64_t, std::vector<int>>& votes) {
  std::vector<std::pair<uint64_t, int>> out;
  for (const auto& [beat, counts] : votes)
    out.emplace_back(beat, int(std::max_element(counts.begin(), counts.end()) - counts.begin()));
  return out;
}

StageOutput run_evaluate(StageContext& ctx) {
  set_compute_threads(ctx.params().at("threads").get<int>());
  std::vector<std::string> class_names;
  for (int c = 0; c < kBeatClassCount; ++c) class_names.push_back(beat_class_name(BeatClass(c)));
  const auto models = models_of(ctx);
  const auto datasets = datasets_of(ctx);
  StageOutput out;
  out.results["datasets"] = nlohmann::json::object();
  std::string first_line;
  for (const auto& [label, instances] : models) {
    for (const auto& dataset : datasets) {
      // Held-out records: each fold's model scores its own. Another dataset: every model
      // scores every beat and the majority vote counts, so each beat is counted once.
      std::map<std::string, eval::Confusion> by_record;
      std::map<uint64_t, std::vector<int>> votes;
      std::string scope;
      std::optional<Predictions> last;
      for (const nlohmann::json* tuned : instances) {
        std::string model_scope;
        Predictions p = predict_dataset(ctx, *tuned, dataset, model_scope);
        if (dataset.stage.empty()) {
          add_to(by_record, p);
          scope += (scope.empty() ? "" : "; ") + model_scope;
        } else {
          for (const auto& [beat, c] : p.classes)
            ++votes.try_emplace(beat, kBeatClassCount, 0).first->second[size_t(c)];
          scope = model_scope;
          last = std::move(p);
        }
      }
      if (last) {
        last->classes = vote(votes);
        add_to(by_record, *last);
      }
      const bool cross_validated = instances.size() > 1 && dataset.stage.empty();
      const std::string name = dataset.name + (label.empty() ? "" : " [" + label + "]");
      std::vector<eval::Confusion> per_record;
      for (const auto& [record, m] : by_record) per_record.push_back(m);
      nlohmann::json& r = out.results["datasets"][name];
      const std::string table = eval::score_table(per_record, class_names, r);
      r["scope"] = cross_validated ? "cross-validation over " + std::to_string(instances.size()) +
                                         " folds: each record scored by the model that did "
                                         "not train on it"
                                   : scope;
      out.report_md +=
          "### " + name + "\n\nEvaluated on " + r["scope"].get<std::string>() +
          (instances.size() > 1 && !cross_validated
               ? " (majority vote of the " + std::to_string(instances.size()) + " fold models)"
               : "") +
          ".\n\n" + table;
      std::string note;
      const std::string stem = "confusion_" + std::to_string(out.results["datasets"].size());
      for (const auto& plot :
           render_confusion_plot(stem, "Confusion matrix: " + name, class_names, r["confusion"],
                                 ctx.stage_dir + "/plots", &note)) {
        out.artifacts[stem + "_png"] = plot.png;
        out.artifacts[stem + "_svg"] = plot.svg;
        out.report_md += "\n![" + plot.title + "](" + plot.png + ")\n";
      }
      if (!note.empty()) out.report_md += "\n(" + note + ")\n";
      out.report_md += "\n";
      if (first_line.empty()) {
        char line[200];
        std::snprintf(
            line, sizeof(line), "%s: accuracy %.3f on %lld beats (always %s: %.3f)", name.c_str(),
            r["accuracy"].get<double>(), (long long)r["beats"].get<int64_t>(),
            r["majority_class"].get<std::string>().c_str(), r["majority_baseline"].get<double>());
        first_line = line;
      }
    }
  }
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
          "2",
          {{"records", "list", "[]", "records to evaluate (default: the finetune holdout)", false},
           {"datasets", "list:map", "[]",
            "labelled datasets scored, each {name, stage: a tokenize stage in needs, records: "
            "[...] (default every record)}; default: the finetune holdout, named holdout",
            false},
           {"threads", "int", "1", "intra-op threads", false}},
          run_evaluate,
          /*external_inputs=*/nullptr};
}

}  // namespace hlm
