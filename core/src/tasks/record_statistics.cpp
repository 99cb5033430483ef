// A record's statistics (see record_statistics.h).
#include "tasks/record_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "tasks/beat_features.h"

namespace hlm {
namespace {

constexpr const char* kSummaryNames[] = {"mean", "sd",  "min", "p10", "p25",
                                         "p50",  "p75", "p90", "max"};
constexpr double kSummaryQuantiles[] = {0.10, 0.25, 0.50, 0.75, 0.90};
constexpr double kChangeQuantiles[] = {0.25, 0.50, 0.75, 0.90};

// Linear interpolation between the closest ranks (numpy's default), of sorted values.
float quantile(const std::vector<float>& sorted, double q) {
  const double at = q * double(sorted.size() - 1);
  const size_t below = size_t(at);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return float(sorted[below] + (at - double(below)) * (sorted[above] - sorted[below]));
}

// Appends the summaries of kSummaryNames, in order; zeros when there are no values.
void summarise(std::vector<float> values, std::vector<float>& row) {
  if (values.empty()) {
    row.insert(row.end(), std::size(kSummaryNames), 0.0f);
    return;
  }
  double sum = 0.0, sum_sq = 0.0;
  for (float v : values) sum += v, sum_sq += double(v) * v;
  const double mean = sum / double(values.size());
  std::sort(values.begin(), values.end());
  row.push_back(float(mean));
  row.push_back(float(std::sqrt(std::max(0.0, sum_sq / double(values.size()) - mean * mean))));
  row.push_back(values.front());
  for (double q : kSummaryQuantiles) row.push_back(quantile(values, q));
  row.push_back(values.back());
}

// One per-beat input of the store (`width` values per beat, beat-major), to summarise column
// by column; `skip_first`: the record's first beat is left out.
struct BeatInput {
  std::vector<float> values;
  size_t width = 0;
  bool skip_first = false;
};

// The head's descriptors summarised by the nine statistics: all but those of `medians`, which
// their median stands for.
std::vector<size_t> summarised_descriptors(const HeadOptions& options,
                                           const StoreDescriptorColumns& medians) {
  std::vector<size_t> out;
  if (!options.descriptors) return out;
  const std::vector<size_t> columns =
      head_descriptor_columns(options, descriptor_input_names(options).size());
  for (size_t j = 0; j < columns.size(); ++j)
    if (std::find(medians.columns.begin(), medians.columns.end(), columns[j]) ==
        medians.columns.end())
      out.push_back(j);
  return out;
}

// |log(RR / RR before)| of each beat that has two known intervals, the clamp as rr_features'.
std::vector<float> successive_changes(const float* rr, size_t beats) {
  std::vector<float> out;
  for (size_t b = 2; b < beats; ++b)
    out.push_back(
        std::fabs(std::log(std::clamp(rr[b], 0.15f, 3.0f) / std::clamp(rr[b - 1], 0.15f, 3.0f))));
  return out;
}

// Appends the kChangeQuantiles of `changes`, then their mean; zeros when there are none.
void append_change_summaries(std::vector<float> changes, std::vector<float>& row) {
  double sum = 0.0;
  for (float c : changes) sum += c;
  std::sort(changes.begin(), changes.end());
  for (double q : kChangeQuantiles) row.push_back(changes.empty() ? 0.0f : quantile(changes, q));
  row.push_back(changes.empty() ? 0.0f : float(sum / double(changes.size())));
}

}  // namespace

std::vector<std::string> record_statistics_names(const HeadOptions& options,
                                                 const StoreDescriptorColumns& medians,
                                                 const std::string& unit) {
  // The summarised inputs in the order span_statistics reads them.
  std::vector<std::string> inputs;
  if (options.rr_features)
    inputs.insert(inputs.end(), std::begin(kRrFeatureNames), std::end(kRrFeatureNames));
  if (options.record_rhythm_features)
    inputs.insert(inputs.end(), std::begin(kRecordRhythmFeatureNames),
                  std::end(kRecordRhythmFeatureNames));
  const std::vector<std::string> descriptors = descriptor_input_names(options);
  for (size_t j : summarised_descriptors(options, medians)) inputs.push_back(descriptors[j]);
  std::vector<std::string> out;
  for (const auto& name : inputs)
    for (const char* summary : kSummaryNames) out.push_back(name + " " + summary);
  if (options.rr_features) {
    for (double q : kChangeQuantiles)
      out.push_back("|log(RR / RR before)| p" + std::to_string(int(q * 100)));
    out.push_back("|log(RR / RR before)| mean");
    out.push_back("log(beats)");
  }
  if (options.rr_pattern_features) {
    const std::string smallest =
        "smallest |log(RR / RR k before)|, k <= " + std::to_string(kRrPatternLags) + ", ";
    for (double q : kChangeQuantiles) out.push_back(smallest + "p" + std::to_string(int(q * 100)));
    out.push_back(smallest + "mean");
  }
  for (size_t j = 0; j < medians.columns.size(); ++j)
    out.push_back(store_median_name(medians.name(j), unit));
  return out;
}

RecordStatistics record_statistics(const TokenStore& store, const std::vector<size_t>& records,
                                   const HeadOptions& options,
                                   const StoreDescriptorColumns& medians) {
  std::vector<BeatSpan> spans;
  spans.reserve(records.size());
  for (size_t r : records) spans.push_back({r, 0, store.record(r).length});
  return span_statistics(store, spans, options, medians, "record");
}

TreeRows span_statistics(const TokenStore& store, const std::vector<BeatSpan>& spans,
                         const HeadOptions& options, const StoreDescriptorColumns& medians,
                         const std::string& unit) {
  expect_tree_descriptors(store, medians);
  std::vector<BeatInput> inputs;
  if (options.rr_features)
    inputs.push_back({store_rr_features(store, true), size_t(kRrFeatureCount), true});
  if (options.record_rhythm_features) {
    BeatInput rhythm{std::vector<float>(store.token_count() * kRecordRhythmFeatureCount),
                     size_t(kRecordRhythmFeatureCount), true};
    for (size_t r = 0; r < store.record_count(); ++r) {
      const auto rec = store.record(r);
      const auto values = record_rhythm_features(store.rr_seconds() + rec.offset, rec.length);
      std::copy(values.begin(), values.end(),
                rhythm.values.begin() + ptrdiff_t(rec.offset * kRecordRhythmFeatureCount));
    }
    inputs.push_back(std::move(rhythm));
  }
  if (const auto summarised = summarised_descriptors(options, medians); !summarised.empty()) {
    const size_t k = size_t(descriptor_inputs(options));
    const std::vector<float> all = store_descriptors(store, options);
    BeatInput descriptors{{}, summarised.size(), false};
    descriptors.values.reserve(store.token_count() * summarised.size());
    for (size_t b = 0; b < store.token_count(); ++b)
      for (size_t j : summarised) descriptors.values.push_back(all[b * k + j]);
    inputs.push_back(std::move(descriptors));
  }
  if (inputs.empty() && medians.columns.empty())
    throw ConfigError(
        "record statistics need per-beat inputs to summarise: set rr_features, "
        "record_rhythm_features or descriptors");

  TreeRows out;
  out.names = record_statistics_names(options, medians, unit);

  std::vector<float> row;
  for (const BeatSpan& span : spans) {
    const auto rec = store.record(span.record);
    if (span.first + span.length > rec.length)
      throw InternalError("a span of beats {}..{} runs past record {} ({} beats)", span.first,
                          span.first + span.length, rec.name, rec.length);
    const uint64_t offset = rec.offset + span.first, length = span.length;
    row.clear();
    for (const auto& input : inputs)
      for (size_t j = 0; j < input.width; ++j) {
        std::vector<float> column;
        for (size_t b = input.skip_first && span.first == 0 ? 1 : 0; b < length; ++b)
          column.push_back(input.values[(offset + b) * input.width + j]);
        summarise(std::move(column), row);
      }
    if (options.rr_features) {
      append_change_summaries(successive_changes(store.rr_seconds() + offset, length), row);
      row.push_back(std::log(float(std::max<uint64_t>(1, length))));
    }
    if (options.rr_pattern_features) {
      std::vector<float> changes = rr_pattern_changes(store.rr_seconds() + offset, length);
      // Its first two beats have no pattern to repeat (0).
      changes.erase(changes.begin(),
                    changes.begin() + ptrdiff_t(std::min<size_t>(2, changes.size())));
      append_change_summaries(std::move(changes), row);
    }
    for (size_t column : medians.columns) {
      std::vector<float> values;
      for (size_t b = 0; b < length; ++b)
        if (const float v = store.descriptors()[(offset + b) * store.descriptor_count() + column];
            std::isfinite(v))
          values.push_back(v);
      std::sort(values.begin(), values.end());
      // No value: missing, which the trees route on their own (0 is a typical value here).
      row.push_back(values.empty() ? std::numeric_limits<float>::quiet_NaN()
                                   : quantile(values, 0.5));
    }
    out.values.insert(out.values.end(), row.begin(), row.end());
  }
  return out;
}

}  // namespace hlm
