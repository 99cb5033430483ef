// Segment labels (see segment_labels.h).
#include "tasks/segment_labels.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <set>

#include "hlm/errors.h"

namespace hlm {

std::map<std::string, RecordLabels> read_record_labels(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DataError("{}: cannot be read; run the tokenize stage again", path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw DataError("{}: not JSON ({}); run the tokenize stage again", path, e.what());
  }
  return labels_from_json(j, path);
}

std::vector<std::string> segment_classes(const std::string& task,
                                         const std::vector<std::string>& classes,
                                         const std::map<std::string, RecordLabels>& labels) {
  if (task == "af") return {"non-AF", "AF"};
  if (!classes.empty()) return classes;
  std::set<std::string> found;
  for (const auto& [name, l] : labels)
    if (!l.label.empty()) found.insert(l.label);
  return {found.begin(), found.end()};
}

SegmentLabeler segment_labeler(const std::string& task, const std::vector<std::string>& classes,
                               const TokenStore& store,
                               const std::map<std::string, RecordLabels>& labels) {
  // One entry per store record: its labels, or none.
  auto of_record = std::make_shared<std::vector<const RecordLabels*>>(store.record_count());
  for (size_t r = 0; r < store.record_count(); ++r) {
    const auto it = labels.find(store.record(r).name);
    (*of_record)[r] = it == labels.end() ? nullptr : &it->second;
  }
  if (task == "af")
    return [of_record](size_t r, uint64_t first, int64_t length) {
      const RecordLabels* l = (*of_record)[r];
      if (!l || !l->rhythm_annotated) return -1;
      int64_t in_af = 0;
      const uint64_t end = first + uint64_t(length);
      for (const auto& [a, b] : l->af)
        in_af +=
            int64_t(std::max<int64_t>(0, int64_t(std::min(b, end)) - int64_t(std::max(a, first))));
      return 2 * in_af >= length ? 1 : 0;
    };
  return [of_record, classes](size_t r, uint64_t, int64_t) {
    const RecordLabels* l = (*of_record)[r];
    if (!l) return -1;
    const auto it = std::find(classes.begin(), classes.end(), l->label);
    return it == classes.end() ? -1 : int(it - classes.begin());
  };
}

}  // namespace hlm
