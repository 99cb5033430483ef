// Models side by side (see model_comparisons.h).
#include "stages/model_comparisons.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eval/score_table.h"

namespace hlm {

// The figure two models are compared by: the Challenge 2017 score when the classes include N,
// A and O, else macro F1.
std::pair<std::string, std::function<double(const eval::Confusion&)>> headline_metric(
    const std::vector<std::string>& classes) {
  std::vector<size_t> cinc;
  for (const char* c : {"N", "A", "O"})
    if (auto it = std::find(classes.begin(), classes.end(), c); it != classes.end())
      cinc.push_back(size_t(it - classes.begin()));
  if (cinc.size() == 3)
    return {"cinc2017_score", [cinc](const eval::Confusion& m) { return eval::mean_f1(m, cinc); }};
  return {"macro_f1", [](const eval::Confusion& m) { return eval::macro_f1(m); }};
}

namespace {

// One row of the pretrained-against-random table: `pretrained` against `scratch` (records ->
// matrix) over the records both scored, the difference of the headline metric with a paired
// interval. Appends to results["comparisons"]; returns the markdown row (empty when no record
// was scored by both).
std::string comparison_row(const std::string& dataset, const std::string& full_label,
                           const std::string& scratch_label, const std::string& what,
                           const std::vector<std::string>& classes,
                           const std::map<std::string, eval::Confusion>& pretrained_by_record,
                           const std::map<std::string, eval::Confusion>& scratch_by_record,
                           nlohmann::json& results) {
  std::vector<eval::Confusion> a, b;
  for (const auto& [record, m] : pretrained_by_record)
    if (auto it = scratch_by_record.find(record); it != scratch_by_record.end()) {
      a.push_back(m);
      b.push_back(it->second);
    }
  if (a.empty()) return "";
  const auto [metric_name, metric] = headline_metric(classes);
  eval::Confusion pooled_a(a.front().classes()), pooled_b(b.front().classes());
  for (size_t k = 0; k < a.size(); ++k) pooled_a += a[k], pooled_b += b[k];
  const double pretrained = metric(pooled_a), from_random = metric(pooled_b);
  const double difference = pretrained - from_random;
  const auto ci = eval::bootstrap_difference_by_record(a, b, metric);
  const size_t majority = eval::majority_class(pooled_a);
  const double baseline = metric(eval::always_answering(pooled_a, majority));
  results["comparisons"].push_back({{"dataset", dataset},
                                    {"pretrained", full_label},
                                    {"scratch", scratch_label},
                                    {"scored", what},
                                    {"metric", metric_name},
                                    {"records", a.size()},
                                    {"pretrained_value", pretrained},
                                    {"scratch_value", from_random},
                                    {"majority_baseline", baseline},
                                    {"difference", difference},
                                    {"ci95", {ci.low, ci.high}}});
  char row[560];
  std::snprintf(row, sizeof(row),
                "| %s | %s | %s | %s | %.3f | %.3f | %.3f (%s) | %+.3f (%+.3f to %+.3f) | %s |\n",
                dataset.c_str(), full_label.c_str(), what.c_str(), metric_name.c_str(), pretrained,
                from_random, baseline, classes[majority].c_str(), difference, ci.low, ci.high,
                ci.low > 0    ? "pretrained better"
                : ci.high < 0 ? "random weights better"
                              : "no difference shown");
  return row;
}

// Each record's matrix of `by_record`, in the order of `records` (which it holds).
std::vector<eval::Confusion> in_order(const std::map<std::string, eval::Confusion>& by_record,
                                      const std::vector<std::string>& records) {
  std::vector<eval::Confusion> out;
  for (const auto& r : records) out.push_back(by_record.at(r));
  return out;
}

// The heart language model's place in a blend of a head and trees: the head from the
// pretrained backbone and from random weights, the trees and the blend, on the records both
// models scored, each with its interval by record and against the trees paired by record.
// Adds results["language_model"][name]; returns the markdown (empty unless both are such
// blends).
std::string language_model_table(const std::string& name, const ScoredModel& full,
                                 const ScoredModel& scratch, nlohmann::json& results) {
  const auto head = full.parts_by_record.find("head"), trees = full.parts_by_record.find("trees");
  const auto random_head = scratch.parts_by_record.find("head");
  if (head == full.parts_by_record.end() || trees == full.parts_by_record.end() ||
      random_head == scratch.parts_by_record.end())
    return "";
  std::vector<std::string> records;
  for (const auto& [record, unused] : full.by_record)
    if (random_head->second.count(record)) records.push_back(record);
  if (records.empty()) return "";
  const auto [metric_name, metric] = headline_metric(full.classes);
  const std::vector<eval::Confusion> by_trees = in_order(trees->second, records);
  const std::vector<std::pair<std::string, std::vector<eval::Confusion>>> rows = {
      {"head, pretrained backbone", in_order(head->second, records)},
      {"head, random weights", in_order(random_head->second, records)},
      {"trees", by_trees},
      {"blend (pretrained)", in_order(full.by_record, records)}};
  nlohmann::json& out = results["language_model"][name];
  out["metric"] = metric_name;
  out["records"] = records.size();
  std::string md = "\n#### " + name + ": the heart language model beside the trees\n\n" +
                   std::to_string(records.size()) + " records, " + metric_name +
                   "; against the trees, paired by record (95 %):\n\n| | " + metric_name +
                   " (95 % CI) | minus the trees (95 % CI) |\n|---|---|---|\n";
  const eval::Confusion pooled_trees = eval::pooled(by_trees, full.classes.size());
  for (const auto& [row, per_record] : rows) {
    const eval::Confusion all = eval::pooled(per_record, full.classes.size());
    const auto ci = eval::bootstrap_by_record(per_record, metric);
    nlohmann::json& r = out["rows"][row];
    r = {{"value", metric(all)}, {"ci95", {ci.low, ci.high}}};
    char text[200];
    std::snprintf(text, sizeof(text), "| %s | %.3f (%.3f-%.3f) |", row.c_str(), metric(all), ci.low,
                  ci.high);
    md += text;
    if (row == "trees") {
      md += " |\n";
      continue;
    }
    const auto d = eval::bootstrap_difference_by_record(per_record, by_trees, metric);
    const double difference = metric(all) - metric(pooled_trees);
    r["minus_trees"] = {{"value", difference}, {"ci95", {d.low, d.high}}};
    std::snprintf(text, sizeof(text), " %+.3f (%+.3f to %+.3f) |\n", difference, d.low, d.high);
    md += text;
  }
  return md;
}

// "0.812 (-0.034: -0.061 to -0.010)"; n/a where a figure is undefined (a class never predicted).
std::string f1_cell(double f1, double difference, const eval::Interval& ci) {
  if (std::isnan(difference)) return eval::score_text(f1) + " (n/a)";
  char text[96];
  if (std::isnan(ci.low))
    std::snprintf(text, sizeof(text), "%.3f (%+.3f)", f1, difference);
  else
    std::snprintf(text, sizeof(text), "%.3f (%+.3f: %+.3f to %+.3f)", f1, difference, ci.low,
                  ci.high);
  return text;
}

}  // namespace

std::string class_f1_differences(const std::vector<std::string>& classes,
                                 const std::vector<std::pair<std::string, RecordMatrices>>& rows,
                                 const std::pair<std::string, RecordMatrices>& reference,
                                 nlohmann::json& out) {
  const eval::Confusion reference_pooled = eval::pooled(reference.second, classes.size());
  // The classes the records hold (every row is scored on the same items).
  std::vector<size_t> held;
  for (size_t c = 0; c < classes.size(); ++c)
    if (eval::class_scores(reference_pooled, c).support > 0) held.push_back(c);
  std::string md = "\n| F1 by class |";
  for (const size_t c : held) md += " " + classes[c] + " |";
  md += "\n|---|";
  for (size_t k = 0; k < held.size(); ++k) md += "---|";
  md += "\n| " + reference.first + " |";
  for (const size_t c : held)
    md += " " + eval::score_text(eval::class_scores(reference_pooled, c).f1) + " |";
  const std::string minus = "minus_" + reference.first;
  for (const auto& [row, per_record] : rows) {
    const eval::Confusion m = eval::pooled(per_record, classes.size());
    md += "\n| " + row + " |";
    for (const size_t c : held) {
      const auto f1 = [c](const eval::Confusion& x) { return eval::class_scores(x, c).f1; };
      const double difference = f1(m) - f1(reference_pooled);
      const auto ci = eval::bootstrap_difference_by_record(per_record, reference.second, f1);
      out[row][classes[c]] = {{"f1", f1(m)},
                              {minus, {{"value", difference}, {"ci95", {ci.low, ci.high}}}}};
      md += " " + f1_cell(f1(m), difference, ci) + " |";
    }
  }
  return md + "\n";
}

// Pretrained against random weights: the models themselves and, for blends, each part. A blend
// or part that scores every record the same from both does not read the backbone (the boosted
// trees; a blend that is the trees alone) and is left out, and named.
std::string pretraining_comparisons(const ScoredModels& scored, nlohmann::json& results) {
  std::string md, language_model, same;
  for (const auto& [dataset, models] : scored)
    for (const auto& [label, scratch] : models) {
      const size_t at = label.find("backbone=scratch");
      if (at == std::string::npos) continue;
      const std::string full_label = label.substr(0, at) + "backbone=full" +
                                     label.substr(at + std::string("backbone=scratch").size());
      const auto full = models.find(full_label);
      if (full == models.end()) continue;
      const std::string name = dataset + " [" + full_label + "]";
      const auto row = [&](const std::string& what, const auto& a, const auto& b) {
        if (what != "model" && a == b)
          same += (same.empty() ? "" : "; ") + name + ": " + what;
        else
          md += comparison_row(dataset, full_label, label, what, scratch.classes, a, b, results);
      };
      row(scratch.parts_by_record.empty() ? "model" : "blend", full->second.by_record,
          scratch.by_record);
      for (const auto& [part, by_record] : full->second.parts_by_record)
        if (auto it = scratch.parts_by_record.find(part); it != scratch.parts_by_record.end())
          row(part + " alone", by_record, it->second);
      language_model += language_model_table(name, full->second, scratch, results);
    }
  if (md.empty() && language_model.empty()) return "";
  return "### Pretrained against random weights\n\nThe same head and fine-tuning from the "
         "pretrained backbone and from random weights, on the same items: the model and, for a "
         "blend, each part; the interval resamples the records both scored, the same draw for "
         "both (paired), so it is narrower than the two models' own intervals side by side. "
         "Always answering the majority class (named) is scored the same way." +
         (same.empty() ? std::string()
                       : " The same on every record from both backbones (they do not read it), "
                         "so not shown: " +
                             same + ".") +
         "\n\n| dataset | pretrained model | scored | metric | pretrained | random weights | "
         "always | pretrained - random (95 % CI) | verdict |\n|---|---|---|---|---|---|---|---|"
         "---|\n" +
         md + language_model + "\n";
}

}  // namespace hlm
