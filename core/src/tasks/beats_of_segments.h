// Task af scored by beat: the unit of the AF detectors that classify each beat from the RR
// intervals around it (Zhou et al. 2015, Petrenas et al. 2015). Every beat of a scored segment
// becomes an item with its own reference class and its segment's probabilities, or, where
// segments overlap, the mean of the probabilities of the segments that hold it: a window of
// beats nearer to one centred on the beat. So a segment that holds an AF onset or offset counts
// its beats on each side of it as they are.
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
// keyed by the beat, with its record, truth_of's class and the mean of the probabilities of
// the segments that hold it; a blend's parts are not carried. In key order.
std::vector<ScoredItem> beats_of_segments(const std::vector<ScoredItem>& segments,
                                          const BeatTruth& truth_of);

}  // namespace hlm
