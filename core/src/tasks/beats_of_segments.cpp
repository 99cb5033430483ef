// Segments scored beat by beat (see beats_of_segments.h).
#include "tasks/beats_of_segments.h"

#include <algorithm>

#include "hlm/errors.h"

namespace hlm {

std::vector<ScoredItem> beats_of_segments(const std::vector<ScoredItem>& segments,
                                          const BeatTruth& truth_of) {
  size_t beats = 0;
  for (const ScoredItem& s : segments) beats += size_t(std::max<int64_t>(0, s.length));
  std::vector<ScoredItem> out;
  out.reserve(beats);
  for (const ScoredItem& s : segments)
    for (int64_t j = 0; j < s.length; ++j) {
      const uint64_t beat = s.key + uint64_t(j);
      const int truth = truth_of(s.record, beat);
      if (truth < 0) continue;
      ScoredItem item;
      item.key = beat;
      item.record = s.record;
      item.truth = truth;
      item.probs = s.probs;
      out.push_back(std::move(item));
    }
  std::sort(out.begin(), out.end(),
            [](const ScoredItem& a, const ScoredItem& b) { return a.key < b.key; });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].key == out[i - 1].key)
      throw InternalError("beats_of_segments: beat {} lies in two segments", out[i].key);
  return out;
}

}  // namespace hlm
