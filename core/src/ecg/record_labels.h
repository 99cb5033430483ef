// What a record says about its beats beyond their classes, for segment and record tasks: the
// stretches of atrial fibrillation marked by its rhythm annotations (as beat ranges of the
// token store), and its own class where the dataset gives one (Challenge 2017: N, A, O, ~).
// The tokenize stage writes these for every record (record_labels.json) beside the store.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hlm/ecg.h"

namespace hlm {

struct RecordLabels {
  std::string label;              // the record's class, or empty
  bool rhythm_annotated = false;  // it has rhythm annotations: AF and non-AF are both known
  std::vector<std::pair<uint64_t, uint64_t>> af;  // [first beat, end beat) in AF, in order
};

// From the record's annotations: a rhythm change (code 28) whose aux starts "(AFIB" opens AF
// until the next rhythm change. Beats are placed by their sample positions.
RecordLabels labels_of(const Record& record, const std::vector<int64_t>& beat_positions);

// 1 for each beat of a record of `beats` beats in AF, else 0.
std::vector<uint8_t> af_flags(const RecordLabels& labels, uint64_t beats);

nlohmann::json to_json(const std::map<std::string, RecordLabels>& labels);
// DataError naming `source` when the JSON is not what to_json writes.
std::map<std::string, RecordLabels> labels_from_json(const nlohmann::json& j,
                                                     const std::string& source);

}  // namespace hlm
