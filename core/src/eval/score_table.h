// The scores of a classifier on one dataset as report.md shows them and results.json keeps
// them: accuracy and macro F1 with 95 % intervals from resampling records, the majority-class
// baseline beside them with the accuracy's paired difference from it, per-class Se, +P, specificity
// and F1 (Se and +P with intervals), and the confusion matrix.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/classification_metrics.h"
#include "eval/sensitivity_at.h"

namespace hlm::eval {

// A score as the tables print it: three decimals, "n/a" where it has no denominator (NaN).
std::string score_text(double v);

// per_record: one matrix per record (pooled for the point estimates, resampled for the
// intervals). Fills `results` ({"accuracy", "macro_f1", "ci95", "majority_class",
// "majority_baseline", "accuracy_over_baseline": {"value", "ci95"} (a paired bootstrap),
// "beats", "records", "classes": {C: {...}}, "confusion"}) and returns the markdown.
std::string score_table(const std::vector<Confusion>& per_record,
                        const std::vector<std::string>& class_names, nlohmann::json& results);

// When class_names hold the AAMI beat classes (N, S, V and F; Q optional), the V and S
// statistics as EC57 counts them (ectopic_scores in eval/classification_metrics.h): results["ec57"]
// = {"V": {...}, "S": {...}}, each with se, ppv, fpr and intervals for se and ppv from resampling
// records; returns the markdown. Otherwise adds nothing and returns "".
std::string ec57_table(const std::vector<Confusion>& per_record,
                       const std::vector<std::string>& class_names, nlohmann::json& results);

// The reference classes EC57 does not count against `ectopic` when they are called it: F and Q
// for V, Q for S (Q when there is one), when class_names hold the AAMI beat classes (N, S, V
// and F; Q optional). nullopt when EC57 does not apply (other classes, or `ectopic` not S or V).
std::optional<std::vector<size_t>> ec57_excused(const std::vector<std::string>& class_names,
                                                const std::string& ectopic);

// A published method's operating point for one class: its sensitivity and the figure held
// beside it (+P or specificity), as fractions; `dataset` names the one dataset it stands
// beside (empty: every dataset scored).
struct PublishedPoint {
  std::string source, class_name;
  double se = 0;
  Held held = Held::kPpv;
  double held_value = 0;
  std::string dataset;
};

// For each published point, the highest Se this run's curve reaches with the point's held
// figure at or above the published one (sensitivity_at; S and V of the AAMI classes counted as
// EC57 does), with its interval by record, the +P, specificity, factor and accuracy there:
// results["at_published_points"] = [{"source", "class", "held": "ppv" or "specificity",
// "published_se", "published_held", "reached", "se", "se_ci95", "ppv", "specificity",
// "factor", "accuracy", "count": "EC57" or "one against the rest"}]. Returns the markdown (""
// without points). Throws ConfigError naming the source and the class when class_names lack it
// (the evaluate stage checks that before scoring, naming the workflow file).
std::string published_points_table(const ProbabilityItems& items,
                                   const std::vector<std::string>& class_names,
                                   const std::vector<PublishedPoint>& points,
                                   nlohmann::json& results);

// A confusion matrix as results.json keeps it: one array per reference class, one count per
// predicted class.
nlohmann::json confusion_rows(const Confusion& m);

}  // namespace hlm::eval
