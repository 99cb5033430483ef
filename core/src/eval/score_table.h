// The scores of a classifier on one dataset as report.md shows them and results.json keeps
// them: accuracy and macro F1 with 95 % intervals from resampling records, the majority-class
// baseline beside them with the accuracy's paired difference from it, per-class Se, +P, specificity
// and F1 (Se and +P with intervals), and the confusion matrix.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/classification_metrics.h"

namespace hlm::eval {

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

// A confusion matrix as results.json keeps it: one array per reference class, one count per
// predicted class.
nlohmann::json confusion_rows(const Confusion& m);

}  // namespace hlm::eval
