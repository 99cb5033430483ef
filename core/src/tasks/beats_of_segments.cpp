// Segments scored beat by beat (see beats_of_segments.h).
#include "tasks/beats_of_segments.h"

#include <algorithm>
#include <map>

namespace hlm {

std::vector<ScoredItem> beats_of_segments(const std::vector<ScoredItem>& segments,
                                          const BeatTruth& truth_of) {
  // A record's beats are contiguous in the store, so records in index order give keys in order.
  std::map<size_t, std::vector<const ScoredItem*>> by_record;
  for (const ScoredItem& s : segments)
    if (s.length > 0) by_record[s.record].push_back(&s);
  std::vector<ScoredItem> out;
  std::vector<double> sums;
  std::vector<int> counts;
  for (const auto& [record, held] : by_record) {
    uint64_t first = held.front()->key, end = first;
    for (const ScoredItem* s : held)
      first = std::min(first, s->key), end = std::max(end, s->key + uint64_t(s->length));
    const size_t k = held.front()->probs.size(), span = size_t(end - first);
    sums.assign(span * k, 0.0);
    counts.assign(span, 0);
    for (const ScoredItem* s : held)
      for (int64_t j = 0; j < s->length; ++j) {
        const size_t at = size_t(s->key - first) + size_t(j);
        for (size_t c = 0; c < k; ++c) sums[at * k + c] += s->probs[c];
        ++counts[at];
      }
    for (size_t at = 0; at < span; ++at) {
      if (counts[at] == 0) continue;
      const uint64_t beat = first + at;
      const int truth = truth_of(record, beat);
      if (truth < 0) continue;
      ScoredItem item;
      item.key = beat;
      item.record = record;
      item.truth = truth;
      item.probs.resize(k);
      for (size_t c = 0; c < k; ++c) item.probs[c] = float(sums[at * k + c] / counts[at]);
      out.push_back(std::move(item));
    }
  }
  return out;
}

}  // namespace hlm
