// Task af scored by beat: the unit of the AF detectors that classify each beat from the RR
// intervals around it (Zhou et al. 2015, Petrenas et al. 2015). Every beat of a scored segment
// becomes an item with its segment's probabilities and its own reference class, so a segment
// that holds an AF onset or offset counts its beats on each side of it as they are.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "tasks/scored_item.h"

namespace hlm {

// A beat's reference class (store-wide beat index, in the record given); -1: unknown, left out.
using BeatTruth = std::function<int(size_t record, uint64_t beat)>;

// One item per beat of `segments` (items of task af, each spanning `length` beats from `key`),
// keyed by the beat, with the segment's record and probabilities and truth_of's class; a
// blend's parts are not carried. In key order. Throws InternalError when two segments share a
// beat: task af's segments do not overlap, and a beat must count once.
std::vector<ScoredItem> beats_of_segments(const std::vector<ScoredItem>& segments,
                                          const BeatTruth& truth_of);

}  // namespace hlm
