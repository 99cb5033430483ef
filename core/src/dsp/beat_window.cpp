// Fixed-length, mean-free beat windows around R peaks (see hlm/dsp/beat_window.h).
#include "hlm/dsp/beat_window.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "hlm/errors.h"

namespace hlm::dsp {

std::vector<size_t> cut_beat_windows(const float* x, size_t n, double sampling_hz,
                                     const std::vector<int64_t>& r_peaks,
                                     const BeatWindowOptions& options,
                                     std::vector<float>* features) {
  if (options.points < 2 || options.before_seconds < 0 || options.after_seconds < 0 ||
      options.before_seconds + options.after_seconds <= 0)
    throw ConfigError(
        "beat window: points={} before_seconds={:f} after_seconds={:f} "
        "(need points >= 2 and a window of positive length)",
        options.points, options.before_seconds, options.after_seconds);
  const int m = options.points;
  const double start = -options.before_seconds * sampling_hz;
  const double step = (options.before_seconds + options.after_seconds) * sampling_hz / (m - 1);
  std::vector<size_t> kept;
  kept.reserve(r_peaks.size());
  features->reserve(features->size() + r_peaks.size() * size_t(m));  // no regrowth per beat
  std::vector<double> w(m);
  std::vector<size_t> at(m);
  std::vector<double> frac(m);
  // A window spans a few hundred samples, most of them out of cache: those of the beat after
  // next are fetched while this one is cut.
  constexpr size_t kAhead = 2, kLine = 64 / sizeof(float);
  const int64_t span = int64_t(std::ceil(-start + options.after_seconds * sampling_hz)) + 2;
  for (size_t b = 0; b < r_peaks.size(); ++b) {
    if (b + kAhead < r_peaks.size()) {
      const int64_t from = std::max<int64_t>(0, r_peaks[b + kAhead] + int64_t(std::floor(start)));
      const int64_t to = std::min<int64_t>(int64_t(n), from + span);
      for (int64_t i = from; i < to; i += int64_t(kLine)) __builtin_prefetch(x + i);
    }
    const double first = double(r_peaks[b]) + start;
    const double last = double(r_peaks[b]) + options.after_seconds * sampling_hz;
    // The tolerance keeps a window that ends exactly on the last sample despite rounding.
    if (n == 0 || first < -1e-6 || last > double(n - 1) + 1e-6) continue;
    if (n == 1) {
      std::fill(w.begin(), w.end(), double(x[0]));
    } else {
      // Where each point lies (a loop that vectorises), then the two samples around it.
      for (int j = 0; j < m; ++j) {
        const double t = first + step * j;
        const size_t i0 = std::min(t > 0.0 ? static_cast<size_t>(t) : 0, n - 2);
        at[j] = i0;
        frac[j] = t - double(i0);
      }
      for (int j = 0; j < m; ++j) {
        const float* p = x + at[j];
        w[j] = p[0] + frac[j] * (double(p[1]) - p[0]);
      }
    }
    double sum = 0.0;
    for (int j = 0; j < m; ++j) sum += w[j];  // in order: the mean's bits do not change
    const double mean = sum / m;
    const size_t from = features->size();
    features->resize(from + size_t(m));
    float* out = features->data() + from;
    for (int j = 0; j < m; ++j) out[j] = static_cast<float>(w[j] - mean);
    kept.push_back(b);
  }
  return kept;
}

}  // namespace hlm::dsp
