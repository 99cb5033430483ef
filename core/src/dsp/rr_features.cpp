// RR features of each beat (see rr_features.h).
#include "hlm/dsp/rr_features.h"

#include <algorithm>
#include <cmath>

namespace hlm {

namespace {

// rr[i]: the interval before beat i, clamped; the first beat borrows the one after it.
// Needs beats >= 2.
std::vector<double> clamped_intervals(const float* rr_seconds, size_t beats) {
  std::vector<double> rr(beats);
  for (size_t i = 0; i < beats; ++i)
    rr[i] = std::clamp(double(rr_seconds[i == 0 ? 1 : i]), 0.15, 3.0);
  return rr;
}

// Beats [first, last) of beat i's neighbourhood: kLocalRrBeats either side, within the record.
struct Neighbourhood {
  size_t first, last;
};
Neighbourhood neighbourhood(size_t i, size_t beats) {
  return {i >= size_t(kLocalRrBeats) ? i - kLocalRrBeats : 0,
          std::min(beats, i + kLocalRrBeats + 1)};
}

// change[i]: |log(rr[i] / rr[i-1])| for i >= 2, 0 before. rr[0] is a copy of rr[1], so the
// first real change is that of beat 2.
std::vector<double> successive_changes(const std::vector<double>& rr) {
  std::vector<double> change(rr.size(), 0.0);
  for (size_t i = 2; i < rr.size(); ++i) change[i] = std::fabs(std::log(rr[i] / rr[i - 1]));
  return change;
}

// The beats around beat i that describe its rhythm context: [first, last) spans
// kRhythmContextBeats either side within the record, and `around(j)` leaves out those within
// kRhythmContextOwn of the beat (its own intervals and changes).
struct RhythmContext {
  size_t i, first, last;
  bool around(size_t j) const { return j + kRhythmContextOwn < i || j > i + kRhythmContextOwn; }
};
RhythmContext rhythm_context(size_t i, size_t beats) {
  return {i, i >= size_t(kRhythmContextBeats) ? i - kRhythmContextBeats : 0,
          std::min(beats, i + kRhythmContextBeats + 1)};
}

float clamp_log(double x) { return float(std::clamp(std::log(x), -2.0, 2.0)); }

// Of a non-empty list; for an even count the mean of the two middle values.
double median(std::vector<double> values) {
  const auto mid = values.begin() + ptrdiff_t(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(values.begin(), mid)) / 2.0;
}

}  // namespace

std::vector<float> rr_features(const float* rr_seconds, size_t beats) {
  std::vector<float> out(beats * kRrFeatureCount, 0.0f);
  if (beats < 2) return out;  // one beat has no interval: all features 0 (the typical value)
  const std::vector<double> rr = clamped_intervals(rr_seconds, beats);
  // Prefix sums give each beat's local mean in O(1).
  std::vector<double> prefix(beats + 1, 0.0);
  for (size_t i = 0; i < beats; ++i) prefix[i + 1] = prefix[i] + rr[i];
  for (size_t i = 0; i < beats; ++i) {
    const auto [lo, hi] = neighbourhood(i, beats);
    const double local = (prefix[hi] - prefix[lo]) / double(hi - lo);
    const double after = i + 1 < beats ? rr[i + 1] : rr[i];
    float* f = out.data() + i * kRrFeatureCount;
    f[0] = clamp_log(rr[i] / local);
    f[1] = clamp_log(after / local);
    f[2] = clamp_log(local);
  }
  return out;
}

std::vector<float> record_rhythm_features(const float* rr_seconds, size_t beats) {
  std::vector<float> out(beats * kRecordRhythmFeatureCount, 0.0f);
  if (beats < 2) return out;
  const std::vector<double> rr = clamped_intervals(rr_seconds, beats);
  // The median, not the mean: a record's ectopic beats and pauses barely move it.
  const double typical = median(rr);
  // A record of two beats has no real change (irregularity 0).
  const std::vector<double> change = successive_changes(rr);
  std::vector<double> around;
  for (size_t i = 0; i < beats; ++i) {
    const auto [first, last] = neighbourhood(i, beats);
    // A median, so one premature beat (two or three large changes: early, pause, back)
    // leaves a regular rhythm regular. Changes start at beat 2 (above); last >= 2.
    around.assign(change.begin() + ptrdiff_t(std::max<size_t>(first, 2)),
                  change.begin() + ptrdiff_t(last));
    const double after = i + 1 < beats ? rr[i + 1] : rr[i];
    float* f = out.data() + i * kRecordRhythmFeatureCount;
    f[0] = clamp_log(rr[i] / typical);
    f[1] = clamp_log(after / typical);
    f[2] = around.empty() ? 0.0f : float(std::min(median(around), 2.0));
  }
  return out;
}

std::vector<float> rhythm_context_features(const float* rr_seconds, size_t beats) {
  std::vector<float> out(beats * kRhythmContextFeatureCount, 0.0f);
  if (beats < 3) return out;  // no real change (see record_rhythm_features)
  const std::vector<double> change = successive_changes(clamped_intervals(rr_seconds, beats));
  // A change of 0.1 (about 10 %) between successive intervals: sinus rhythm at rest rarely
  // makes one, atrial fibrillation makes one at most beats.
  constexpr double kLargeChange = 0.1;
  std::vector<double> around;
  for (size_t i = 0; i < beats; ++i) {
    around.clear();
    const RhythmContext context = rhythm_context(i, beats);
    for (size_t j = std::max<size_t>(context.first, 2); j < context.last; ++j)
      if (context.around(j)) around.push_back(change[j]);
    if (around.empty()) continue;
    size_t large = 0;
    for (double c : around) large += c > kLargeChange;
    float* f = out.data() + i * kRhythmContextFeatureCount;
    f[0] = float(std::min(median(around), 2.0));
    f[1] = float(double(large) / double(around.size()));
    std::nth_element(around.begin(), around.begin() + ptrdiff_t(around.size() / 4), around.end());
    f[2] = float(std::min(around[around.size() / 4], 2.0));
  }
  return out;
}

std::vector<float> rr_within_context(const float* rr_seconds, size_t beats) {
  std::vector<float> out(beats * kRrWithinContextCount, 0.0f);
  if (beats < 3) return out;
  const std::vector<double> rr = clamped_intervals(rr_seconds, beats);
  constexpr size_t kFewest = 8;  // a median and quartiles of fewer say little
  std::vector<double> around;
  for (size_t i = 0; i < beats; ++i) {
    around.clear();
    const RhythmContext context = rhythm_context(i, beats);
    // Real intervals only: rr[0] is a copy of rr[1].
    for (size_t j = std::max<size_t>(context.first, 1); j < context.last; ++j)
      if (context.around(j)) around.push_back(std::log(rr[j]));
    if (around.size() < kFewest) continue;
    std::sort(around.begin(), around.end());
    const auto at = [&](double q) { return around[size_t(q * double(around.size() - 1) + 0.5)]; };
    const double centre = at(0.5), spread = std::max(at(0.75) - at(0.25), kRrWithinContextFloor);
    const auto z = [&](size_t j) {
      return float(std::clamp((std::log(rr[j]) - centre) / spread, -10.0, 10.0));
    };
    float* f = out.data() + i * kRrWithinContextCount;
    if (i >= 1) f[0] = z(i);
    if (i + 1 < beats) f[1] = z(i + 1);
  }
  return out;
}

std::vector<float> rr_pattern_changes(const float* rr_seconds, size_t beats) {
  std::vector<float> out(beats, 0.0f);
  if (beats < 3) return out;
  const std::vector<double> rr = clamped_intervals(rr_seconds, beats);
  // Real intervals only: rr[0] is a copy of rr[1], so beat i compares with beats 1 .. i-1.
  for (size_t i = 2; i < beats; ++i) {
    double smallest = 2.0;
    for (size_t k = 1; k <= size_t(kRrPatternLags) && k < i; ++k)
      smallest = std::min(smallest, std::fabs(std::log(rr[i] / rr[i - k])));
    out[i] = float(std::max(smallest, kRrPatternResolution));
  }
  return out;
}

}  // namespace hlm
