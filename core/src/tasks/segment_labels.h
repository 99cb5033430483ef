// The class of a segment of beats, for the segment tasks of finetune and evaluate:
//   af      1 (AF) when at least half of its beats lie in AF episodes of the record's rhythm
//           annotations, else 0; unknown (-1) in records without rhythm annotations.
//   record  the record's own class (its index in `classes`); unknown for a record without
//           one or with a class outside `classes`.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ecg/record_labels.h"
#include "hlm/token_store.h"

namespace hlm {

using SegmentLabeler = std::function<int(size_t record, uint64_t first_beat, int64_t length)>;

// The record_labels.json a tokenize stage wrote (DataError naming it when unreadable).
std::map<std::string, RecordLabels> read_record_labels(const std::string& path);

// The classes of a task: af -> {non-AF, AF}; record -> `classes` if given, else the sorted
// labels of the records.
std::vector<std::string> segment_classes(const std::string& task,
                                         const std::vector<std::string>& classes,
                                         const std::map<std::string, RecordLabels>& labels);

// `labels` must outlive the labeler (it points into them).
SegmentLabeler segment_labeler(const std::string& task, const std::vector<std::string>& classes,
                               const TokenStore& store,
                               const std::map<std::string, RecordLabels>& labels);

}  // namespace hlm
