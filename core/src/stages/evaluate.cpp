// evaluate: beat classifier + labelled records -> accuracy, per-class sensitivity, positive
// predictivity, F1 and the confusion matrix (AAMI classes), written as a table.
#include <array>
#include <cstdio>
#include <fstream>

#include "engine/stage.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "ops/compute.h"
#include "tasks/beat_classifier.h"
#include "util/atomic_file.h"

namespace hlm {
namespace {

using Confusion = std::array<std::array<int64_t, kBeatClassCount>, kBeatClassCount>;

std::string table(const Confusion& m, nlohmann::json& results) {
  int64_t total = 0, correct = 0;
  for (int t = 0; t < kBeatClassCount; ++t)
    for (int p = 0; p < kBeatClassCount; ++p) {
      total += m[t][p];
      if (t == p) correct += m[t][p];
    }
  const double accuracy = total ? double(correct) / double(total) : 0.0;
  // What answering the most frequent reference class for every beat would score: accuracy
  // means little without it when one class dominates (N is ~80-90 % of most records).
  int majority = 0;
  std::array<int64_t, kBeatClassCount> truth_counts{};
  for (int t = 0; t < kBeatClassCount; ++t) {
    for (int p = 0; p < kBeatClassCount; ++p) truth_counts[t] += m[t][p];
    if (truth_counts[t] > truth_counts[majority]) majority = t;
  }
  const double baseline = total ? double(truth_counts[majority]) / double(total) : 0.0;
  results["beats"] = total;
  results["accuracy"] = accuracy;
  results["majority_class"] = beat_class_name(BeatClass(majority));
  results["majority_baseline"] = baseline;
  std::string md = "| class | beats | Se | +P | F1 |\n|---|---|---|---|---|\n";
  for (int c = 0; c < kBeatClassCount; ++c) {
    int64_t truth = 0, predicted = 0;
    for (int k = 0; k < kBeatClassCount; ++k) truth += m[c][k], predicted += m[k][c];
    const double se = truth ? double(m[c][c]) / double(truth) : 0.0;
    const double ppv = predicted ? double(m[c][c]) / double(predicted) : 0.0;
    const double f1 = se + ppv > 0 ? 2 * se * ppv / (se + ppv) : 0.0;
    const char* name = beat_class_name(BeatClass(c));
    results["classes"][name] = {{"beats", truth}, {"se", se}, {"ppv", ppv}, {"f1", f1}};
    char row[160];
    std::snprintf(row, sizeof(row), "| %s | %lld | %.3f | %.3f | %.3f |\n", name, (long long)truth,
                  se, ppv, f1);
    md += row;
  }
  char head[160];
  std::snprintf(head, sizeof(head),
                "Accuracy %.4f on %lld beats; always answering %s would score %.4f.\n\n", accuracy,
                (long long)total, beat_class_name(BeatClass(majority)), baseline);
  md = head + md +
       "\nConfusion matrix (rows: reference, columns: predicted)\n\n| | N | S | V | F | Q "
       "|\n|---|---|---|---|---|---|\n";
  for (int t = 0; t < kBeatClassCount; ++t) {
    md += std::string("| ") + beat_class_name(BeatClass(t));
    for (int p = 0; p < kBeatClassCount; ++p) md += " | " + std::to_string(m[t][p]);
    md += " |\n";
    results["confusion"].push_back(std::vector<int64_t>(m[t].begin(), m[t].end()));
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
  Confusion confusion{};
  for (const auto& [beat, predicted] : classifier.predict(store, windows)) {
    const uint8_t truth = store.labels()[beat];
    if (truth < kBeatClassCount) confusion[truth][predicted] += 1;
  }
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
  out.report_md = scope + ".\n\n" + table(confusion, out.results);
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
