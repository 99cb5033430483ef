// A record summarised as one row of numbers, for a model that reads records whole (the boosted
// trees of tasks/boosted_trees.h): the per-beat inputs a segment head reads, each described by
// its distribution over the record's beats. A segment head sees segment_beats beats at a time
// and pools their means; one premature beat in a two-minute record, or a record whose rhythm
// changes halfway, shows in the record's quantiles and extremes instead.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "hlm/token_store.h"
#include "tasks/boosted_trees.h"
#include "tasks/head_options.h"

namespace hlm {

// Which inputs are summarised follows the head's options: the RR features with rr_features,
// each beat's rhythm against its record with record_rhythm_features, the store's descriptors
// (standardised as options say) with descriptors. Each one gives its mean, standard deviation,
// minimum, 10th, 25th, 50th, 75th and 90th percentile and maximum over the record's beats; the
// first beat is left out of the RR-based ones (its interval before is unknown). With RR
// features come the quantiles of the change between successive intervals (the irregularity of
// atrial fibrillation) and the log of the record's beat count.
using RecordStatistics = TreeRows;  // one row per record

// Rows in the order of `records` (store record indices). ConfigError when the options select
// no input to summarise.
RecordStatistics record_statistics(const TokenStore& store, const std::vector<size_t>& records,
                                   const HeadOptions& options);

}  // namespace hlm
