// What evaluate reports of models side by side: the pretrained backbone against random weights
// (each model with backbone=scratch beside the same model with backbone=full, on each
// dataset), and for blends the heart language model's place beside the trees: the head from
// each backbone, the trees and the blend on the same records, each against the trees with a
// paired interval.
#pragma once
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "eval/classification_metrics.h"

namespace hlm {

// The figure models are compared by: the Challenge 2017 score when the classes include N, A
// and O, else macro F1.
std::pair<std::string, std::function<double(const eval::Confusion&)>> headline_metric(
    const std::vector<std::string>& classes);

// What one model scored on one dataset, record by record: the model itself and, for a blend,
// each of its parts alone.
struct ScoredModel {
  std::vector<std::string> classes;
  std::map<std::string, eval::Confusion> by_record;
  std::map<std::string, std::map<std::string, eval::Confusion>> parts_by_record;  // [part]
};
using ScoredModels = std::map<std::string, std::map<std::string, ScoredModel>>;  // [dataset][label]

// Every backbone=scratch model beside its backbone=full twin, on each dataset: the models and
// each part of a blend that reads the backbone, as differences with paired intervals
// (results["comparisons"]); and for blends of a head and trees, the four side by side
// (results["language_model"]). Returns the markdown (empty without such pairs).
std::string pretraining_comparisons(const ScoredModels& scored, nlohmann::json& results);

// Records' confusion matrices, in one record order shared by every row compared.
using RecordMatrices = std::vector<eval::Confusion>;

// Each class's F1 of `rows` beside the reference's (`reference`: its name and matrices), each
// minus the reference's with an interval paired by record: a model can match another on the
// headline through one rare class while trailing on a frequent one. Only the classes the records
// hold. Adds out[row][class] = {f1, minus_<reference>: {value, ci95}}; returns the markdown
// table.
std::string class_f1_differences(const std::vector<std::string>& classes,
                                 const std::vector<std::pair<std::string, RecordMatrices>>& rows,
                                 const std::pair<std::string, RecordMatrices>& reference,
                                 nlohmann::json& out);

}  // namespace hlm
