// evaluate: beat classifier + labelled records -> accuracy, macro F1, per-class sensitivity,
// positive predictivity, specificity and F1 with 95 % intervals over records, and the confusion
// matrix (AAMI classes), written as a table beside the majority-class baseline.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "engine/stage.h"
#include "eval/classification_metrics.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "ops/compute.h"
#include "tasks/beat_classifier.h"
#include "util/atomic_file.h"

namespace hlm {
namespace {

std::string number(double v) {
  if (std::isnan(v)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", v);
  return text;
}

std::string interval(const eval::Interval& ci) {
  return std::isnan(ci.low) ? "" : " (" + number(ci.low) + "-" + number(ci.high) + ")";
}

// The scores of the pooled matrix, with 95 % intervals from resampling records.
std::string table(const std::vector<eval::Confusion>& per_record, nlohmann::json& results) {
  eval::Confusion m(kBeatClassCount);
  for (const auto& r : per_record) m += r;
  const auto ci = [&](const std::function<double(const eval::Confusion&)>& metric) {
    return eval::bootstrap_by_record(per_record, metric);
  };
  const double accuracy = eval::accuracy(m), macro_f1 = eval::macro_f1(m);
  const eval::Interval accuracy_ci = ci(eval::accuracy), macro_f1_ci = ci(eval::macro_f1);
  // What answering the most frequent reference class for every beat would score: accuracy
  // means little without it when one class dominates (N is ~80-90 % of most records).
  const size_t majority = eval::majority_class(m);
  const double baseline = eval::majority_baseline(m);
  results["beats"] = m.total();
  results["accuracy"] = accuracy;
  results["macro_f1"] = macro_f1;
  results["ci95"] = {{"accuracy", {accuracy_ci.low, accuracy_ci.high}},
                     {"macro_f1", {macro_f1_ci.low, macro_f1_ci.high}}};
  results["majority_class"] = beat_class_name(BeatClass(majority));
  results["majority_baseline"] = baseline;
  std::string md = "| class | beats | Se | +P | Sp | F1 |\n|---|---|---|---|---|---|\n";
  for (size_t c = 0; c < size_t(kBeatClassCount); ++c) {
    const eval::ClassScores s = eval::class_scores(m, c);
    const eval::Interval se_ci =
        ci([c](const eval::Confusion& r) { return eval::class_scores(r, c).se; });
    const eval::Interval ppv_ci =
        ci([c](const eval::Confusion& r) { return eval::class_scores(r, c).ppv; });
    const char* name = beat_class_name(BeatClass(c));
    results["classes"][name] = {{"beats", s.support},
                                {"se", s.se},
                                {"ppv", s.ppv},
                                {"specificity", s.specificity},
                                {"f1", s.f1},
                                {"se_ci95", {se_ci.low, se_ci.high}},
                                {"ppv_ci95", {ppv_ci.low, ppv_ci.high}}};
    md += std::string("| ") + name + " | " + std::to_string(s.support) + " | " + number(s.se) +
          interval(se_ci) + " | " + number(s.ppv) + interval(ppv_ci) + " | " +
          number(s.specificity) + " | " + number(s.f1) + " |\n";
  }
  char head[256];
  std::snprintf(head, sizeof(head),
                "Accuracy %s%s, macro F1 %s%s, on %lld beats of %zu records; always answering %s "
                "would score %s. Intervals: 95 %%, from 1000 resamples of the records.\n\n",
                number(accuracy).c_str(), interval(accuracy_ci).c_str(), number(macro_f1).c_str(),
                interval(macro_f1_ci).c_str(), (long long)m.total(), per_record.size(),
                beat_class_name(BeatClass(majority)), number(baseline).c_str());
  md = head + md +
       "\nConfusion matrix (rows: reference, columns: predicted)\n\n| | N | S | V | F | Q "
       "|\n|---|---|---|---|---|---|\n";
  for (size_t t = 0; t < size_t(kBeatClassCount); ++t) {
    md += std::string("| ") + beat_class_name(BeatClass(t));
    std::vector<int64_t> row;
    for (size_t p = 0; p < size_t(kBeatClassCount); ++p) {
      md += " | " + std::to_string(m.at(t, p));
      row.push_back(m.at(t, p));
    }
    md += " |\n";
    results["confusion"].push_back(row);
  }
  return md;
}

StageOutput run_evaluate(StageContext& ctx) {
  const auto& p = ctx.params();
  const auto& tuned = ctx.input_of_kind("finetune");
  set_compute_threads(p.at("threads").get<int>());
  // By default: the records fine-tuning left out, plus the tails it left out of the others.
  std::vector<std::string> records = p.at("records");
  const auto& tuned_results = tuned.at("results");
  const double tail = records.empty() ? tuned_results.value("holdout_tail", 0.0) : 0.0;
  if (records.empty())
    records = tuned_results.at("holdout_records").get<std::vector<std::string>>();
  if (records.empty() && tail <= 0.0)
    throw ConfigError(
        "{}:{}: stage '{}' has nothing to evaluate; set params.records, "
        "or holdout_records or holdout_tail in the finetune stage",
        ctx.instance.file, ctx.instance.line, ctx.instance.id);
  const nlohmann::json model_block = tuned.at("results").at("model");
  auto model = ctx.plugins.create<Model>("model", model_block.at("plugin"), model_block);
  BeatClassifier classifier(model, 0);
  classifier.load(tuned.at("artifacts").at("classifier"));
  auto store = TokenStore::open(tuned.at("artifacts").at("token_store"));
  for (const auto& name : records)
    if (store.find_record(name) == store.record_count())
      throw ConfigError("stage '{}': record '{}' is not in the token store {}", ctx.instance.id,
                        name, store.path());
  std::vector<BeatWindow> windows =
      beat_windows(store, select_records(store, records, /*exclude=*/false), model->context());
  if (tail > 0.0) {
    const auto tails = beat_windows(store, select_records(store, records, /*exclude=*/true),
                                    model->context(), 1.0 - tail, 1.0);
    windows.insert(windows.end(), tails.begin(), tails.end());
  }
  // One matrix per record: the confidence intervals resample records, not beats.
  std::vector<uint64_t> record_starts(store.record_count());
  for (size_t r = 0; r < store.record_count(); ++r) record_starts[r] = store.record(r).offset;
  std::map<size_t, eval::Confusion> by_record;
  for (const auto& [beat, predicted] : classifier.predict(store, windows)) {
    const uint8_t truth = store.labels()[beat];
    if (truth >= kBeatClassCount) continue;
    const size_t record =
        size_t(std::upper_bound(record_starts.begin(), record_starts.end(), uint64_t(beat)) -
               record_starts.begin()) -
        1;
    by_record.try_emplace(record, kBeatClassCount).first->second.add(truth, predicted);
  }
  std::vector<eval::Confusion> per_record;
  for (const auto& [record, m] : by_record) per_record.push_back(m);
  StageOutput out;
  out.results["records"] = records;
  out.results["tail"] = tail;
  std::string scope = "Evaluated on ";
  if (!records.empty()) scope += "records " + nlohmann::json(records).dump();
  if (tail > 0)
    scope += std::string(records.empty() ? "" : " and ") + "the last " +
             std::to_string(int(tail * 100)) + " % of every " + (records.empty() ? "" : "other ") +
             "record (beats fine-tuning did not see)";
  scope +=
      ". Fine-tuning held these beats out; the tokenize stage's codebook and pretraining "
      "saw every record";
  out.report_md = scope + ".\n\n" + table(per_record, out.results);
  const std::string path = ctx.stage_dir + "/evaluation.md";
  write_file_atomic(path, out.report_md);
  out.artifacts["table"] = path;
  char line[160];
  std::snprintf(line, sizeof(line), "accuracy %.3f on %lld beats (always %s: %.3f)",
                out.results["accuracy"].get<double>(),
                (long long)out.results["beats"].get<int64_t>(),
                out.results["majority_class"].get<std::string>().c_str(),
                out.results["majority_baseline"].get<double>());
  ctx.progress(line);
  return out;
}

}  // namespace

StageKind evaluate_stage() {
  return {"evaluate",
          "1",
          {{"records", "list", "[]", "records to evaluate (default: the finetune holdout)", false},
           {"threads", "int", "1", "intra-op threads", false}},
          run_evaluate,
          /*external_inputs=*/nullptr};
}

}  // namespace hlm
