// Record and rhythm labels (see record_labels.h).
#include "ecg/record_labels.h"

#include <algorithm>

#include "hlm/errors.h"

namespace hlm {

RecordLabels labels_of(const Record& record, const std::vector<int64_t>& beat_positions) {
  RecordLabels out;
  out.label = record.label;
  const auto first_beat_at = [&](int64_t sample) {
    return uint64_t(std::lower_bound(beat_positions.begin(), beat_positions.end(), sample) -
                    beat_positions.begin());
  };
  int64_t af_start = -1;
  for (const Annotation& a : record.annotations) {
    if (a.code != kRhythmChangeCode || a.aux.empty() || a.aux[0] != '(') continue;
    out.rhythm_annotated = true;
    const bool af = a.aux.rfind("(AFIB", 0) == 0;
    if (af && af_start < 0) af_start = a.sample;
    if (!af && af_start >= 0) {
      if (first_beat_at(af_start) < first_beat_at(a.sample))
        out.af.emplace_back(first_beat_at(af_start), first_beat_at(a.sample));
      af_start = -1;
    }
  }
  if (af_start >= 0 && first_beat_at(af_start) < beat_positions.size())
    out.af.emplace_back(first_beat_at(af_start), beat_positions.size());
  return out;
}

std::vector<uint8_t> af_flags(const RecordLabels& labels, uint64_t beats) {
  std::vector<uint8_t> flags(beats, 0);
  for (const auto& [first, end] : labels.af)
    std::fill(flags.begin() + int64_t(std::min(first, beats)),
              flags.begin() + int64_t(std::min(end, beats)), uint8_t(1));
  return flags;
}

nlohmann::json to_json(const std::map<std::string, RecordLabels>& labels) {
  nlohmann::json records = nlohmann::json::object();
  for (const auto& [name, l] : labels)
    records[name] = {{"label", l.label}, {"rhythm_annotated", l.rhythm_annotated}, {"af", l.af}};
  return {{"records", records}};
}

std::map<std::string, RecordLabels> labels_from_json(const nlohmann::json& j,
                                                     const std::string& source) {
  std::map<std::string, RecordLabels> out;
  try {
    for (const auto& [name, r] : j.at("records").items())
      out[name] = {r.at("label").get<std::string>(), r.at("rhythm_annotated").get<bool>(),
                   r.at("af").get<std::vector<std::pair<uint64_t, uint64_t>>>()};
  } catch (const nlohmann::json::exception& e) {
    throw DataError("{}: not a record-labels file ({}); run the tokenize stage again", source,
                    e.what());
  }
  return out;
}

}  // namespace hlm
