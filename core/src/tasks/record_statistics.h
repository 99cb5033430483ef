// A record summarised as one row of numbers, for a model that reads records whole (the boosted
// trees of tasks/boosted_trees.h): the per-beat inputs a segment head reads, each described by
// its distribution over the record's beats. A segment head sees segment_beats beats at a time
// and pools their means; one premature beat in a two-minute record, or a record whose rhythm
// changes halfway, shows in the record's quantiles and extremes instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/token_store.h"
#include "tasks/boosted_trees.h"
#include "tasks/head_options.h"
#include "tasks/tree_descriptor_columns.h"

namespace hlm {

// Which inputs are summarised follows the head's options: the RR features with rr_features,
// each beat's rhythm against its record with record_rhythm_features, the store's descriptors
// (standardised as options say) with descriptors. Each one gives its mean, standard deviation,
// minimum, 10th, 25th, 50th, 75th and 90th percentile and maximum over the record's beats; the
// first beat is left out of the RR-based ones (its interval before is unknown). With RR
// features come the quantiles of the change between successive intervals (the irregularity of
// atrial fibrillation) and the log of the record's beat count; with rr_pattern_features the same
// quantiles of each interval's smallest change against the three before it (whether the rhythm
// repeats, rr_pattern_changes in hlm/dsp/rr_features.h). Last come the store descriptors
// of `medians` (finetune's trees_descriptors), each by its median over the record's beats
// alone, as stored: with beat-vq's shape_descriptors, the record's median beat, point by point.
// A waveform point's spread and extremes over the beats are mostly noise a tree would split
// on, so those descriptors are left out of the nine summaries even when the head reads them.
using RecordStatistics = TreeRows;  // one row per record

// Rows in the order of `records` (store record indices). ConfigError when neither the options
// nor `medians` select an input to summarise; DataError naming the store when it lacks a
// column of `medians`.
RecordStatistics record_statistics(const TokenStore& store, const std::vector<size_t>& records,
                                   const HeadOptions& options,
                                   const StoreDescriptorColumns& medians = {});

// What the trees of a fine-tuning task summarise each row over: a record for task record, a
// segment for the others that summarise (af, segments).
inline const char* statistics_unit(const std::string& task) {
  return task == "record" ? "record" : "segment";
}

// The column of a store descriptor's median over a `unit` (statistics_unit): "NAME record median".
inline std::string store_median_name(const std::string& descriptor, const std::string& unit) {
  return descriptor + " " + unit + " median";
}

// The columns' names of record_statistics (or, with another `unit`, span_statistics), from the
// options alone: what a key that names columns is checked against before any row is made.
std::vector<std::string> record_statistics_names(const HeadOptions& options,
                                                 const StoreDescriptorColumns& medians = {},
                                                 const std::string& unit = "record");

// A stretch of one record's beats: `length` beats from its `first` (0: the record's first).
struct BeatSpan {
  size_t record = 0;
  uint64_t first = 0;
  uint64_t length = 0;
};

// The same statistics over stretches of records (task af's segments), one row per span in
// order, with the same columns as record_statistics: a stretch is summarised as a record would
// be. Only a span starting at its record's first beat leaves that beat out of the RR-based
// inputs; the change between successive intervals and the pattern change are taken within
// the span, as for a record. `unit` names a span in the medians' columns ("NAME segment
// median"; record_statistics: "record"). Same errors as record_statistics.
TreeRows span_statistics(const TokenStore& store, const std::vector<BeatSpan>& spans,
                         const HeadOptions& options, const StoreDescriptorColumns& medians = {},
                         const std::string& unit = "segment");

}  // namespace hlm
